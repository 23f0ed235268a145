"""Covering a config space with few configs: the kernel families' tests share it."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any


def one_per_field_value(space: Sequence[Any], default: Any) -> list[Any]:
    """The default, then for each value of each field (in field order, values sorted) the
    first config of space that has it, unless a config chosen already does."""
    chosen = [default]
    for field in dataclasses.fields(default):
        for value in sorted({getattr(c, field.name) for c in space}):
            if not any(getattr(c, field.name) == value for c in chosen):
                chosen.append(next(c for c in space if getattr(c, field.name) == value))
    return chosen
