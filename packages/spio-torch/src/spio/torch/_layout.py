"""How spio-torch's tensors meet the kernels' memory layouts, without views.

The kernels take device pointers and read memory in a fixed order: activations N x H x W x C
(NHWC), weights C x R x S x 8 (Spio's layout). torch's N x C x H x W tensors in
channels_last memory hold activations in exactly that order, and so do its C x 8 x R x S
weights in channels_last memory. So a tensor in that memory format is handed to a kernel
entry as it is, shape and all: the entry reads its data pointer, never its shape or strides.
No permuted view is built (each costs the host about a microsecond, and a training step
made fourteen of them).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

#: The kernels move 16-byte cells: every array must start on a 16-byte boundary.
_ALIGNMENT = 16
_CHANNELS_LAST = torch.channels_last


def channels_last(tensor: torch.Tensor) -> torch.Tensor:
    """tensor in channels_last memory from a 16-byte boundary: itself where it is so already
    (what the kernels read in place), else a copy."""
    tensor = tensor.contiguous(memory_format=_CHANNELS_LAST)
    if tensor.data_ptr() % _ALIGNMENT:
        tensor = tensor.clone(memory_format=_CHANNELS_LAST)
    return tensor


def is_spio_layout(weight: torch.Tensor) -> bool:
    """Whether weight (C x 8 x R x S) sits in memory as Spio's C x R x S x 8: torch's
    channels_last memory format of a 4-D weight, which `Conv2dGw8` modules keep and
    `model.to(memory_format=torch.channels_last)` gives. The kernels then read it in place."""
    return weight.is_contiguous(memory_format=_CHANNELS_LAST)


def spio_weight(weight: torch.Tensor) -> torch.Tensor:
    """torch's C x 8 x R x S weight with its memory in Spio's C x R x S x 8 order, from a
    16-byte boundary: weight itself where it is in that layout already (is_spio_layout),
    else a copy in channels_last memory. Its shape stays C x 8 x R x S."""
    return channels_last(weight)


def empty_nchw(
    size: Sequence[int], like: torch.Tensor, dtype: torch.dtype | None = None
) -> torch.Tensor:
    """A new N x C x H x W tensor on like's device in channels_last memory (NHWC)."""
    return torch.empty(
        tuple(size), dtype=dtype or like.dtype, device=like.device, memory_format=_CHANNELS_LAST
    )


def from_nhwc(nhwc: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """N x C x H x W in channels_last memory from an N x H x W x C tensor."""
    return nhwc.to(dtype).permute(0, 3, 1, 2).contiguous(memory_format=_CHANNELS_LAST)


def weight_to_torch(
    grad32: torch.Tensor, dtype: torch.dtype, channels_last: bool = False
) -> torch.Tensor:
    """A C x 8 x R x S f32 weight gradient in channels_last memory (Spio's layout, as the
    wgrad kernels write it) in dtype, in one copy kernel: in channels_last memory where
    channels_last, for a weight kept that way, so that autograd accumulates it without
    another copy to match the weight's strides (the copy only casts); else contiguous (the
    copy casts and transposes)."""
    memory_format = _CHANNELS_LAST if channels_last else torch.contiguous_format
    return grad32.to(dtype, memory_format=memory_format)


def bias_gradient(grad_output: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The bias gradient of a conv2d output's gradient: its sum over images, rows and
    columns, accumulated in f32 as the reduction reads the 16-bit values (no f32 copy of
    grad_output: at 128x64x64x64 that copy alone is three times the bytes the sum reads),
    in dtype."""
    return grad_output.sum((0, 2, 3), dtype=torch.float32).to(dtype)


def bias_buffer(grad_output: torch.Tensor) -> torch.Tensor:
    """An f32 tensor for the bias gradient of grad_output's layer (C values), on its device,
    for the wgrad kernels to write."""
    return torch.empty(grad_output.shape[1], dtype=torch.float32, device=grad_output.device)


def bias32(bias: torch.Tensor) -> torch.Tensor:
    """bias as the kernel reads it: contiguous f32 from a 16-byte boundary (copied if not)."""
    if bias.dtype == torch.float32 and bias.is_contiguous() and bias.data_ptr() % _ALIGNMENT == 0:
        return bias
    return bias.to(torch.float32, copy=True)
