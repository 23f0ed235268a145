"""Grouped conv2d with group width 8 as PyTorch custom operators (torch.library).

Three operators, one per pass, each with a fake (meta) implementation so that torch.compile
and other tracers see shapes, dtypes and strides without running anything:

- spio::conv2d_gw8(input, weight, bias, padding) -> output
- spio::conv2d_gw8_input_grad(grad_output, weight, input_size, padding) -> grad_input
- spio::conv2d_gw8_weight_grad(input, grad_output, kernel_size, padding) -> grad_weight

They take and return PyTorch's layouts: activations N x C x H x W in channels_last memory
(what the kernels read and write as NHWC), weights C x 8 x R x S as nn.Conv2d holds them
(converted to Spio's C x R x S x 8 per call: a few KB). The forward operator's autograd
formula calls the other two. On CUDA they run Spio's kernels (spio-kernels' conv2d_gw8
entries, on torch's current stream, so they capture into CUDA graphs, each pass with the
config spio-perfmodel's choose_config picks: its shipped latency model for the GPU where
one fits, else the kernels' heuristic); on CPU they compute
in fp32 with PyTorch's own convolution and its gradient formulas (torch.nn.grad) and round
to the input's dtype: a path for development and tests, not a fast one.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import torch
from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    conv2d_gw8_dgrad,
    conv2d_gw8_fprop,
    conv2d_gw8_wgrad,
    weights_from_torch_layout,
)
from spio.kernels.conv2d_gw8.reference import fprop_reference
from spio.perfmodel import choose_config

GROUP_WIDTH = 8
_DTYPES = {torch.float16: "float16", torch.bfloat16: "bfloat16"}


def layer_params(
    input_size: Sequence[int],
    kernel_size: Sequence[int],
    padding: Sequence[int],
    dtype: torch.dtype,
    has_bias: bool = False,
) -> Conv2dGw8Params:
    """The validated Conv2dGw8Params of a call (built once per distinct layer: validating
    costs the host more than a launch)."""
    key = (tuple(input_size), tuple(kernel_size), tuple(padding), dtype, has_bias)
    if torch.compiler.is_compiling():
        # Dynamo traces the validation itself (once per compiled graph); through the cache it
        # would only warn that it bypasses it.
        return _layer.__wrapped__(*key)
    return _layer(*key)


@functools.lru_cache(maxsize=4096)
def _layer(
    input_size: tuple[int, ...],
    kernel_size: tuple[int, ...],
    padding: tuple[int, ...],
    dtype: torch.dtype,
    has_bias: bool,
) -> Conv2dGw8Params:
    if dtype not in _DTYPES:  # reached only by calling the operators directly
        raise TypeError(f"the tensors must be float16 or bfloat16, got {dtype}")
    n, c, h, w = input_size
    r, s = kernel_size
    return Conv2dGw8Params(
        n=n,
        c=c,
        h=h,
        w=w,
        r=r,
        s=s,
        padding=(padding[0], padding[1], padding[2], padding[3]),
        dtype=_DTYPES[dtype],  # type: ignore[arg-type]
        has_bias=has_bias,
    )


#: The kernels move 16-byte cells: every array must start on a 16-byte boundary.
_ALIGNMENT = 16


def _nhwc(tensor: torch.Tensor) -> torch.Tensor:
    """The N x H x W x C view of a channels_last tensor: the layout the kernels read. A tensor
    in another layout, or a view that starts off a 16-byte boundary, is copied first."""
    tensor = tensor.contiguous(memory_format=torch.channels_last)
    if tensor.data_ptr() % _ALIGNMENT:
        tensor = tensor.clone(memory_format=torch.channels_last)
    return tensor.permute(0, 2, 3, 1)


def is_spio_layout(weight: torch.Tensor) -> bool:
    """Whether weight (C x 8 x R x S) sits in memory as Spio's C x R x S x 8: torch's
    channels_last memory format of a 4-D weight, which `Conv2dGw8` modules keep and
    `model.to(memory_format=torch.channels_last)` gives. The kernels then read it in place."""
    return weight.is_contiguous(memory_format=torch.channels_last)


def spio_weight(weight: torch.Tensor) -> torch.Tensor:
    """torch's C x 8 x R x S weight in Spio's C x R x S x 8, contiguous and aligned: a view of
    weight where it is in that layout already (is_spio_layout), else a copy."""
    spio_weight = weights_from_torch_layout(weight)
    if spio_weight.data_ptr() % _ALIGNMENT:  # 1 x 1 filters: the permute may be a view
        spio_weight = spio_weight.clone()
    return spio_weight


def _empty_nchw(
    size: Sequence[int], like: torch.Tensor, dtype: torch.dtype | None = None
) -> torch.Tensor:
    return torch.empty(
        tuple(size),
        dtype=dtype or like.dtype,
        device=like.device,
        memory_format=torch.channels_last,
    )


def _from_nhwc(nhwc: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """N x C x H x W in channels_last memory from an N x H x W x C tensor."""
    return nhwc.to(dtype).permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last)


def _weight_to_torch(
    grad_spio: torch.Tensor, dtype: torch.dtype, channels_last: bool = False
) -> torch.Tensor:
    """Spio's C x R x S x 8 (f32) as torch's C x 8 x R x S in dtype, in one copy kernel:
    channels_last memory (Spio's layout: the copy only casts) where channels_last, for a
    weight kept that way, so that autograd accumulates it without another copy to match the
    weight's strides; else contiguous (the copy casts and transposes)."""
    c, r, s, group = grad_spio.shape
    memory_format = torch.channels_last if channels_last else torch.contiguous_format
    grad = torch.empty(
        (c, group, r, s), dtype=dtype, device=grad_spio.device, memory_format=memory_format
    )
    return grad.copy_(grad_spio.permute(0, 3, 1, 2))


def _bias32(bias: torch.Tensor) -> torch.Tensor:
    """bias as the kernel reads it: contiguous f32 from a 16-byte boundary (copied if not)."""
    if bias.dtype == torch.float32 and bias.is_contiguous() and bias.data_ptr() % _ALIGNMENT == 0:
        return bias
    return bias.to(torch.float32, copy=True)


# ---- the CUDA passes: shared by the operators and the eager path (_eager) ----------------


def fprop_cuda(
    input: torch.Tensor,
    weight_spio: torch.Tensor,
    bias: torch.Tensor | None,
    params: Conv2dGw8Params,
) -> torch.Tensor:
    """The forward pass on CUDA: weight_spio from spio_weight(weight); returns N x C x P x Q
    (channels_last)."""
    output = _empty_nchw((params.n, params.c, params.p, params.q), input)
    device = input.device.index
    conv2d_gw8_fprop(
        output.permute(0, 2, 3, 1),  # fresh, so aligned and channels_last
        _nhwc(input),
        weight_spio,
        None if bias is None else _bias32(bias),
        params,
        choose_config("fprop", params, device).config,
        device=device,
    )
    return output


def dgrad_cuda(
    grad_output: torch.Tensor, weight_spio: torch.Tensor, params: Conv2dGw8Params
) -> torch.Tensor:
    """The input gradient on CUDA (params: the forward layer's)."""
    grad_input = _empty_nchw((params.n, params.c, params.h, params.w), grad_output)
    device = grad_output.device.index
    conv2d_gw8_dgrad(
        grad_input.permute(0, 2, 3, 1),
        _nhwc(grad_output),
        weight_spio,
        params,
        choose_config("dgrad", params, device).config,
        device=device,
    )
    return grad_input


def wgrad_cuda(
    input: torch.Tensor,
    grad_output: torch.Tensor,
    params: Conv2dGw8Params,
    channels_last: bool = False,
) -> torch.Tensor:
    """The weight gradient on CUDA, C x 8 x R x S in the input's dtype; channels_last memory
    where channels_last (the weight's own layout, is_spio_layout), else contiguous."""
    grad_spio = torch.empty(params.weight_shape, dtype=torch.float32, device=input.device)
    device = input.device.index
    config = choose_config("wgrad", params, device).config
    conv2d_gw8_wgrad(grad_spio, _nhwc(input), _nhwc(grad_output), params, config, device=device)
    return _weight_to_torch(grad_spio, input.dtype, channels_last)


# ---- forward ---------------------------------------------------------------------------


@torch.library.custom_op("spio::conv2d_gw8", mutates_args=())
def conv2d_gw8_op(
    input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, padding: list[int]
) -> torch.Tensor:
    """Grouped conv2d, group width 8, stride 1 (CPU: fp32 reference; see the module doc)."""
    params = layer_params(input.shape, weight.shape[2:], padding, input.dtype, bias is not None)
    y = fprop_reference(_nhwc(input), weights_from_torch_layout(weight), bias, params)
    return _from_nhwc(y, input.dtype)


@conv2d_gw8_op.register_fake
def _(
    input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, padding: list[int]
) -> torch.Tensor:
    # Plain arithmetic: under tracing the sizes may be symbolic (no Conv2dGw8Params here).
    n, c, h, w = input.shape
    top, bottom, left, right = padding
    p = h + top + bottom - weight.shape[2] + 1
    q = w + left + right - weight.shape[3] + 1
    return _empty_nchw((n, c, p, q), input)


@conv2d_gw8_op.register_kernel("cuda")
def _(
    input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, padding: list[int]
) -> torch.Tensor:
    params = layer_params(input.shape, weight.shape[2:], padding, input.dtype, bias is not None)
    return fprop_cuda(input, spio_weight(weight), bias, params)


# ---- input gradient --------------------------------------------------------------------


@torch.library.custom_op("spio::conv2d_gw8_input_grad", mutates_args=())
def conv2d_gw8_input_grad_op(
    grad_output: torch.Tensor, weight: torch.Tensor, input_size: list[int], padding: list[int]
) -> torch.Tensor:
    """The input gradient of spio::conv2d_gw8 (CPU: fp32 reference)."""
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
    return _empty_nchw(input_size, grad_output)


@conv2d_gw8_input_grad_op.register_kernel("cuda")
def _(
    grad_output: torch.Tensor, weight: torch.Tensor, input_size: list[int], padding: list[int]
) -> torch.Tensor:
    params = layer_params(input_size, weight.shape[2:], padding, grad_output.dtype)
    return dgrad_cuda(grad_output, spio_weight(weight), params)


# ---- weight gradient -------------------------------------------------------------------


@torch.library.custom_op("spio::conv2d_gw8_weight_grad", mutates_args=())
def conv2d_gw8_weight_grad_op(
    input: torch.Tensor, grad_output: torch.Tensor, kernel_size: list[int], padding: list[int]
) -> torch.Tensor:
    """The weight gradient of spio::conv2d_gw8, C x 8 x R x S in the input's dtype (CPU: fp32
    reference)."""
    c = input.shape[1]
    top, bottom, left, right = padding
    padded = torch.nn.functional.pad(input.float(), (left, right, top, bottom))
    grad = torch.nn.grad.conv2d_weight(
        padded, (c, GROUP_WIDTH, *kernel_size), grad_output.float(), groups=c // GROUP_WIDTH
    )
    return grad.to(input.dtype).contiguous()


@conv2d_gw8_weight_grad_op.register_fake
def _(
    input: torch.Tensor, grad_output: torch.Tensor, kernel_size: list[int], padding: list[int]
) -> torch.Tensor:
    c = input.shape[1]
    return input.new_empty((c, GROUP_WIDTH, kernel_size[0], kernel_size[1]))


@conv2d_gw8_weight_grad_op.register_kernel("cuda")
def _(
    input: torch.Tensor, grad_output: torch.Tensor, kernel_size: list[int], padding: list[int]
) -> torch.Tensor:
    params = layer_params(input.shape, kernel_size, padding, input.dtype)
    return wgrad_cuda(input, grad_output, params)


# ---- autograd --------------------------------------------------------------------------


def _setup_context(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
    input, weight, bias, padding = inputs
    ctx.save_for_backward(input, weight)
    ctx.padding = list(padding)
    ctx.bias_dtype = None if bias is None else bias.dtype


def _backward(ctx: Any, grad_output: torch.Tensor) -> tuple[Any, ...]:
    input, weight = ctx.saved_tensors
    grad_output = grad_output.to(input.dtype)
    grad_input = grad_weight = grad_bias = None
    if ctx.needs_input_grad[0]:
        grad_input = conv2d_gw8_input_grad_op(grad_output, weight, list(input.shape), ctx.padding)
    if ctx.needs_input_grad[1]:
        kernel_size = list(weight.shape[2:])
        grad_weight = conv2d_gw8_weight_grad_op(input, grad_output, kernel_size, ctx.padding)
    if ctx.bias_dtype is not None and ctx.needs_input_grad[2]:
        grad_bias = grad_output.float().sum((0, 2, 3)).to(ctx.bias_dtype)
    return grad_input, grad_weight, grad_bias, None


conv2d_gw8_op.register_autograd(_backward, setup_context=_setup_context)
