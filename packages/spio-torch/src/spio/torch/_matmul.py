"""Matrix products on Spio's tensor-core matmul as a PyTorch custom operator (torch.library).

spio::mm(a, b) -> a @ b for 2-D fp16 or bf16 tensors. The kernels read A as M x K or K x M
and B as K x N or N x K, each dense row-major (spio-kernels' `MatmulParams` layouts), so a
transposed view reaches them as the matrix it views, with no copy: `a.t()` of a contiguous
K x M tensor is A in the K x M layout. That is what makes the gradients cheap, each of them
again an mm of views:

    grad_a = mm(grad, b.t())        grad_b = mm(a.t(), grad)

and a linear layer's three products (forward `x @ w.t()`, `grad @ w`, `grad.t() @ x`) run
on the kernels as they are laid out. Any other strides, or a start off a 16-byte boundary,
are copied to a contiguous tensor first.

On CUDA the operator runs the kernel of `default_config_on` for the shape and device (the
wgmma kernel on an H100 or H200, the mma.sync one elsewhere) on torch's current stream, so
it captures into CUDA graphs; on CPU it computes in fp32 with torch and rounds. In eager
mode on CUDA `mm` goes straight to the kernels through a torch.autograd.Function instead of
the operator (the operator's Python dispatch costs the host tens of microseconds a call);
tracers (torch.compile, export, fake tensors) see the operator.
"""

from __future__ import annotations

import functools
from typing import Any

import torch
from spio.kernels.matmul import MatmulParams, default_config_on, matmul_launch
from spio.kernels.matmul.params import VECTOR

from ._cuda_passes import DTYPES

#: 16 bytes: the kernels move rows as whole vectors from aligned addresses.
_ALIGNMENT = 16


def _layout(tensor: torch.Tensor, plain: str, transposed: str) -> tuple[torch.Tensor, str]:
    """(the dense row-major matrix the kernels read, its layout name) for a 2-D operand:
    the tensor itself (`plain`), the matrix its transpose views (`transposed`), or a
    contiguous copy where neither is dense, aligned and of whole 16-byte rows (the copy's
    own rows may still be partial: the callers check the sizes they need)."""
    rows, cols = tensor.shape
    aligned = tensor.data_ptr() % _ALIGNMENT == 0
    if aligned and tensor.stride() == (cols, 1) and cols % VECTOR == 0:
        return tensor, plain
    if aligned and tensor.stride() == (1, rows) and rows % VECTOR == 0:
        return tensor.t(), transposed
    # A fresh allocation: contiguous() would hand back a misaligned contiguous view as is.
    return tensor.clone(memory_format=torch.contiguous_format), plain


@functools.lru_cache(maxsize=4096)
def _params(m: int, n: int, k: int, dtype: str, b_layout: str, a_layout: str) -> MatmulParams:
    return MatmulParams(m, n, k, dtype, b_layout, a_layout)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=4096)
def _launch(params: MatmulParams, device: int) -> Any:
    return matmul_launch(params, default_config_on(params, device), device)


def _check_operands(a: torch.Tensor, b: torch.Tensor) -> None:
    """What the operator itself needs of its operands (spio.functional's entries check more,
    with their arguments' names; this guards direct calls of torch.ops.spio.mm)."""
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(
            f"spio::mm takes an M x K and a K x N matrix, got shapes {tuple(a.shape)} and "
            f"{tuple(b.shape)}"
        )
    if a.dtype not in DTYPES or b.dtype != a.dtype:
        raise TypeError(
            f"spio::mm takes two float16 or two bfloat16 matrices, got {a.dtype} and {b.dtype}"
        )
    if b.device != a.device:
        raise ValueError(f"spio::mm's operands must share a device, got {a.device} and {b.device}")


def mm_cuda(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b on Spio's kernels: a (m x k) and b (k x n) CUDA tensors of one 16-bit dtype, any
    strides (see the module doc); the product is a new contiguous m x n tensor. The
    operands are not checked here, on the eager path's every call: its callers did."""
    m, k = a.shape
    n = b.shape[1]
    if m == 0 or n == 0 or k == 0:
        # Nothing for a kernel to do (MatmulParams sizes are >= 1): an empty sum is zero.
        return torch.zeros((m, n), device=a.device, dtype=a.dtype)
    a_matrix, a_layout = _layout(a, "mk", "km")
    b_matrix, b_layout = _layout(b, "kn", "nk")
    params = _params(m, n, k, DTYPES[a.dtype], b_layout, a_layout)
    c = torch.empty((m, n), device=a.device, dtype=a.dtype)
    _launch(params, a.get_device())(c, a_matrix, b_matrix)
    return c


@torch.library.custom_op("spio::mm", mutates_args=())
def mm_op(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b, float32 accumulation (CPU: fp32 torch, rounded to a's dtype)."""
    _check_operands(a, b)
    return (a.float() @ b.float()).to(a.dtype)


@mm_op.register_fake
def _(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a.new_empty((a.shape[0], b.shape[1]))


@mm_op.register_kernel("cuda")
def _(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    _check_operands(a, b)
    return mm_cuda(a, b)


def _mm_gradients(
    a: torch.Tensor, b: torch.Tensor, grad: torch.Tensor, needs: tuple[bool, ...], mm: Any
) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """(grad_a, grad_b) of a @ b, each through `mm` on views, None where not needed."""
    # Dense, so that grad.t() reaches the kernels as the K x M A it views, whatever M (an
    # expanded gradient, as sum().backward() hands in, has zero strides).
    grad = grad.to(a.dtype).contiguous()
    grad_a = mm(grad, b.t()) if needs[0] else None
    grad_b = mm(a.t(), grad) if needs[1] else None
    return grad_a, grad_b


def _setup_context(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
    a, b = inputs
    ctx.save_for_backward(a, b)


def _backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    a, b = ctx.saved_tensors
    return _mm_gradients(a, b, grad, ctx.needs_input_grad, mm_op)


mm_op.register_autograd(_backward, setup_context=_setup_context)


class _MmFunction(torch.autograd.Function):
    """spio::mm's forward and gradients without the operator (eager CUDA; see runs_eagerly)."""

    @staticmethod
    def forward(ctx: Any, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(a, b)
        return mm_cuda(a, b)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        a, b = ctx.saved_tensors
        # Through mm_eager again, so that a double backward sees Functions too.
        return _mm_gradients(a, b, grad, ctx.needs_input_grad, mm_eager)


def mm_eager(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b on CUDA without the operator: the Function only where a gradient is wanted."""
    if torch.is_grad_enabled() and (a.requires_grad or b.requires_grad):
        output: torch.Tensor = _MmFunction.apply(a, b)
        return output
    return mm_cuda(a, b)
