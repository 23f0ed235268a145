"""Conditions on a config's fields that narrow the configs a run times (the benchmark's
`--where block_p=4,8 --where prefetch=6`).

A sampled campaign draws its configs from the whole space, so a corner of it the latency
models mispredict (short row chunks with a deep ring on the H100, say) gets a few rows among
thousands. Narrowing the space to that corner first lets one campaign time it on many
layers; the benchmark still times each layer's default beside it, so the rows keep the
heuristic's config to measure against.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

_BOOLS = {"true": True, "false": False, "1": True, "0": False}


@dataclasses.dataclass(frozen=True)
class ConfigWhere:
    """Each named field must take one of its values: `fields` maps a field's name to the
    values its text gave (as written, parsed against a config type by `for_config`)."""

    fields: Mapping[str, tuple[str, ...]]

    @classmethod
    def parse(cls, conditions: Iterable[str]) -> ConfigWhere:
        """Conditions of the form FIELD=VALUE[,VALUE...] (a field named twice takes the values
        both name); ValueError naming the condition that is not of that form."""
        fields: dict[str, tuple[str, ...]] = {}
        for text in conditions:
            name, sep, values = text.partition("=")
            name = name.strip()
            parts = tuple(v.strip() for v in values.split(","))
            if not sep or not name.isidentifier() or not all(parts):
                raise ValueError(
                    f"a condition must be FIELD=VALUE[,VALUE...] such as block_p=4,8, got {text!r}"
                )
            fields[name] = tuple(dict.fromkeys((*fields.get(name, ()), *parts)))
        return cls(fields)

    def for_config(self, example: Any, what: str) -> dict[str, frozenset[Any]]:
        """The conditions as typed values for configs of example's type (a dataclass of int and
        bool fields): ValueError naming `what` (the pass, say) and its fields where a field is
        not one of them, or naming the field where a value is not of its type."""
        known = {field.name: getattr(example, field.name) for field in dataclasses.fields(example)}
        typed: dict[str, frozenset[Any]] = {}
        for name, texts in self.fields.items():
            if name not in known:
                raise ValueError(
                    f"{what}'s configs ({type(example).__name__}) have no field {name!r}; "
                    f"they have {', '.join(known)}"
                )
            typed[name] = frozenset(_value(name, text, known[name]) for text in texts)
        return typed

    def select(self, configs: Sequence[Any], what: str) -> list[Any]:
        """The configs whose every named field takes one of its values (in their order)."""
        if not configs:
            return []
        typed = self.for_config(configs[0], what)
        return [c for c in configs if all(getattr(c, f) in v for f, v in typed.items())]

    def __str__(self) -> str:
        return " ".join(f"{name}={','.join(values)}" for name, values in self.fields.items())


def _value(name: str, text: str, example: object) -> object:
    """text as a value of the type example has (bool or int)."""
    if isinstance(example, bool):
        if text.lower() not in _BOOLS:
            raise ValueError(f"{name} takes true or false, got {text!r}")
        return _BOOLS[text.lower()]
    if isinstance(example, int):
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{name} takes integers, got {text!r}") from None
    raise ValueError(f"{name} is a {type(example).__name__} field; conditions take int and bool")
