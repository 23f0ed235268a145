"""Grouped conv2d with group width 8 as PyTorch custom operators (torch.library).

Four operators, one per pass and one for the weight and bias gradients from one pass, each
with a fake (meta) implementation so that torch.compile and other tracers see shapes, dtypes
and strides without running anything:

- spio::conv2d_gw8(input, weight, bias, padding) -> output
- spio::conv2d_gw8_input_grad(grad_output, weight, input_size, padding) -> grad_input
- spio::conv2d_gw8_weight_grad(input, grad_output, kernel_size, padding) -> grad_weight
- spio::conv2d_gw8_weight_bias_grad(input, grad_output, kernel_size, padding)
  -> (grad_weight, grad_bias)

They take and return PyTorch's layouts: activations N x C x H x W in channels_last memory
(what the kernels read and write as NHWC), weights C x 8 x R x S as nn.Conv2d holds them
(read in place when in channels_last memory, Spio's C x R x S x 8; else copied so per call:
a few KB), weight gradients in channels_last memory (the layout Conv2dGw8 keeps its weight
in, so that autograd accumulates them without a copy). Each operator's autograd formula
calls the others (_conv2d_gw8_grads), so gradients of gradients work to any order. On
CUDA they run Spio's kernels through _cuda_passes (on torch's current stream, so they
capture into CUDA graphs, each pass with the config spio-perfmodel's choose_config picks);
on CPU they compute in fp32 with PyTorch's own convolution and its gradient formulas
(torch.nn.grad) and round to the input's dtype: a path for development and tests, not a
fast one. Under torch.autocast the forward operator casts as torch's conv2d does, and
FlopCounterMode counts each pass (the end of this module).

Every implementation of an operator, CPU, CUDA and fake, first runs the operator's check
(_checks: the same errors as spio.functional's), so the paths take the same arguments and
agree on the result's shape. An empty batch runs no kernel: its output and input gradient
are empty, its weight gradient zeros, as torch's convolution gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from spio.kernels.conv2d_gw8 import weights_from_torch_layout
from spio.kernels.conv2d_gw8.reference import fprop_reference
from torch.utils.flop_counter import register_flop_formula

from ._autocast import register_autocast_rule
from ._checks import (
    GROUP_WIDTH,
    check_conv2d_gw8,
    check_conv2d_gw8_input_grad,
    check_conv2d_gw8_weight_grad,
)
from ._conv2d_gw8_grads import (
    Passes,
    forward_gradients_of,
    input_grad_gradients,
    weight_grad_gradients,
)
from ._cuda_passes import (
    dgrad_cuda,
    fprop_cuda,
    layer_params,
    layer_plan,
    wgrad_cuda,
)
from ._layout import (
    bias_buffer,
    channels_last,
    empty_nchw,
    from_nhwc,
    spio_weight,
)


def _nhwc(tensor: torch.Tensor) -> torch.Tensor:
    """The N x H x W x C view of an activation, as the CPU reference takes it."""
    return channels_last(tensor).permute(0, 2, 3, 1)


def _weight_size(input: torch.Tensor, kernel_size: list[int]) -> tuple[int, ...]:
    """The C x 8 x R x S size of input's layer's weight (and its gradient)."""
    return (input.shape[1], GROUP_WIDTH, kernel_size[0], kernel_size[1])


# ---- forward ---------------------------------------------------------------------------


@torch.library.custom_op("spio::conv2d_gw8", mutates_args=())
def conv2d_gw8_op(
    input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, padding: list[int]
) -> torch.Tensor:
    """Grouped conv2d, group width 8, stride 1 (CPU: fp32 reference; see the module doc)."""
    output_size = check_conv2d_gw8(input, weight, bias, padding)
    if not input.shape[0]:
        return empty_nchw(output_size, input)
    params = layer_params(input.shape, weight.shape[2:], padding, input.dtype, bias is not None)
    y = fprop_reference(_nhwc(input), weights_from_torch_layout(weight), bias, params)
    return from_nhwc(y, input.dtype)


@conv2d_gw8_op.register_fake
def _(
    input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, padding: list[int]
) -> torch.Tensor:
    # The check's plain arithmetic: under tracing the sizes may be symbolic.
    return empty_nchw(check_conv2d_gw8(input, weight, bias, padding), input)


@conv2d_gw8_op.register_kernel("cuda")
def conv2d_gw8_op_cuda(
    input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, padding: list[int]
) -> torch.Tensor:
    """The forward operator's CUDA implementation."""
    output_size = check_conv2d_gw8(input, weight, bias, padding)
    if not input.shape[0]:
        return empty_nchw(output_size, input)
    plan = layer_plan(
        input.shape, weight.shape[2:], padding, input.dtype, bias is not None, input.get_device()
    )
    return fprop_cuda(channels_last(input), spio_weight(weight), bias, plan)


# ---- input gradient --------------------------------------------------------------------


@torch.library.custom_op("spio::conv2d_gw8_input_grad", mutates_args=())
def conv2d_gw8_input_grad_op(
    grad_output: torch.Tensor, weight: torch.Tensor, input_size: list[int], padding: list[int]
) -> torch.Tensor:
    """The input gradient of spio::conv2d_gw8 (CPU: fp32 reference)."""
    check_conv2d_gw8_input_grad(grad_output, weight, input_size, padding)
    n, c, h, w = input_size
    top, bottom, left, right = padding
    padded = (n, c, h + top + bottom, w + left + right)
    grad = torch.nn.grad.conv2d_input(
        padded, weight.float(), grad_output.float(), groups=c // GROUP_WIDTH
    )
    grad = grad[:, :, top : top + h, left : left + w]
    return grad.to(grad_output.dtype).contiguous(memory_format=torch.channels_last)


@conv2d_gw8_input_grad_op.register_fake
def _(
    grad_output: torch.Tensor, weight: torch.Tensor, input_size: list[int], padding: list[int]
) -> torch.Tensor:
    check_conv2d_gw8_input_grad(grad_output, weight, input_size, padding)
    return empty_nchw(input_size, grad_output)


@conv2d_gw8_input_grad_op.register_kernel("cuda")
def conv2d_gw8_input_grad_op_cuda(
    grad_output: torch.Tensor, weight: torch.Tensor, input_size: list[int], padding: list[int]
) -> torch.Tensor:
    check_conv2d_gw8_input_grad(grad_output, weight, input_size, padding)
    if not input_size[0]:
        return empty_nchw(input_size, grad_output)
    return input_grad_cuda(grad_output, weight, input_size, padding)


def input_grad_cuda(
    grad_output: torch.Tensor, weight: torch.Tensor, input_size: list[int], padding: list[int]
) -> torch.Tensor:
    """The input gradient's CUDA kernel, unchecked: the operator's after its check, and the
    eager path's (_eager_grads), whose arguments a checked forward call made."""
    device = grad_output.get_device()
    plan = layer_plan(input_size, weight.shape[2:], padding, grad_output.dtype, False, device)
    return dgrad_cuda(channels_last(grad_output), spio_weight(weight), plan)


# ---- weight gradient -------------------------------------------------------------------


@torch.library.custom_op("spio::conv2d_gw8_weight_grad", mutates_args=())
def conv2d_gw8_weight_grad_op(
    input: torch.Tensor, grad_output: torch.Tensor, kernel_size: list[int], padding: list[int]
) -> torch.Tensor:
    """The weight gradient of spio::conv2d_gw8, C x 8 x R x S in the input's dtype and in
    channels_last memory (CPU: fp32 reference)."""
    check_conv2d_gw8_weight_grad(input, grad_output, kernel_size, padding)
    c = input.shape[1]
    top, bottom, left, right = padding
    padded = torch.nn.functional.pad(input.float(), (left, right, top, bottom))
    grad = torch.nn.grad.conv2d_weight(
        padded, (c, GROUP_WIDTH, *kernel_size), grad_output.float(), groups=c // GROUP_WIDTH
    )
    return grad.to(input.dtype).contiguous(memory_format=torch.channels_last)


@conv2d_gw8_weight_grad_op.register_fake
def _(
    input: torch.Tensor, grad_output: torch.Tensor, kernel_size: list[int], padding: list[int]
) -> torch.Tensor:
    check_conv2d_gw8_weight_grad(input, grad_output, kernel_size, padding)
    return empty_nchw(_weight_size(input, kernel_size), input)


@conv2d_gw8_weight_grad_op.register_kernel("cuda")
def conv2d_gw8_weight_grad_op_cuda(
    input: torch.Tensor, grad_output: torch.Tensor, kernel_size: list[int], padding: list[int]
) -> torch.Tensor:
    check_conv2d_gw8_weight_grad(input, grad_output, kernel_size, padding)
    if not input.shape[0]:
        return empty_nchw(_weight_size(input, kernel_size), input).zero_()
    return weight_grad_cuda(input, grad_output, kernel_size, padding)


def weight_grad_cuda(
    input: torch.Tensor, grad_output: torch.Tensor, kernel_size: list[int], padding: list[int]
) -> torch.Tensor:
    """The weight gradient's CUDA kernel, unchecked (see input_grad_cuda). In channels_last
    memory, the layout Conv2dGw8 keeps its weight in: autograd then accumulates it without
    a copy, and the kernels' reduction writes it in the input's dtype with no f32 tensor."""
    plan = layer_plan(input.shape, kernel_size, padding, input.dtype, False, input.get_device())
    return wgrad_cuda(channels_last(input), channels_last(grad_output), plan, True)


# ---- weight and bias gradients ---------------------------------------------------------


@torch.library.custom_op("spio::conv2d_gw8_weight_bias_grad", mutates_args=())
def conv2d_gw8_weight_bias_grad_op(
    input: torch.Tensor, grad_output: torch.Tensor, kernel_size: list[int], padding: list[int]
) -> tuple[torch.Tensor, torch.Tensor]:
    """The weight gradient (as spio::conv2d_gw8_weight_grad) and the f32 bias gradient of a
    layer with a bias, from one pass over grad_output on CUDA (CPU: fp32 reference)."""
    # (The weight gradient's operator checks the arguments first.)
    grad_weight = conv2d_gw8_weight_grad_op(input, grad_output, kernel_size, padding)
    return grad_weight, grad_output.sum((0, 2, 3), dtype=torch.float32)


@conv2d_gw8_weight_bias_grad_op.register_fake
def _(
    input: torch.Tensor, grad_output: torch.Tensor, kernel_size: list[int], padding: list[int]
) -> tuple[torch.Tensor, torch.Tensor]:
    check_conv2d_gw8_weight_grad(input, grad_output, kernel_size, padding)
    grad_weight = empty_nchw(_weight_size(input, kernel_size), input)
    return grad_weight, input.new_empty((input.shape[1],), dtype=torch.float32)


@conv2d_gw8_weight_bias_grad_op.register_kernel("cuda")
def conv2d_gw8_weight_bias_grad_op_cuda(
    input: torch.Tensor, grad_output: torch.Tensor, kernel_size: list[int], padding: list[int]
) -> tuple[torch.Tensor, torch.Tensor]:
    check_conv2d_gw8_weight_grad(input, grad_output, kernel_size, padding)
    if not input.shape[0]:
        grad_bias = input.new_zeros((input.shape[1],), dtype=torch.float32)
        return empty_nchw(_weight_size(input, kernel_size), input).zero_(), grad_bias
    return weight_bias_grad_cuda(input, grad_output, kernel_size, padding)


def weight_bias_grad_cuda(
    input: torch.Tensor, grad_output: torch.Tensor, kernel_size: list[int], padding: list[int]
) -> tuple[torch.Tensor, torch.Tensor]:
    """The weight and bias gradients' CUDA kernel, unchecked (see input_grad_cuda)."""
    plan = layer_plan(input.shape, kernel_size, padding, input.dtype, True, input.get_device())
    grad_output = channels_last(grad_output)
    grad_bias = bias_buffer(grad_output)
    grad_weight = wgrad_cuda(channels_last(input), grad_output, plan, True, grad_bias)
    return grad_weight, grad_bias


# ---- autograd: every pass's derivatives are passes again (_conv2d_gw8_grads) -------------

#: The operators as the derivative formulas take them.
OPERATORS = Passes(
    conv2d_gw8_op,
    conv2d_gw8_input_grad_op,
    conv2d_gw8_weight_grad_op,
    conv2d_gw8_weight_bias_grad_op,
)


def _forward_context(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
    input, weight, bias, padding = inputs
    ctx.save_for_backward(input, weight)
    ctx.padding = list(padding)
    ctx.bias_dtype = None if bias is None else bias.dtype


def _forward_backward(ctx: Any, grad_output: torch.Tensor) -> tuple[Any, ...]:
    return forward_gradients_of(OPERATORS, ctx, grad_output)


def _input_grad_context(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
    grad_output, weight, _, padding = inputs
    ctx.save_for_backward(grad_output, weight)
    ctx.padding = list(padding)


def _input_grad_backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    return (*input_grad_gradients(OPERATORS, ctx, grad), None, None)


def _weight_grad_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    input, grad_output, _, padding = inputs
    ctx.save_for_backward(input, grad_output)
    ctx.padding = list(padding)


def _weight_grad_backward(
    ctx: Any, grad_weight_grad: torch.Tensor, grad_bias_grad: torch.Tensor | None = None
) -> tuple[Any, ...]:
    return (*weight_grad_gradients(OPERATORS, ctx, grad_weight_grad, grad_bias_grad), None, None)


conv2d_gw8_op.register_autograd(_forward_backward, setup_context=_forward_context)
conv2d_gw8_input_grad_op.register_autograd(_input_grad_backward, setup_context=_input_grad_context)
conv2d_gw8_weight_grad_op.register_autograd(
    _weight_grad_backward, setup_context=_weight_grad_context
)
conv2d_gw8_weight_bias_grad_op.register_autograd(
    _weight_grad_backward, setup_context=_weight_grad_context
)


# ---- autocast and FLOP counts ----------------------------------------------------------

# Under torch.autocast the input and the weight run in the region's dtype, as torch's conv2d
# does (the bias is added in fp32 either way). spio.functional.conv2d_gw8 casts them itself
# (on CUDA in eager mode it skips the operators); this is the rule of a direct call.
register_autocast_rule("conv2d_gw8", cast_arguments=(0, 1))


def _conv_flops(output_size: Sequence[int], kernel_size: Sequence[int]) -> int:
    """The multiply-adds of a pass, counted twice as torch.utils.flop_counter counts a
    convolution's: each of the N x C x P x Q outputs sums 8 x R x S products (and each pass
    of the gradients the same number)."""
    n, c, p, q = output_size
    r, s = kernel_size
    return 2 * n * c * GROUP_WIDTH * r * s * p * q


@register_flop_formula(torch.ops.spio.conv2d_gw8)
def _(input: Any, weight: Any, bias: Any, padding: Any, out_shape: Any, **_: Any) -> int:
    return _conv_flops(out_shape, weight[2:])


@register_flop_formula(torch.ops.spio.conv2d_gw8_input_grad)
def _(grad_output: Any, weight: Any, input_size: Any, padding: Any, **_: Any) -> int:
    return _conv_flops(grad_output, weight[2:])


@register_flop_formula(
    [torch.ops.spio.conv2d_gw8_weight_grad, torch.ops.spio.conv2d_gw8_weight_bias_grad]
)
def _(input: Any, grad_output: Any, kernel_size: Any, padding: Any, **_: Any) -> int:
    return _conv_flops(grad_output, kernel_size)
