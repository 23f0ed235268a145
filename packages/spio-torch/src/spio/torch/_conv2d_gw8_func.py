"""spio.functional.conv2d_gw8 under torch.func transforms (grad, vjp, jacrev, vmap, jvp,
jacfwd, and their compositions): a torch.autograd.Function of the spio::conv2d_gw8
operators in the form torch.func takes.

torch.func cannot differentiate through an operator that a transform's level tracks (it
needs a Function with a separate setup_context, which torch.library's generated ones lack),
and the eager path's Function is not in that form either. This one is: its forward is the
operator, its backward the operator's own formulas (_conv2d_gw8.conv2d_gw8_backward) with each
gradient operator run through FirstOrder, and its forward-mode rule uses that the convolution
is linear in each argument, convolving the tangents through this Function again. Its vmap
rule and FirstOrder's are the operators' (_conv2d_gw8_vmap), with the batch's one call made
through the Function again: a batch of calls runs as one call of the kernels. (A generated
rule, generate_vmap_rule, builds a new Function class at every call: vmap(grad) then took
the host twice as long.)

Gradients are first order, as everywhere in Spio's convolution: the gradient operators have
no derivatives of their own, and FirstOrder says so by name where a second derivative (grad
of grad, hessian) reaches them, rather than letting it come out as zeros.
"""

from __future__ import annotations

import functools
from typing import Any

import torch

from ._conv2d_gw8 import conv2d_gw8_backward, conv2d_gw8_op
from ._conv2d_gw8_vmap import RULES, conv2d_gw8_rule

_SECOND_ORDER = (
    "spio.functional.conv2d_gw8 has first-order gradients only: its gradients cannot be "
    "differentiated again (grad of grad, hessian, jacfwd of jacrev)"
)


class FirstOrder(torch.autograd.Function):
    """op(*args) for a gradient operator, recorded by torch.func; differentiating it raises."""

    @staticmethod
    def forward(op: Any, *args: Any) -> Any:
        return op(*args)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        pass

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise NotImplementedError(_SECOND_ORDER)

    @staticmethod
    def jvp(ctx: Any, *tangents: Any) -> Any:
        raise NotImplementedError(_SECOND_ORDER)

    @staticmethod
    def vmap(info: Any, in_dims: tuple[Any, ...], op: Any, *args: Any) -> Any:
        # The operator's batching rule, its one call through FirstOrder again.
        return RULES[op](functools.partial(FirstOrder.apply, op), info, in_dims[1:], *args)


def _convolution(
    input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, padding: list[int]
) -> torch.Tensor:
    output: torch.Tensor = Conv2dGw8Function.apply(input, weight, bias, padding)
    return output


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
        return conv2d_gw8_backward(ctx, grad_output, FirstOrder.apply)

    @staticmethod
    def jvp(
        ctx: Any,
        input_tangent: torch.Tensor | None,
        weight_tangent: torch.Tensor | None,
        bias_tangent: torch.Tensor | None,
        _padding_tangent: Any,
    ) -> torch.Tensor:
        # y = conv(x, w) + b is linear in each of x, w and b: its tangent is
        # conv(dx, w) + conv(x, dw) + db.
        input, weight = ctx.saved_tensors
        terms = []
        if input_tangent is not None:
            terms.append(_convolution(input_tangent, weight, None, ctx.padding))
        if weight_tangent is not None:
            terms.append(_convolution(input, weight_tangent, None, ctx.padding))
        if not terms:
            # Only the bias moves.
            terms.append(input.new_zeros(ctx.output_shape))
        tangent = terms[0] if len(terms) == 1 else terms[0] + terms[1]
        if bias_tangent is not None:
            tangent = tangent + bias_tangent.to(tangent.dtype)[:, None, None]
        return tangent

    @staticmethod
    def vmap(
        info: Any,
        in_dims: tuple[Any, ...],
        input: torch.Tensor,
        weight: torch.Tensor,
        bias: torch.Tensor | None,
        padding: list[int],
    ) -> tuple[torch.Tensor, int]:
        # The operator's batching rule, its one call through this Function again.
        result: tuple[torch.Tensor, int] = conv2d_gw8_rule(
            _convolution, info, in_dims, input, weight, bias, padding
        )
        return result
