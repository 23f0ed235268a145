"""The torch.library operators called directly refuse what spio.functional's entries refuse,
with the same messages, in every implementation: CPU, fake (meta tensors) and CUDA (called
here on CPU tensors: the check comes before any CUDA work)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import spio.torch  # noqa: F401  (registers the operators)
from spio.torch import _conv2d_gw8, _matmul

_H = torch.float16


def _x(n: int = 2, c: int = 16, h: int = 9, w: int = 9, dtype: torch.dtype = _H) -> torch.Tensor:
    return torch.randn(n, c, h, w).to(dtype).contiguous(memory_format=torch.channels_last)


def _w(c: int = 16, group: int = 8, r: int = 3, s: int = 3) -> torch.Tensor:
    return torch.randn(c, group, r, s).to(_H)


def _m(rows: int, cols: int, dtype: torch.dtype = _H) -> torch.Tensor:
    return torch.randn(rows, cols).to(dtype)


#: (operator, its CUDA implementation, arguments (made on call), error, message)
BAD_CALLS: list[tuple[str, Callable[..., Any], Callable[[], tuple[Any, ...]], type, str]] = [
    # The forward: the weight's channels, the padding's form and range, the groups, dtypes.
    (
        "conv2d_gw8",
        _conv2d_gw8.conv2d_gw8_op_cuda,
        lambda: (_x(), _w(c=32), None, [1, 1, 1, 1]),
        ValueError,
        r"input has 16 channels, but weight of shape \(32, 8, 3, 3\) is for 32",
    ),
    (
        "conv2d_gw8",
        _conv2d_gw8.conv2d_gw8_op_cuda,
        lambda: (_x(), _w(), None, [1, 1]),
        ValueError,
        r"padding must be 4 ints \(top, bottom, left, right\), got \[1, 1\]",
    ),
    (
        "conv2d_gw8",
        _conv2d_gw8.conv2d_gw8_op_cuda,
        lambda: (_x(), _w(), None, [5, 5, 5, 5]),
        ValueError,
        r"padding top must be 0 to 2 \(below the kernel's height 3\), got 5",
    ),
    (
        "conv2d_gw8",
        _conv2d_gw8.conv2d_gw8_op_cuda,
        lambda: (_x(), _w(group=4), None, [1, 1, 1, 1]),
        ValueError,
        r"weight must be 16 x 8 x R x S .* got shape \(16, 4, 3, 3\)",
    ),
    (
        "conv2d_gw8",
        _conv2d_gw8.conv2d_gw8_op_cuda,
        lambda: (_x(), _w(r=8), None, [0, 0, 0, 0]),
        ValueError,
        "weight's kernel size must be 1 to 7 in each dimension, got 8 x 3",
    ),
    (
        "conv2d_gw8",
        _conv2d_gw8.conv2d_gw8_op_cuda,
        lambda: (_x(dtype=torch.float32), _w().float(), None, [1, 1, 1, 1]),
        TypeError,
        r"input must be float16 or bfloat16 .* got torch\.float32",
    ),
    (
        "conv2d_gw8",
        _conv2d_gw8.conv2d_gw8_op_cuda,
        lambda: (_x(), _w(), torch.zeros(8), [1, 1, 1, 1]),
        ValueError,
        r"bias must have shape \(16,\), got \(8,\)",
    ),
    (
        "conv2d_gw8",
        _conv2d_gw8.conv2d_gw8_op_cuda,
        lambda: (_x(h=2, w=6), _w(), None, [0, 0, 0, 0]),
        ValueError,
        "input of 2 x 6 with padding .* and a 3 x 3 kernel gives an empty output",
    ),
    # The input gradient: grad_output must be the output of input_size's layer.
    (
        "conv2d_gw8_input_grad",
        _conv2d_gw8.conv2d_gw8_input_grad_op_cuda,
        lambda: (_x(h=7, w=7), _w(), [2, 16, 9, 9], [1, 1, 1, 1]),
        ValueError,
        r"grad_output must have the output's shape \(2, 16, 9, 9\) .* got \(2, 16, 7, 7\)",
    ),
    (
        "conv2d_gw8_input_grad",
        _conv2d_gw8.conv2d_gw8_input_grad_op_cuda,
        lambda: (_x(), _w(), [2, 16, 9], [1, 1, 1, 1]),
        ValueError,
        r"input_size must be 4 ints \(N, C, H, W\), got \[2, 16, 9\]",
    ),
    (
        "conv2d_gw8_input_grad",
        _conv2d_gw8.conv2d_gw8_input_grad_op_cuda,
        lambda: (_x(), _w(), [2, 24, 9, 9], [1, 1, 1, 1]),
        ValueError,
        "input_size's channels must be grad_output's 16",
    ),
    (
        "conv2d_gw8_input_grad",
        _conv2d_gw8.conv2d_gw8_input_grad_op_cuda,
        lambda: (_x(), _w().bfloat16(), [2, 16, 9, 9], [1, 1, 1, 1]),
        TypeError,
        r"weight must have grad_output's dtype torch\.float16, got torch\.bfloat16",
    ),
    # The weight gradients: kernel_size's form and range, grad_output's shape.
    (
        "conv2d_gw8_weight_grad",
        _conv2d_gw8.conv2d_gw8_weight_grad_op_cuda,
        lambda: (_x(), _x(), [5, 5], [1, 1, 1, 1]),
        ValueError,
        r"grad_output must have the output's shape \(2, 16, 7, 7\) .* got \(2, 16, 9, 9\)",
    ),
    (
        "conv2d_gw8_weight_grad",
        _conv2d_gw8.conv2d_gw8_weight_grad_op_cuda,
        lambda: (_x(), _x(), [3], [1, 1, 1, 1]),
        ValueError,
        r"kernel_size must be 2 ints \(R, S\), got \[3\]",
    ),
    (
        "conv2d_gw8_weight_bias_grad",
        _conv2d_gw8.conv2d_gw8_weight_bias_grad_op_cuda,
        lambda: (_x(), _x(), [8, 3], [0, 0, 0, 0]),
        ValueError,
        "kernel_size must be 1 to 7 in each dimension, got 8 x 3",
    ),
    (
        "conv2d_gw8_weight_bias_grad",
        _conv2d_gw8.conv2d_gw8_weight_bias_grad_op_cuda,
        lambda: (_x(c=12), _x(c=12), [3, 3], [1, 1, 1, 1]),
        ValueError,
        "input must have a multiple of 8 channels .* got 12",
    ),
    # The products: shapes, K where M is no multiple of 8 either, N, dtypes, the bias.
    (
        "mm",
        _matmul.mm_op_cuda,
        lambda: (_m(4, 12), _m(16, 8)),
        ValueError,
        r"a's columns must match b's rows: a is \(4, 12\), b is \(16, 8\)",
    ),
    (
        "mm",
        _matmul.mm_op_cuda,
        lambda: (_m(4, 12), _m(12, 8)),
        ValueError,
        r"K \(a's columns, b's rows\) must be a multiple of 8 unless M .* got a \(4, 12\)",
    ),
    (
        "mm",
        _matmul.mm_op_cuda,
        lambda: (_m(4, 8), _m(8, 12)),
        ValueError,
        r"N \(b's columns; b \(8, 12\)\) must be a multiple of 8",
    ),
    (
        "mm",
        _matmul.mm_op_cuda,
        lambda: (_m(8, 8), _m(8, 8, torch.bfloat16)),
        TypeError,
        r"b must have a's dtype torch\.float16, got torch\.bfloat16",
    ),
    (
        "mm",
        _matmul.mm_op_cuda,
        lambda: (_m(8, 8, torch.float32), _m(8, 8, torch.float32)),
        TypeError,
        r"a must be float16 or bfloat16 .* got torch\.float32",
    ),
    (
        "addmm",
        _matmul.addmm_op_cuda,
        lambda: (torch.zeros(4, dtype=_H), _m(8, 8), _m(8, 8)),
        ValueError,
        r"bias must have shape \(8,\), got \(4,\)",
    ),
    (
        "addmm",
        _matmul.addmm_op_cuda,
        lambda: (torch.zeros(8), _m(8, 8), _m(8, 8)),
        TypeError,
        r"bias must have a's dtype torch\.float16, got torch\.float32",
    ),
]

_IDS = [f"{case[0]}-{i}" for i, case in enumerate(BAD_CALLS)]


def _to(device: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(a.to(device) if isinstance(a, torch.Tensor) else a for a in args)


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize(("op", "cuda", "args", "error", "match"), BAD_CALLS, ids=_IDS)
def test_operators_refuse_bad_arguments_on_cpu_and_in_their_fakes(
    op: str, cuda: Any, args: Any, error: type, match: str, device: str
) -> None:
    with pytest.raises(error, match=match):
        getattr(torch.ops.spio, op)(*_to(device, args()))


@pytest.mark.parametrize(("op", "cuda", "args", "error", "match"), BAD_CALLS, ids=_IDS)
def test_operators_cuda_implementations_run_the_same_checks(
    op: str, cuda: Any, args: Any, error: type, match: str
) -> None:
    with pytest.raises(error, match=match):
        cuda(*args())


def test_the_forward_fake_and_cpu_agree_on_the_output_shape() -> None:
    """The audit's case: 32 output channels from a 16-channel input once passed on CPU (32
    channels out) and in the fake (16); a valid layer's shapes agree."""
    x, w = _x(h=9, w=7), _w(r=3, s=5)
    padding = [1, 0, 2, 1]
    cpu = torch.ops.spio.conv2d_gw8(x, w, None, padding)
    fake = torch.ops.spio.conv2d_gw8(x.to("meta"), w.to("meta"), None, padding)
    assert cpu.shape == fake.shape == (2, 16, 8, 6)
    assert fake.is_contiguous(memory_format=torch.channels_last)


def test_a_product_of_any_k_is_taken_where_m_is_a_multiple_of_8() -> None:
    """A weight gradient's product grad.t() @ input has K = the rows: the operators take it
    on every path (CPU here; the CUDA path reads A as K x M, see the layout tests)."""
    a, b = _m(16, 13), _m(13, 8)
    assert torch.equal(torch.ops.spio.mm(a, b), (a.float() @ b.float()).half())
    assert torch.ops.spio.mm(a.to("meta"), b.to("meta")).shape == (16, 8)
