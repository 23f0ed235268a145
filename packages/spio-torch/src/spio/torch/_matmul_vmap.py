"""Batching rules of spio::mm and spio::addmm: torch.vmap runs a batch of products on Spio's
kernels, as one product where the batch folds into a matrix.

Where only A is batched, the products share B: B x M x K stacks into (B M) x K, one product
of more rows. Where A is shared, the batch of Bs (and biases) lines up side by side: K x (B N),
one product of more columns. Where both are batched (per-sample gradients of a linear layer,
`a.t() @ grad` image by image), the kernels have no batched form, and the products run one
after another.

The rule is registered with the operators on torch versions that have torch.library's
register_vmap (on older ones vmap runs the operators themselves call by call), and
_matmul_func's Function takes it as its vmap rule under torch.func, on every torch version.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ._batching import leading
from ._matmul import addmm_op, mm_op


def _side_by_side(matrices: torch.Tensor) -> torch.Tensor:
    """B x K x N matrices as one K x (B N) matrix."""
    size, k, n = matrices.shape
    return matrices.permute(1, 0, 2).reshape(k, size * n)


def product_rule(
    product: Callable[..., torch.Tensor],
    size: int,
    a: torch.Tensor,
    a_dim: int | None,
    b: torch.Tensor,
    b_dim: int | None,
    bias: torch.Tensor | None = None,
    bias_dim: int | None = None,
) -> tuple[torch.Tensor, int]:
    """The batch of a @ b (+ bias) and its output dimension; product(a, b, bias) runs one
    product (the operators, or under torch.func _matmul_func's Function of them)."""
    if b_dim is None and bias_dim is None:
        rows = leading(a, a_dim, size)
        return product(rows.flatten(0, 1), b, bias).unflatten(0, (size, rows.shape[1])), 0
    if a_dim is None:
        columns = _side_by_side(leading(b, b_dim, size))
        vector = None if bias is None else leading(bias, bias_dim, size).flatten()
        return product(a, columns, vector).unflatten(1, (size, -1)), 1
    a_all, b_all = leading(a, a_dim, size), leading(b, b_dim, size)
    biases = [None] * size if bias is None else list(leading(bias, bias_dim, size))
    return torch.stack([product(*call) for call in zip(a_all, b_all, biases, strict=True)]), 0


def operator_product(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """a @ b (+ bias) by the operators."""
    result: torch.Tensor = mm_op(a, b) if bias is None else addmm_op(bias, a, b)
    return result


def _mm_vmap(
    info: Any, in_dims: tuple[Any, ...], a: torch.Tensor, b: torch.Tensor
) -> tuple[torch.Tensor, int]:
    a_dim, b_dim = in_dims
    return product_rule(operator_product, info.batch_size, a, a_dim, b, b_dim)


def _addmm_vmap(
    info: Any, in_dims: tuple[Any, ...], bias: torch.Tensor, a: torch.Tensor, b: torch.Tensor
) -> tuple[torch.Tensor, int]:
    bias_dim, a_dim, b_dim = in_dims
    return product_rule(operator_product, info.batch_size, a, a_dim, b, b_dim, bias, bias_dim)


def register() -> bool:
    """Register the rules (once). Returns whether this torch has register_vmap."""
    if not hasattr(mm_op, "register_vmap"):
        return False
    mm_op.register_vmap(_mm_vmap)
    addmm_op.register_vmap(_addmm_vmap)
    return True


HAS_BATCHING_RULES = register()
