"""spio.functional.conv2d_gw8: the checked entry to the spio::conv2d_gw8 operator (or, in
eager mode on CUDA, to the same passes without the operator machinery: _eager; under
torch.func transforms, to the operators through _conv2d_gw8_func)."""

from __future__ import annotations

import torch

from ._checks import check_conv2d_gw8_layer, check_conv2d_gw8_tensors, padding_sides
from ._conv2d_gw8 import conv2d_gw8_op
from ._conv2d_gw8_func import Conv2dGw8Function
from ._cuda_passes import layer_plan
from ._eager import conv2d_gw8_eager, runs_eagerly
from ._transforms import under_torch_func


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
            each side at most the filter's extent - 1. The ints may be any integers
            `operator.index` takes (NumPy's too), not bools.

    Returns:
        N x C x P x Q in the input's dtype, channels_last memory; for an empty batch (N = 0)
        an empty one, whose gradients are empty for the input and zeros for the weight and
        bias, as torch's.

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
    check_conv2d_gw8_tensors(input, weight, bias)
    kernel_size = (weight.shape[2], weight.shape[3])
    sides = padding_sides(padding, kernel_size)
    if under_torch_func():
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
