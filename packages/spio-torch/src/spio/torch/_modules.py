"""nn.Conv2d's grouped 8-channel case run by Spio, and the conversion of a model's layers.

`Conv2dGw8` is an nn.Conv2d (same parameters, same state_dict keys, so checkpoints load
either way) restricted to what spio.functional.conv2d_gw8 computes: C in = C out, groups of
8 channels, stride 1, dilation 1, zero padding. `convert` swaps every such nn.Conv2d of a
model for one, sharing its parameters.

Its weight is kept in channels_last memory, torch's memory format for NHWC training (what
`model.to(memory_format=torch.channels_last)` does to every conv weight). For a C x 8 x R x
S weight that is C x R x S x 8 in memory, the layout Spio's kernels read: a call then reads
the weight in place instead of copying it (a copy kernel and about 10 us of host time per
forward pass), and its gradient is written in the same layout. `.to()`, `.half()`, state
dicts and optimizers keep the layout; `weight.view(...)` needs `reshape` instead, as for any
channels_last weight.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from ._cuda_passes import GROUP_WIDTH
from ._functional import conv2d_gw8

_MAX_KERNEL = 7


def ineligible_because(conv: nn.Module) -> str | None:
    """Why conv cannot become a Conv2dGw8, or None when it can."""
    if type(conv) is not nn.Conv2d:
        return f"a {type(conv).__name__}, not an nn.Conv2d"
    return _unsupported_settings(conv)


def _unsupported_settings(conv: nn.Conv2d) -> str | None:
    c = conv.in_channels
    if conv.out_channels != c:
        return f"{c} in channels and {conv.out_channels} out channels (they must be equal)"
    if c % GROUP_WIDTH or conv.groups != c // GROUP_WIDTH:
        return f"groups = {conv.groups} for {c} channels (needs {GROUP_WIDTH} channels per group)"
    if tuple(conv.stride) != (1, 1) or tuple(conv.dilation) != (1, 1):
        return f"stride {tuple(conv.stride)} and dilation {tuple(conv.dilation)} (needs 1)"
    if conv.padding_mode != "zeros":
        return f"padding_mode {conv.padding_mode!r} (needs 'zeros')"
    r, s = conv.kernel_size
    if not (1 <= r <= _MAX_KERNEL and 1 <= s <= _MAX_KERNEL):
        return f"kernel {r} x {s} (1 to {_MAX_KERNEL} each)"
    if not isinstance(conv.padding, str):
        rows, cols = conv.padding
        if rows > r - 1 or cols > s - 1:
            return f"padding {tuple(conv.padding)} for a {r} x {s} kernel (at most extent - 1)"
    return None


class Conv2dGw8(nn.Conv2d):
    """A grouped nn.Conv2d with 8 channels per group, stride 1, run by Spio's kernels.

    Args:
        channels: input and output channels, a multiple of 8.
        kernel_size: R (and S) from 1 to 7, an int or a pair.
        padding: an int, a pair, "valid" or "same" (nn.Conv2d's forms).
        bias, device, dtype: as nn.Conv2d.

    Under torch.autocast the input and the weight are cast to the autocast dtype, as
    autocast does for nn.Conv2d. The forward pass is spio.functional.conv2d_gw8.
    """

    def __init__(
        self,
        channels: int,
        kernel_size: int | tuple[int, int],
        padding: int | tuple[int, int] | str = 0,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if isinstance(channels, bool) or not isinstance(channels, int) or channels < GROUP_WIDTH:
            raise ValueError(f"channels must be a positive multiple of 8, got {channels!r}")
        if channels % GROUP_WIDTH:
            raise ValueError(f"channels must be a multiple of 8, got {channels}")
        super().__init__(
            channels,
            channels,
            kernel_size,
            padding=padding,
            groups=channels // GROUP_WIDTH,
            bias=bias,
            device=device,
            dtype=dtype,
        )
        reason = _unsupported_settings(self)
        if reason is not None:
            raise ValueError(f"Conv2dGw8 cannot run {reason}")
        _keep_channels_last(self.weight)

    @classmethod
    def from_conv2d(cls, conv: nn.Conv2d) -> Conv2dGw8:
        """A Conv2dGw8 sharing conv's parameters (not its hooks); ValueError says why conv does
        not qualify."""
        reason = ineligible_because(conv)
        if reason is not None:
            raise ValueError(f"this nn.Conv2d cannot become a Conv2dGw8: {reason}")
        padding: Any = conv.padding
        module = cls(
            conv.in_channels, conv.kernel_size, padding, conv.bias is not None, device="meta"
        )
        module.weight = conv.weight  # the same Parameter objects: optimizers keep working
        module.bias = conv.bias
        _keep_channels_last(module.weight)
        module.train(conv.training)
        return module

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        weight = self.weight
        device_type = input.device.type
        if torch.is_autocast_enabled(device_type):
            dtype = torch.get_autocast_dtype(device_type)
            input, weight = input.to(dtype), weight.to(dtype)
        return conv2d_gw8(input, weight, self.bias, padding=self.padding)


def _keep_channels_last(weight: nn.Parameter) -> None:
    """Lay weight out in channels_last memory in place (the same Parameter object, so
    optimizers and the modules sharing it keep working); a no-op where it is already."""
    if not weight.is_contiguous(memory_format=torch.channels_last):
        with torch.no_grad():
            weight.data = weight.data.contiguous(memory_format=torch.channels_last)


def convert(model: nn.Module) -> list[str]:
    """Replace, in place, every nn.Conv2d of model that Spio runs (ineligible_because) with a
    Conv2dGw8 sharing its parameters; return the converted modules' names. The shared weights
    are laid out in channels_last memory (see the module doc)."""
    converted = []
    for name, parent in list(model.named_modules()):
        for child_name, child in list(parent.named_children()):
            if isinstance(child, nn.Conv2d) and ineligible_because(child) is None:
                setattr(parent, child_name, Conv2dGw8.from_conv2d(child))
                converted.append(f"{name}.{child_name}" if name else child_name)
    return converted
