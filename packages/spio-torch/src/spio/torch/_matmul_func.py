"""spio.functional.matmul and linear under torch.func transforms (grad, vjp, jacrev, vmap,
jvp, jacfwd, hessian, and their compositions): spio::mm and spio::addmm through a
torch.autograd.Function in the form torch.func takes (separate setup_context), as in
_conv2d_gw8_func.

Every derivative of a product is a product again, so this Function's backward and
forward-mode rule apply the Function itself, and derivatives of any order run on the
kernels. Its vmap rule is the operators' (_matmul_vmap), each product of a batch through
the Function again.
"""

from __future__ import annotations

from typing import Any

import torch

from ._matmul import _mm_gradients, addmm_op, mm_op
from ._matmul_vmap import product_rule


def _product(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    output: torch.Tensor = MmFunction.apply(a, b, bias)
    return output


class MmFunction(torch.autograd.Function):
    """a @ b (+ bias) for torch.func."""

    @staticmethod
    def forward(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
        output: torch.Tensor = mm_op(a, b) if bias is None else addmm_op(bias, a, b)
        return output

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
        a, b, bias = inputs
        ctx.save_for_backward(a, b)
        ctx.save_for_forward(a, b)
        ctx.bias_dtype = None if bias is None else bias.dtype

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        a, b = ctx.saved_tensors
        needs_a, needs_b, needs_bias = ctx.needs_input_grad
        grad_a, grad_b = _mm_gradients(a, b, grad, (needs_a, needs_b), _product)
        grad_bias = grad.sum(0).to(ctx.bias_dtype) if needs_bias else None
        return grad_a, grad_b, grad_bias

    @staticmethod
    def jvp(
        ctx: Any,
        a_tangent: torch.Tensor | None,
        b_tangent: torch.Tensor | None,
        bias_tangent: torch.Tensor | None,
    ) -> torch.Tensor:
        # a @ b + bias is linear in each: its tangent is da @ b + a @ db + dbias.
        a, b = ctx.saved_tensors
        terms = []
        if a_tangent is not None:
            terms.append(_product(a_tangent, b))
        if b_tangent is not None:
            terms.append(_product(a, b_tangent))
        # The terms' sum; zeros where only the bias moves (its tangent then on every row).
        tangent = sum(terms[1:], terms[0]) if terms else a.new_zeros((a.shape[0], b.shape[1]))
        if bias_tangent is not None:
            tangent = tangent + bias_tangent.to(tangent.dtype)
        return tangent

    @staticmethod
    def vmap(
        info: Any,
        in_dims: tuple[Any, ...],
        a: torch.Tensor,
        b: torch.Tensor,
        bias: torch.Tensor | None,
    ) -> tuple[torch.Tensor, int]:
        a_dim, b_dim, bias_dim = in_dims
        return product_rule(_product, info.batch_size, a, a_dim, b, b_dim, bias, bias_dim)
