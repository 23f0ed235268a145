"""spio.functional.matmul and spio.functional.linear: checked entries to spio::mm (or, in
eager mode on CUDA, to the same kernels without the operator machinery: _matmul.mm_eager)."""

from __future__ import annotations

from typing import Any

import torch

from ._cuda_passes import DTYPES
from ._eager import runs_eagerly
from ._matmul import mm_eager, mm_op
from ._transforms import refuse_torch_func

#: The sizes that are the length of a row in the kernels' memory must be multiples of this
#: (16-byte vectors of 16-bit elements).
_VECTOR = 8


def _check_tensor(name: str, tensor: Any, dims: int) -> None:
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    if dims and tensor.dim() != dims:
        raise ValueError(f"{name} must be {dims}-D, got shape {tuple(tensor.shape)}")
    if tensor.dtype not in DTYPES:
        raise TypeError(
            f"{name} must be float16 or bfloat16 (fp32 accumulation inside), got {tensor.dtype}"
        )


def _check_pair(first: str, a: torch.Tensor, second: str, b: torch.Tensor) -> None:
    if b.dtype != a.dtype:
        raise TypeError(f"{second} must have {first}'s dtype {a.dtype}, got {b.dtype}")
    if b.device != a.device:
        raise ValueError(f"{second} is on {b.device}, {first} on {a.device}")


def _check_multiple(what: str, value: int) -> None:
    if value % _VECTOR:
        raise ValueError(
            f"{what} must be a multiple of {_VECTOR} (the kernels move rows as 16-byte "
            f"vectors), got {value}"
        )


def _mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if runs_eagerly(a, b, None):
        return mm_eager(a, b)
    result: torch.Tensor = mm_op(a, b)
    return result


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The matrix product a @ b of two 2-D float16 or bfloat16 tensors on Spio's tensor-core
    kernels (fp32 accumulation), with autograd.

    Args:
        a: M x K, any M.
        b: K x N, K and N multiples of 8; a's dtype and device.

    Either may be a transposed view (`x.t()`): the kernels read both orders of each operand
    in place, so the gradients `grad @ b.t()` and `a.t() @ grad` need no copies either.
    Other strides are copied first.

    Returns:
        M x N in a's dtype, contiguous.

    Raises:
        TypeError, ValueError: an argument out of scope; the message names it, what was given
            and what is allowed.
    """
    refuse_torch_func("spio.functional.matmul")
    _check_tensor("a", a, 2)
    _check_tensor("b", b, 2)
    _check_pair("a", a, "b", b)
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            f"a's columns must match b's rows: a is {tuple(a.shape)}, b is {tuple(b.shape)}"
        )
    _check_multiple(f"K (a's columns, b's rows; a {tuple(a.shape)})", a.shape[1])
    _check_multiple(f"N (b's columns; b {tuple(b.shape)})", b.shape[1])
    return _mm(a, b)


def linear(
    input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None
) -> torch.Tensor:
    """`torch.nn.functional.linear` on Spio's tensor-core kernels: input @ weight.T + bias,
    fp32 accumulation, with autograd (all three products on the kernels, none copying the
    weight or the activations).

    Args:
        input: ... x in_features, float16 or bfloat16, any leading dimensions.
        weight: out_features x in_features, input's dtype and device; both features
            multiples of 8.
        bias: out_features values of input's dtype, or None (added by torch after the
            product).

    Returns:
        ... x out_features in input's dtype.

    Raises:
        TypeError, ValueError: an argument out of scope; the message names it, what was given
            and what is allowed.
    """
    refuse_torch_func("spio.functional.linear")
    _check_tensor("input", input, 0)
    _check_tensor("weight", weight, 2)
    _check_pair("input", input, "weight", weight)
    if input.dim() == 0:
        raise ValueError("input must have at least 1 dimension (... x in_features), got a scalar")
    out_features, in_features = weight.shape
    if input.shape[-1] != in_features:
        raise ValueError(
            f"input's last dimension must be weight's in_features {in_features}, got input "
            f"shape {tuple(input.shape)}"
        )
    _check_multiple(f"in_features (weight {tuple(weight.shape)})", in_features)
    _check_multiple(f"out_features (weight {tuple(weight.shape)})", out_features)
    if bias is not None:
        _check_tensor("bias", bias, 1)
        _check_pair("input", input, "bias", bias)
        if bias.shape[0] != out_features:
            raise ValueError(f"bias must have shape ({out_features},), got {tuple(bias.shape)}")
    rows = input.reshape(-1, in_features)
    output = _mm(rows, weight.t()).view(*input.shape[:-1], out_features)
    return output if bias is None else output + bias
