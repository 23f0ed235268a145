"""spio.functional.conv2d_gw8: the checked entry to the spio::conv2d_gw8 operator (or, in
eager mode on CUDA, to the same passes without the operator machinery: _eager; under
torch.func transforms and forward-mode AD, to the operators through _conv2d_gw8_func)."""

from __future__ import annotations

from typing import Any

import torch
from torch.overrides import handle_torch_function, has_torch_function_variadic

from ._autocast import autocast_enabled, autocast_operands
from ._checks import (
    check_conv2d_gw8_layer,
    check_conv2d_gw8_tensors,
    check_tensor,
    padding_sides,
)
from ._conv2d_gw8 import conv2d_gw8_op
from ._conv2d_gw8_func import Conv2dGw8Function
from ._cuda_passes import layer_plan
from ._eager import conv2d_gw8_eager, runs_eagerly
from ._transforms import under_forward_ad, under_torch_func


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
        input: N x C x H x W, float16 or bfloat16, C a multiple of 8 (or one image,
            C x H x W, as torch's conv2d takes it). channels_last memory is what the kernels
            read; other layouts are copied into it first.
        weight: C x 8 x R x S (nn.Conv2d's layout for groups = C / 8), input's dtype,
            R and S from 1 to 7.
        bias: C values of any floating dtype (added in fp32), or None.
        padding: zeros around the input: an int, a pair (rows, columns), a 4-tuple (top,
            bottom, left, right), "valid" (none) or "same" (the output as large as the input);
            each side at most the filter's extent - 1. The ints may be any integers
            `operator.index` takes (NumPy's too), not bools.

    Returns:
        N x C x P x Q in the input's dtype, channels_last memory (C x P x Q for one image);
        for an empty batch (N = 0) an empty one, whose gradients are empty for the input and
        zeros for the weight and bias, as torch's.

    Under torch.autocast the input and the weight run in the autocast dtype, as torch's
    conv2d does (the bias is added in fp32 either way).

    Its derivatives go to any order, through autograd (create_graph=True: gradient
    penalties) and torch.func. torch.func's transforms and their compositions work on it:
    grad, vjp, jacrev, jvp, jacfwd, hessian, and vmap, which runs a batch of calls as one
    call of the kernels: a batch of inputs with one weight as more images, a batch of weights (model
    ensembles) as more groups, and per-sample weight gradients (`vmap(grad(loss))` over
    single images) as one weight-gradient pass of B x C channels. Forward-mode AD through
    torch.autograd.forward_ad carries the tangents too.

    Raises:
        TypeError, ValueError: an argument out of scope; the message names it, what was given
            and what is allowed.
    """
    # Tracers and tensor subclasses (torch.fx's proxies) take the call as a whole, as for
    # torch.nn.functional's.
    if has_torch_function_variadic(input, weight, bias):
        return handle_torch_function(
            conv2d_gw8, (input, weight, bias), input, weight, bias, padding=padding
        )
    if autocast_enabled():
        input, weight = autocast_operands(input, weight)
    if not isinstance(input, torch.Tensor) or input.dim() != 4:
        return _one_image(input, weight, bias, padding)
    check_conv2d_gw8_tensors(input, weight, bias)
    kernel_size = (weight.shape[2], weight.shape[3])
    sides = padding_sides(padding, kernel_size)
    if under_torch_func() or under_forward_ad():
        check_conv2d_gw8_layer(input.shape, kernel_size, sides)
        output: torch.Tensor = Conv2dGw8Function.apply(input, weight, bias, list(sides))
        return output
    size = input.shape  # (read once: each read makes a torch.Size)
    # An empty batch has no kernel to run: the operators answer it (not a hot path).
    if size[0] and runs_eagerly(input, weight, bias):
        # The plan checks the layer (kernel size, padding, sizes) once per layer.
        device = input.get_device()
        plan = layer_plan(size, kernel_size, sides, input.dtype, bias is not None, device)
        return conv2d_gw8_eager(input, weight, bias, plan)
    check_conv2d_gw8_layer(size, kernel_size, sides)
    return conv2d_gw8_op(input, weight, bias, list(sides))


def _one_image(input: Any, weight: Any, bias: Any, padding: Any) -> torch.Tensor:
    """conv2d_gw8 of a C x H x W input, as a batch of one; the error for any other input
    that is not N x C x H x W."""
    check_tensor("input", input)
    if input.dim() != 3:
        raise ValueError(
            "input must be 4-D (N x C x H x W), or 3-D (C x H x W) for one image, got shape "
            f"{tuple(input.shape)}"
        )
    return conv2d_gw8(input.unsqueeze(0), weight, bias, padding).squeeze(0)
