"""spio.functional.conv2d_gw8 under torch.func transforms (grad, vjp, jacrev, vmap, jvp,
jacfwd, hessian, and their compositions): the spio::conv2d_gw8 operators as
torch.autograd.Functions in the form torch.func takes.

torch.func cannot differentiate through an operator that a transform's level tracks (it
needs a Function with a separate setup_context, which torch.library's generated ones lack),
and the eager path's Function is not in that form either. These are: one Function per
operator, whose forward is the operator and whose backward and forward-mode rules are the
operators' own formulas (_conv2d_gw8_grads) with every pass made through these Functions
again, so derivatives of any order run on the kernels. Their vmap rules are the operators'
(_conv2d_gw8_vmap), with the batch's one call made through the Function again: a batch of
calls runs as one call of the kernels. (A generated rule, generate_vmap_rule, builds a new
Function class at every call: vmap(grad) then took the host twice as long.)
"""

from __future__ import annotations

from typing import Any

import torch

from ._conv2d_gw8 import (
    conv2d_gw8_input_grad_op,
    conv2d_gw8_op,
    conv2d_gw8_weight_bias_grad_op,
    conv2d_gw8_weight_grad_op,
)
from ._conv2d_gw8_grads import (
    Passes,
    forward_gradients_of,
    forward_tangent,
    input_grad_gradients,
    input_grad_tangent,
    weight_grad_gradients,
    weight_grad_tangent,
)
from ._conv2d_gw8_vmap import RULES


def _batched(op: Any, function: Any, info: Any, in_dims: tuple[Any, ...], *args: Any) -> Any:
    """op's batching rule, its one call through function again."""
    return RULES[op](function.apply, info, in_dims, *args)


class Conv2dGw8Function(torch.autograd.Function):
    """conv2d_gw8(input, weight, bias, padding) for torch.func (padding: top, bottom, left,
    right)."""

    @staticmethod
    def forward(
        input: torch.Tensor,
        weight: torch.Tensor,
        bias: torch.Tensor | None,
        padding: list[int],
    ) -> torch.Tensor:
        output: torch.Tensor = conv2d_gw8_op(input, weight, bias, padding)
        return output

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
        input, weight, bias, padding = inputs
        ctx.save_for_backward(input, weight)
        ctx.save_for_forward(input, weight)
        ctx.padding = list(padding)
        ctx.bias_dtype = None if bias is None else bias.dtype
        ctx.output_shape = output.shape

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> tuple[Any, ...]:
        return forward_gradients_of(FUNCTIONS, ctx, grad_output)

    @staticmethod
    def jvp(ctx: Any, *tangents: Any) -> torch.Tensor:
        input, weight = ctx.saved_tensors
        return forward_tangent(
            FUNCTIONS, input, weight, ctx.padding, ctx.output_shape, tangents[:3]
        )

    @staticmethod
    def vmap(info: Any, in_dims: tuple[Any, ...], *args: Any) -> tuple[torch.Tensor, int]:
        result: tuple[torch.Tensor, int] = _batched(
            conv2d_gw8_op, Conv2dGw8Function, info, in_dims, *args
        )
        return result


class InputGradFunction(torch.autograd.Function):
    """conv2d_gw8_input_grad(grad_output, weight, input_size, padding) for torch.func."""

    @staticmethod
    def forward(
        grad_output: torch.Tensor, weight: torch.Tensor, input_size: list[int], padding: list[int]
    ) -> torch.Tensor:
        grad_input: torch.Tensor = conv2d_gw8_input_grad_op(
            grad_output, weight, input_size, padding
        )
        return grad_input

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
        grad_output, weight, input_size, padding = inputs
        ctx.save_for_backward(grad_output, weight)
        ctx.save_for_forward(grad_output, weight)
        ctx.input_size = list(input_size)
        ctx.padding = list(padding)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        return (*input_grad_gradients(FUNCTIONS, ctx, grad), None, None)

    @staticmethod
    def jvp(ctx: Any, *tangents: Any) -> torch.Tensor:
        grad_output, weight = ctx.saved_tensors
        return input_grad_tangent(
            FUNCTIONS, grad_output, weight, ctx.input_size, ctx.padding, tangents[:2]
        )

    @staticmethod
    def vmap(info: Any, in_dims: tuple[Any, ...], *args: Any) -> tuple[torch.Tensor, int]:
        result: tuple[torch.Tensor, int] = _batched(
            conv2d_gw8_input_grad_op, InputGradFunction, info, in_dims, *args
        )
        return result


class WeightGradFunction(torch.autograd.Function):
    """conv2d_gw8_weight_grad(input, grad_output, kernel_size, padding) for torch.func."""

    @staticmethod
    def forward(
        input: torch.Tensor, grad_output: torch.Tensor, kernel_size: list[int], padding: list[int]
    ) -> torch.Tensor:
        grad_weight: torch.Tensor = conv2d_gw8_weight_grad_op(
            input, grad_output, kernel_size, padding
        )
        return grad_weight

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        input, grad_output, kernel_size, padding = inputs
        ctx.save_for_backward(input, grad_output)
        ctx.save_for_forward(input, grad_output)
        ctx.kernel_size = list(kernel_size)
        ctx.padding = list(padding)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        return (*weight_grad_gradients(FUNCTIONS, ctx, grad), None, None)

    @staticmethod
    def jvp(ctx: Any, *tangents: Any) -> torch.Tensor:
        input, grad_output = ctx.saved_tensors
        return weight_grad_tangent(
            FUNCTIONS, input, grad_output, ctx.kernel_size, ctx.padding, tangents[:2]
        )

    @staticmethod
    def vmap(info: Any, in_dims: tuple[Any, ...], *args: Any) -> tuple[torch.Tensor, int]:
        result: tuple[torch.Tensor, int] = _batched(
            conv2d_gw8_weight_grad_op, WeightGradFunction, info, in_dims, *args
        )
        return result


class WeightBiasGradFunction(torch.autograd.Function):
    """conv2d_gw8_weight_bias_grad(input, grad_output, kernel_size, padding) for torch.func:
    the weight gradient and the f32 bias gradient from one pass."""

    @staticmethod
    def forward(
        input: torch.Tensor, grad_output: torch.Tensor, kernel_size: list[int], padding: list[int]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        grads: tuple[torch.Tensor, torch.Tensor] = conv2d_gw8_weight_bias_grad_op(
            input, grad_output, kernel_size, padding
        )
        return grads

    setup_context = staticmethod(WeightGradFunction.setup_context)

    @staticmethod
    def backward(
        ctx: Any, grad_weight_grad: torch.Tensor, grad_bias_grad: torch.Tensor
    ) -> tuple[Any, ...]:
        grads = weight_grad_gradients(FUNCTIONS, ctx, grad_weight_grad, grad_bias_grad)
        return (*grads, None, None)

    @staticmethod
    def jvp(ctx: Any, *tangents: Any) -> tuple[torch.Tensor, torch.Tensor]:
        input, grad_output = ctx.saved_tensors
        weight_tangent = weight_grad_tangent(
            FUNCTIONS, input, grad_output, ctx.kernel_size, ctx.padding, tangents[:2]
        )
        # The bias gradient is grad_output's f32 sum over images, rows and columns.
        grad_output_tangent = tangents[1]
        if grad_output_tangent is None:
            bias_tangent = grad_output.new_zeros(grad_output.shape[1], dtype=torch.float32)
        else:
            bias_tangent = grad_output_tangent.sum((0, 2, 3), dtype=torch.float32)
        return weight_tangent, bias_tangent

    @staticmethod
    def vmap(info: Any, in_dims: tuple[Any, ...], *args: Any) -> Any:
        return _batched(
            conv2d_gw8_weight_bias_grad_op, WeightBiasGradFunction, info, in_dims, *args
        )


#: The passes as the derivative formulas take them, each through its Function.
FUNCTIONS = Passes(
    Conv2dGw8Function.apply,
    InputGradFunction.apply,
    WeightGradFunction.apply,
    WeightBiasGradFunction.apply,
)
