"""The eager path's passes for backward passes that build a graph (create_graph=True:
gradient penalties, Hessian-vector products): the input and weight gradients as
torch.autograd.Functions that run their kernels directly, as the eager forward does, and
whose own backward applies the passes' derivatives (_conv2d_gw8_grads) through these passes
again. So every order of derivative skips the operators' host cost (about 50 us a call, see
_eager), where nothing traces: each pass is the operator's CUDA kernel, called directly. A
pass whose inputs want no gradient runs without a Function.
"""

from __future__ import annotations

from typing import Any

import torch

from ._conv2d_gw8 import input_grad_cuda, weight_bias_grad_cuda, weight_grad_cuda
from ._conv2d_gw8_grads import Passes, input_grad_gradients, weight_grad_gradients
from ._cuda_passes import layer_plan
from ._eager import conv2d_gw8_eager


def _wants_grad(*tensors: torch.Tensor) -> bool:
    return torch.is_grad_enabled() and any(tensor.requires_grad for tensor in tensors)


def forward(
    input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, padding: list[int]
) -> torch.Tensor:
    """conv(input, weight) + bias on the eager path."""
    has_bias, device = bias is not None, input.get_device()
    plan = layer_plan(input.shape, weight.shape[2:], padding, input.dtype, has_bias, device)
    return conv2d_gw8_eager(input, weight, bias, plan)


class _InputGrad(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any,
        grad_output: torch.Tensor,
        weight: torch.Tensor,
        input_size: list[int],
        padding: list[int],
    ) -> torch.Tensor:
        ctx.save_for_backward(grad_output, weight)
        ctx.padding = padding
        return input_grad_cuda(grad_output, weight, input_size, padding)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        return (*input_grad_gradients(EAGER_PASSES, ctx, grad), None, None)


def input_grad(
    grad_output: torch.Tensor, weight: torch.Tensor, input_size: list[int], padding: list[int]
) -> torch.Tensor:
    """The input gradient dgrad(grad_output, weight) on the eager path."""
    if _wants_grad(grad_output, weight):
        result: torch.Tensor = _InputGrad.apply(grad_output, weight, input_size, padding)
        return result
    return input_grad_cuda(grad_output, weight, input_size, padding)


def _weight_grad_now(
    input: torch.Tensor,
    grad_output: torch.Tensor,
    kernel_size: list[int],
    padding: list[int],
    with_bias: bool,
) -> Any:
    kernel = weight_bias_grad_cuda if with_bias else weight_grad_cuda
    return kernel(input, grad_output, kernel_size, padding)


class _WeightGrad(torch.autograd.Function):
    """The weight gradient, and with_bias the f32 bias gradient from the same pass."""

    @staticmethod
    def forward(
        ctx: Any,
        input: torch.Tensor,
        grad_output: torch.Tensor,
        kernel_size: list[int],
        padding: list[int],
        with_bias: bool,
    ) -> Any:
        ctx.save_for_backward(input, grad_output)
        ctx.padding = padding
        return _weight_grad_now(input, grad_output, kernel_size, padding, with_bias)

    @staticmethod
    def backward(
        ctx: Any, grad_weight_grad: torch.Tensor, grad_bias_grad: torch.Tensor | None = None
    ) -> tuple[Any, ...]:
        grads = weight_grad_gradients(EAGER_PASSES, ctx, grad_weight_grad, grad_bias_grad)
        return (*grads, None, None, None)


def _weight_grads(with_bias: bool) -> Any:
    def weight_grad(
        input: torch.Tensor, grad_output: torch.Tensor, kernel_size: list[int], padding: list[int]
    ) -> Any:
        if _wants_grad(input, grad_output):
            return _WeightGrad.apply(input, grad_output, kernel_size, padding, with_bias)
        return _weight_grad_now(input, grad_output, kernel_size, padding, with_bias)

    return weight_grad


#: The eager path's passes as the derivative formulas take them.
EAGER_PASSES = Passes(forward, input_grad, _weight_grads(False), _weight_grads(True))
