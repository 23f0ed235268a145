"""Whether the weight gradients of Spio's layers must be the same bits on every run.

They are by default. set_wgrad_deterministic(False) lets the wgrad kernels add their blocks'
sums into one with atomic adds where that pays (spio-kernels' `wgrad.atomic_config_on`):
no partial sums and no reduction, but the order of the additions, and so the last bits of
the gradient, vary from run to run, as cuDNN's fastest weight-gradient algorithms do.
torch.use_deterministic_algorithms(True) overrides it. No torch import here: spio.torch
exports these, and importing it stays cheap.
"""

from __future__ import annotations

_wgrad_deterministic = True


def set_wgrad_deterministic(deterministic: bool) -> None:
    """True (the default): Spio's weight gradients are the same bits on every run. False:
    they may vary in their last bits, for speed (wgrad with a gradient in the activations'
    dtype 1.02-1.06x where taken, H200), unless torch.use_deterministic_algorithms(True) is
    in force. Read at each backward pass, so it may change between steps."""
    if not isinstance(deterministic, bool):
        raise TypeError(f"deterministic must be a bool, got {deterministic!r}")
    global _wgrad_deterministic
    _wgrad_deterministic = deterministic


def wgrad_is_deterministic() -> bool:
    """Whether the weight gradients of Spio's layers are the same bits on every run now:
    set_wgrad_deterministic(False) was not called, or torch's deterministic algorithms are
    on."""
    if _wgrad_deterministic:
        return True
    import torch

    return torch.are_deterministic_algorithms_enabled()
