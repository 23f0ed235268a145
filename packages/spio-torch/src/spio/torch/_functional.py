"""spio.functional.conv2d_gw8: the checked entry to the spio::conv2d_gw8 operator (or, in
eager mode on CUDA, to the same passes without the operator machinery: _eager; under
torch.func transforms, to the operators through _conv2d_gw8_func)."""

from __future__ import annotations

from typing import Any

import torch
from spio.kernels.conv2d_gw8 import normalize_padding

from ._checks import check_same_device, check_same_dtype_and_device, check_tensor
from ._conv2d_gw8 import conv2d_gw8_op
from ._conv2d_gw8_func import Conv2dGw8Function
from ._cuda_passes import GROUP_WIDTH, layer_params, layer_plan
from ._eager import conv2d_gw8_eager, runs_eagerly
from ._transforms import under_torch_func


def _padding(padding: Any, kernel_size: tuple[int, int]) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) from an int, a pair, a 4-tuple, "valid" or "same"."""
    if padding == "valid":
        return (0, 0, 0, 0)
    if padding == "same":
        # As torch.nn.functional.conv2d: an even filter's extra row and column go last.
        r, s = kernel_size
        return ((r - 1) // 2, r // 2, (s - 1) // 2, s // 2)
    if isinstance(padding, str):
        raise ValueError(f"padding must be 'valid', 'same' or ints, got {padding!r}")
    return normalize_padding(padding)


def _check(input: Any, weight: Any, bias: Any) -> None:
    check_tensor("input", input, 4)
    check_tensor("weight", weight, 4)
    c = input.shape[1]
    if c % GROUP_WIDTH or c == 0:
        raise ValueError(
            f"input must have a multiple of {GROUP_WIDTH} channels (groups of width 8), got {c}"
        )
    if tuple(weight.shape[:2]) != (c, GROUP_WIDTH):
        raise ValueError(
            f"weight must be {c} x {GROUP_WIDTH} x R x S for {c} channels (out channels x "
            f"channels per group x filter), got shape {tuple(weight.shape)}"
        )
    check_same_dtype_and_device("input", input, "weight", weight)
    if bias is not None:
        if not isinstance(bias, torch.Tensor):
            raise TypeError(f"bias must be a torch.Tensor or None, got {type(bias).__name__}")
        if tuple(bias.shape) != (c,):
            raise ValueError(f"bias must have shape ({c},), got {tuple(bias.shape)}")
        if not bias.is_floating_point():
            raise TypeError(f"bias must be a floating-point tensor, got {bias.dtype}")
        check_same_device("input", input, "bias", bias)


def conv2d_gw8(
    input: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None = None,
    padding: int | tuple[int, ...] | str = 0,
) -> torch.Tensor:
    """Grouped 2-D convolution with 8 channels per group, stride 1, dilation 1.

    The same result as `torch.nn.functional.conv2d(input, weight, bias, padding=padding,
    groups=C // 8)`, with Spio's kernels on CUDA (fp32 accumulation).

    Args:
        input: N x C x H x W, float16 or bfloat16, C a multiple of 8. channels_last memory
            is what the kernels read; other layouts are copied into it first.
        weight: C x 8 x R x S (nn.Conv2d's layout for groups = C / 8), input's dtype,
            R and S from 1 to 7.
        bias: C values of any floating dtype (added in fp32), or None.
        padding: zeros around the input: an int, a pair (rows, columns), a 4-tuple (top,
            bottom, left, right), "valid" (none) or "same" (the output as large as the input);
            each side at most the filter's extent - 1.

    Returns:
        N x C x P x Q in the input's dtype, channels_last memory.

    Its derivatives go to any order, through autograd (create_graph=True: gradient
    penalties) and torch.func. torch.func's transforms and their compositions work on it:
    grad, vjp, jacrev, jvp, jacfwd, hessian, and vmap, which runs a batch of calls as one
    call of the kernels: a batch of inputs with one weight as more images, a batch of weights (model
    ensembles) as more groups, and per-sample weight gradients (`vmap(grad(loss))` over
    single images) as one weight-gradient pass of B x C channels.

    Raises:
        TypeError, ValueError: an argument out of scope; the message names it, what was given
            and what is allowed.
    """
    _check(input, weight, bias)
    kernel_size = (weight.shape[2], weight.shape[3])
    sides = _padding(padding, kernel_size)
    # Both validate the layer (filter sizes, padding ranges, output size) with field-named
    # errors, once per layer.
    has_bias = bias is not None
    if under_torch_func():
        layer_params(input.shape, kernel_size, sides, input.dtype, has_bias)
        output: torch.Tensor = Conv2dGw8Function.apply(input, weight, bias, list(sides))
        return output
    if runs_eagerly(input, weight, bias):
        device = input.get_device()
        plan = layer_plan(input.shape, kernel_size, sides, input.dtype, has_bias, device)
        return conv2d_gw8_eager(input, weight, bias, plan)
    layer_params(input.shape, kernel_size, sides, input.dtype, has_bias)
    return conv2d_gw8_op(input, weight, bias, list(sides))
