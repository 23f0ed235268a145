"""Matrix products on Spio's tensor-core matmul as PyTorch custom operators (torch.library).

spio::mm(a, b) -> a @ b and spio::addmm(bias, a, b) -> a @ b + bias (bias added to every row
in float32 in the kernels' epilogue, before the product rounds, as a linear layer's) for 2-D
fp16 or bf16 tensors. The kernels read A as M x K or K x M
and B as K x N or N x K, each dense row-major (spio-kernels' `MatmulParams` layouts), so a
transposed view reaches them as the matrix it views, with no copy: `a.t()` of a contiguous
K x M tensor is A in the K x M layout. That is what makes the gradients cheap, each of them
again an mm of views:

    grad_a = mm(grad, b.t())        grad_b = mm(a.t(), grad)        grad_bias = grad.sum(0)

and a linear layer's three products (forward `x @ w.t()`, `grad @ w`, `grad.t() @ x`) run
on the kernels as they are laid out. Any other strides, or a start off a 16-byte boundary,
are copied to a contiguous tensor first.

On CUDA the operators run the kernel of `default_config_on` for the shape and device (the
wgmma kernel on an H100 or H200, the mma.sync one elsewhere) on torch's current stream, so
it captures into CUDA graphs; on CPU it computes in fp32 with torch and rounds. Each
implementation, CPU, CUDA and fake, checks the operands first (_checks.check_product: what
the kernels compute, in spio.functional's words), so the paths take the same ones. In
eager mode on CUDA `mm` goes straight to the kernels through a torch.autograd.Function
instead of the operators (their Python dispatch costs the host tens of microseconds a
call); tracers (torch.compile, export, fake tensors) see the operators.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import torch
from spio.kernels.matmul import MatmulParams, default_config_on, matmul_launch
from spio.kernels.matmul._arrays import BIAS_ALIGNMENT
from spio.kernels.matmul.params import VECTOR
from torch.utils.flop_counter import register_flop_formula

from ._autocast import register_autocast_rule
from ._checks import DTYPES, check_product

#: 16 bytes: the kernels move rows as whole vectors from aligned addresses.
_ALIGNMENT = 16


def _dense_layout(
    shape: tuple[int, ...], stride: tuple[int, ...], plain: str, transposed: str
) -> str | None:
    """The layout name a 2-D operand of shape and stride reaches the kernels in: `plain`
    where it is dense row-major, `transposed` where its transpose is, each of whole 16-byte
    rows; None where neither."""
    rows, cols = shape
    if stride == (cols, 1) and cols % VECTOR == 0:
        return plain
    if stride == (1, rows) and rows % VECTOR == 0:
        return transposed
    return None


def _layout(tensor: torch.Tensor, plain: str, transposed: str) -> tuple[torch.Tensor, str]:
    """(the dense row-major matrix the kernels read, its layout name) for a 2-D operand:
    the tensor itself (`plain`), the matrix its transpose views (`transposed`), or, where
    neither is dense, aligned and of whole 16-byte rows, a copy: in the plain layout, or in
    the transposed one where only that one's rows are whole vectors (an A whose K is not a
    multiple of 8, whose M then is: check_product)."""
    layout = _dense_layout(tensor.shape, tensor.stride(), plain, transposed)
    if layout is not None and tensor.data_ptr() % _ALIGNMENT == 0:
        return (tensor, layout) if layout == plain else (tensor.t(), layout)
    # A fresh allocation: contiguous() would hand back a misaligned contiguous view as is.
    if _copy_layout(tensor.shape, plain, transposed) == transposed:
        return tensor.t().clone(memory_format=torch.contiguous_format), transposed
    return tensor.clone(memory_format=torch.contiguous_format), plain


def _copy_layout(shape: Sequence[int], plain: str, transposed: str) -> str:
    """The layout of an operand's copy (_layout): plain, or transposed where only that one's
    rows are whole vectors."""
    rows, cols = shape
    return transposed if cols % VECTOR and not rows % VECTOR else plain


def _bias_readable(bias: torch.Tensor) -> bool:
    """Whether the kernels read bias in place: dense, its pairs of elements 4-byte aligned."""
    return bool(bias.stride(0) == 1 and bias.data_ptr() % BIAS_ALIGNMENT == 0)


def _bias_vector(bias: torch.Tensor) -> torch.Tensor:
    """bias as the kernels read it: itself where they can (_bias_readable), else a copy."""
    if _bias_readable(bias):
        return bias
    return bias.clone(memory_format=torch.contiguous_format)


@functools.lru_cache(maxsize=4096)
def _params(
    m: int, n: int, k: int, dtype: str, b_layout: str, a_layout: str, bias: bool
) -> MatmulParams:
    return MatmulParams(m, n, k, dtype, b_layout, a_layout, bias)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=4096)
def product_launch(params: MatmulParams, device: int) -> Any:
    """The loaded kernel of the product params on CUDA device `device`, with the config
    default_config_on picks (compiled and loaded once; spio.torch.precompile prepares it
    ahead)."""
    return matmul_launch(params, default_config_on(params, device), device)


#: Each operand geometry's launch (see mm_cuda), or None where the operands need copies or
#: there is nothing to launch.
_PLANS: dict[tuple[Any, ...], Any] = {}
#: Geometries kept before the plans start over (a model of changing shapes makes new ones).
_MAX_PLANS = 4096
#: What _PLANS.get finds for a geometry not yet planned (None is a plan: "copy first").
_UNPLANNED = object()


def product_params(
    a_shape: Sequence[int],
    a_stride: Sequence[int],
    b_shape: Sequence[int],
    b_stride: Sequence[int],
    dtype: torch.dtype,
    with_bias: bool,
) -> MatmulParams | None:
    """The MatmulParams of the kernel a @ b (+ bias) runs for operands of these shapes and
    strides, from 16-byte boundaries: each operand read in place where it is dense
    (_dense_layout), else copied (_copy_layout); None where a size is 0."""
    m, k = a_shape
    n = b_shape[1]
    if 0 in (m, n, k):
        return None
    a_layout = _dense_layout(tuple(a_shape), tuple(a_stride), "mk", "km")
    b_layout = _dense_layout(tuple(b_shape), tuple(b_stride), "kn", "nk")
    a_layout = a_layout or _copy_layout(a_shape, "mk", "km")
    b_layout = b_layout or _copy_layout(b_shape, "kn", "nk")
    return _params(m, n, k, DTYPES[dtype], b_layout, a_layout, with_bias)


def _plan(a: torch.Tensor, b: torch.Tensor, with_bias: bool) -> Any:
    """The launch of a @ b (+ bias) for operands of a's and b's shapes and strides, reading
    them in place; None where either needs a copy or a size is 0."""
    a_dense = _dense_layout(a.shape, a.stride(), "mk", "km")
    b_dense = _dense_layout(b.shape, b.stride(), "kn", "nk")
    params = product_params(a.shape, a.stride(), b.shape, b.stride(), a.dtype, with_bias)
    if a_dense is None or b_dense is None or params is None:
        return None
    return product_launch(params, a.get_device())


def mm_cuda(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """a @ b (+ bias) on Spio's kernels: a (m x k) and b (k x n) CUDA tensors of one 16-bit
    dtype, any strides (see the module doc), bias n of the same; the product is a new
    contiguous m x n tensor. The operands are not checked here, on the eager path's every
    call: its callers did.

    The host's cost is most of a small product's time, so each operand geometry's launch
    is resolved once (_plan) and found again by one dictionary look-up; the kernels take
    the operands' data pointers, transposed or not, so nothing else is made per call. (The
    operands outlive the launch: the caller holds them while the stream runs it, as torch's
    own ops' callers do.)"""
    key = (a.shape, a.stride(), b.shape, b.stride(), a.dtype, a.device, bias is None)
    launch = _PLANS.get(key, _UNPLANNED)
    if launch is _UNPLANNED:
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()
        launch = _PLANS[key] = _plan(a, b, bias is not None)
    a_pointer = a.data_ptr()
    b_pointer = b.data_ptr()
    if (
        launch is not None
        and a_pointer % _ALIGNMENT == 0
        and b_pointer % _ALIGNMENT == 0
        and (bias is None or _bias_readable(bias))
    ):
        c = torch.empty((a.shape[0], b.shape[1]), device=a.device, dtype=a.dtype)
        # (The kernels take the operands' addresses: the pointers read as the tensors would.)
        launch(c, a_pointer, b_pointer, bias=bias)
        return c
    return _mm_copied(a, b, bias)


def _mm_copied(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """mm_cuda where an operand needs a copy first (or a size is 0)."""
    m, k = a.shape
    n = b.shape[1]
    if m == 0 or n == 0 or k == 0:
        # Nothing for a kernel to do (MatmulParams sizes are >= 1): an empty sum is zero.
        zeros = torch.zeros((m, n), device=a.device, dtype=a.dtype)
        return zeros if bias is None else zeros + bias
    a_matrix, a_layout = _layout(a, "mk", "km")
    b_matrix, b_layout = _layout(b, "kn", "nk")
    params = _params(m, n, k, DTYPES[a.dtype], b_layout, a_layout, bias is not None)
    c = torch.empty((m, n), device=a.device, dtype=a.dtype)
    vector = None if bias is None else _bias_vector(bias)
    product_launch(params, a.get_device())(c, a_matrix, b_matrix, bias=vector)
    return c


@torch.library.custom_op("spio::mm", mutates_args=())
def mm_op(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b, float32 accumulation (CPU: fp32 torch, rounded to a's dtype)."""
    check_product(a, b)
    return (a.float() @ b.float()).to(a.dtype)


@mm_op.register_fake
def _(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    check_product(a, b)
    return a.new_empty((a.shape[0], b.shape[1]))


@mm_op.register_kernel("cuda")
def mm_op_cuda(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    check_product(a, b)
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


@torch.library.custom_op("spio::addmm", mutates_args=())
def addmm_op(bias: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b + bias (bias added to every row before the result rounds), float32
    accumulation (CPU: fp32 torch, rounded to a's dtype)."""
    check_product(a, b, bias)
    return (a.float() @ b.float() + bias.float()).to(a.dtype)


@addmm_op.register_fake
def _(bias: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    check_product(a, b, bias)
    return a.new_empty((a.shape[0], b.shape[1]))


@addmm_op.register_kernel("cuda")
def addmm_op_cuda(bias: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    check_product(a, b, bias)
    return mm_cuda(a, b, bias)


def _bias_gradient(grad: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """The bias's gradient: grad's columns summed (torch accumulates 16-bit sums in f32)."""
    return grad.sum(0).to(bias.dtype)


def _addmm_setup_context(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
    bias, a, b = inputs
    ctx.save_for_backward(bias, a, b)


def _addmm_backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
    bias, a, b = ctx.saved_tensors
    needs_bias, *needs = ctx.needs_input_grad
    grad_bias = _bias_gradient(grad, bias) if needs_bias else None
    return (grad_bias, *_mm_gradients(a, b, grad, tuple(needs), mm_op))


addmm_op.register_autograd(_addmm_backward, setup_context=_addmm_setup_context)


class _MmFunction(torch.autograd.Function):
    """spio::mm's and spio::addmm's forward and gradients without the operators (eager CUDA;
    see runs_eagerly)."""

    @staticmethod
    def forward(
        ctx: Any, a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None
    ) -> torch.Tensor:
        ctx.save_for_backward(a, b, bias)
        return mm_cuda(a, b, bias)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        a, b, bias = ctx.saved_tensors
        needs_a, needs_b, needs_bias = ctx.needs_input_grad
        # Through mm_eager again, so that a double backward sees Functions too.
        grads = _mm_gradients(a, b, grad, (needs_a, needs_b), mm_eager)
        return (*grads, _bias_gradient(grad, bias) if needs_bias else None)


def mm_eager(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """a @ b (+ bias) on CUDA without the operators: the Function only where a gradient is
    wanted."""
    wants_grad = a.requires_grad or b.requires_grad or (bias is not None and bias.requires_grad)
    if wants_grad and torch.is_grad_enabled():
        output: torch.Tensor = _MmFunction.apply(a, b, bias)
        return output
    return mm_cuda(a, b, bias)


# ---- autocast and FLOP counts ----------------------------------------------------------

# Under torch.autocast the operands (and addmm's bias) run in the region's dtype, as torch's
# mm, addmm and linear do; spio.functional.matmul and linear cast them themselves (on CUDA in
# eager mode they skip the operators), this is the rule of a direct call.
register_autocast_rule("mm", cast_arguments=(0, 1))
register_autocast_rule("addmm", cast_arguments=(0, 1, 2))


def _product_flops(a: Sequence[int], b: Sequence[int]) -> int:
    """An M x K by K x N product's multiply-adds counted twice, as torch.utils.flop_counter
    counts torch.mm's."""
    m, k = a
    return 2 * m * k * b[1]


@register_flop_formula(torch.ops.spio.mm)
def _(a: Any, b: Any, **_: Any) -> int:
    return _product_flops(a, b)


@register_flop_formula(torch.ops.spio.addmm)
def _(bias: Any, a: Any, b: Any, **_: Any) -> int:
    return _product_flops(a, b)
