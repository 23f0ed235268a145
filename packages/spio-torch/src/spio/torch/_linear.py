"""spio.functional.matmul and spio.functional.linear: checked entries to spio::mm (or, in
eager mode on CUDA, to the same kernels without the operator machinery: _matmul.mm_eager;
under torch.func transforms and forward-mode AD, to the operators through _matmul_func)."""

from __future__ import annotations

import math

import torch
from torch.overrides import handle_torch_function, has_torch_function_variadic

from ._autocast import autocast_enabled, autocast_operands
from ._checks import (
    check_bias,
    check_matmul,
    check_multiple,
    check_same_dtype_and_device,
    check_tensor,
)
from ._eager import runs_eagerly
from ._matmul import addmm_op, mm_eager, mm_op
from ._matmul_func import MmFunction
from ._transforms import under_forward_ad, under_torch_func


def _mm(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    if under_torch_func() or under_forward_ad():
        output: torch.Tensor = MmFunction.apply(a, b, bias)
        return output
    if runs_eagerly(a, b, bias):
        return mm_eager(a, b, bias)
    result: torch.Tensor = mm_op(a, b) if bias is None else addmm_op(bias, a, b)
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

    torch.func's transforms and their compositions work on it, to any order of derivative:
    grad, vjp, jacrev, jvp, jacfwd, hessian, and vmap, which runs a batch of products as one
    where the batch folds into a matrix (a batch of a's as more rows, of b's as more
    columns) and one after another where both operands are batched; forward-mode AD through
    torch.autograd.forward_ad too. Under torch.autocast a and b run in the autocast dtype,
    as torch.matmul's do.

    Raises:
        TypeError, ValueError: an argument out of scope; the message names it, what was given
            and what is allowed.
    """
    # Tracers and tensor subclasses (torch.fx's proxies) take the call as a whole.
    if has_torch_function_variadic(a, b):
        return handle_torch_function(matmul, (a, b), a, b)
    if autocast_enabled():
        a, b = autocast_operands(a, b)
    check_matmul(a, b)
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
        bias: out_features values of input's dtype, or None (added to the fp32 sums in the
            kernels' epilogue, before the output rounds).

    Returns:
        ... x out_features in input's dtype.

    torch.func's transforms work on it as on `matmul` (a batch of inputs is one product of
    more rows; a batch of weights, as in model ensembles, one of more columns), and so does
    forward-mode AD. Under torch.autocast the input, the weight and the bias run in the
    autocast dtype, as torch's linear does.

    Raises:
        TypeError, ValueError: an argument out of scope; the message names it, what was given
            and what is allowed.
    """
    if has_torch_function_variadic(input, weight, bias):
        return handle_torch_function(linear, (input, weight, bias), input, weight, bias)
    if autocast_enabled():
        input, weight, bias = autocast_operands(input, weight, bias)
    check_tensor("input", input)
    check_tensor("weight", weight, 2)
    check_same_dtype_and_device("input", input, "weight", weight)
    if input.dim() == 0:
        raise ValueError("input must have at least 1 dimension (... x in_features), got a scalar")
    out_features, in_features = weight.shape
    if input.shape[-1] != in_features:
        raise ValueError(
            f"input's last dimension must be weight's in_features {in_features}, got input "
            f"shape {tuple(input.shape)}"
        )
    check_multiple(in_features, lambda: f"in_features (weight {tuple(weight.shape)})")
    check_multiple(out_features, lambda: f"out_features (weight {tuple(weight.shape)})")
    if bias is not None:
        check_bias(bias, out_features, "input", input)
    if input.dim() == 2:
        # (A reshape and a view back cost a small layer's call 3 us of its 25.)
        return _mm(input, weight.t(), bias)
    leading = input.shape[:-1]
    # With 0 in_features a reshape cannot infer the rows from -1: they are counted then.
    rows = input.reshape(-1 if in_features else math.prod(leading), in_features)
    return _mm(rows, weight.t(), bias).view(*leading, out_features)
