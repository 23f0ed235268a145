"""A config choice: the config a layer's pass runs with, who chose it and why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Source = Literal["measured", "model", "heuristic", "autotune"]


@dataclass(frozen=True)
class ConfigChoice:
    """A chosen config, who chose it and why: `measured` (the fastest config timed on this
    very layer, kept with the model), `model` (its prediction), `heuristic`, or `autotune`
    (the fastest of the model's shortlist, timed on the device)."""

    config: Any
    source: Source
    reason: str
