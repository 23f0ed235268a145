"""fp32 PyTorch reference for the matmul (the tests check every config against it)."""

from __future__ import annotations

from typing import Any

from .params import MatmulParams


def matmul_reference(a: Any, b: Any, params: MatmulParams, bias: Any = None) -> Any:
    """Return C = A @ B (+ bias) (m x n, float32) computed on float32 copies of a (m x k, or
    k x m for params.a_layout "km"), b (k x n, or n x k for params.b_layout "nk") and bias (n
    elements, added to every row); torch tensors of any dtype and device."""
    a32 = a.float() if params.a_layout == "mk" else a.float().t()
    b32 = b.float() if params.b_layout == "kn" else b.float().t()
    product = a32 @ b32
    return product if bias is None else product + bias.float()
