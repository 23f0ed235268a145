"""How choose_config picks a layer's config: "model" (the shipped latency models where they
fit, the default), "heuristic" (the kernels' own rule) or "autotune" (the fitting model's
shortlist timed on the device at a layer's first call of each pass).

The environment variable SPIO_CONFIG_SELECTION sets it for a process without touching its
code; set_selection_mode sets it from Python, as `torch.backends.cudnn.benchmark = True`
does for cuDNN, and wins over the variable until it is given None; choose_config's `mode`
argument wins over both for its one choice. Either is read when a layer's pass is first
chosen: spio.torch keeps each layer's choice, so a change reaches the layers that have not
run yet. All three take a mode in any case, with spaces around it ignored.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

SELECTION_ENV = "SPIO_CONFIG_SELECTION"
SELECTIONS = ("model", "heuristic", "autotune")

#: set_selection_mode's mode, or None where the environment decides. A plain assignment, so
#: threads see one value or the other.
_chosen_mode: str | None = None


def set_selection_mode(mode: str | None) -> None:
    """Pick configs by `mode` from now on in this process ("model", "heuristic" or
    "autotune"), whatever SPIO_CONFIG_SELECTION says; None hands the choice back to it.
    ValueError (another word) and TypeError (not a str) name the modes allowed."""
    global _chosen_mode
    if mode is None:
        _chosen_mode = None
        return
    allowed = f"mode must be one of {', '.join(SELECTIONS)}, or None for {SELECTION_ENV}"
    _chosen_mode = normalized_mode(mode, allowed)


def normalized_mode(mode: object, allowed: str) -> str:
    """mode as SELECTIONS spells it (any case, spaces around it ignored, as the variable is
    read). TypeError for anything but a str, ValueError for another word; each message is
    `allowed` and what was given."""
    if not isinstance(mode, str):
        raise TypeError(f"{allowed}; got {mode!r}")
    normal = mode.strip().lower()
    if normal not in SELECTIONS:
        raise ValueError(f"{allowed}; got {mode!r}")
    return normal


def selection_mode() -> str:
    """set_selection_mode's mode where one is set, else SPIO_CONFIG_SELECTION's value ("model"
    when unset); ValueError names what the variable allows."""
    if _chosen_mode is not None:
        return _chosen_mode
    mode = os.environ.get(SELECTION_ENV, "model").strip().lower() or "model"
    if mode not in SELECTIONS:
        raise ValueError(
            f"{SELECTION_ENV} must be one of {', '.join(SELECTIONS)}; got "
            f"{os.environ[SELECTION_ENV]!r}"
        )
    return mode


def mode_origin() -> str:
    """Where selection_mode's value comes from, for a choice's reason: set_selection_mode or
    the environment variable."""
    if _chosen_mode is not None:
        return f"set_selection_mode({_chosen_mode!r})"
    return f"{SELECTION_ENV}={selection_mode()}"


@contextmanager
def selection_mode_set(mode: str | None) -> Iterator[None]:
    """set_selection_mode(mode) for the body of a with statement (None: nothing changes);
    the mode set before comes back after it."""
    global _chosen_mode
    before = _chosen_mode
    if mode is not None:
        set_selection_mode(mode)
    try:
        yield
    finally:
        _chosen_mode = before
