"""spio.functional.linear and matmul on CUDA (Spio's matmul kernels): results and gradients
against fp32 torch, the layouts the kernels read (no copies), the eager path, the caller's
stream and CUDA-graph capture."""

from __future__ import annotations

import pytest
import torch
from test_linear import LINEAR_CASES, check_linear, check_matmul_views

import spio.functional as spio_f
from spio.torch import _matmul

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]

#: The CPU cases, and layers of a transformer's and a ConvNet head's sizes: more tiles than
#: SMs, rows that are not whole tiles.
CUDA_LINEAR_CASES = [
    *LINEAR_CASES,
    ((4, 77), (512, 1536), torch.float16, True),
    ((1000,), (1024, 264), torch.bfloat16, True),
]


@pytest.mark.parametrize(("batch", "features", "dtype", "bias"), CUDA_LINEAR_CASES, ids=str)
def test_linear_matches_fp32_forward_and_backward_on_cuda(
    batch: tuple[int, ...], features: tuple[int, int], dtype: torch.dtype, bias: bool
) -> None:
    check_linear("cuda", batch, features, dtype, bias)


def test_matmul_takes_transposed_views_on_cuda() -> None:
    check_matmul_views("cuda")


def test_operator_passes_torch_library_opcheck_on_cuda() -> None:
    a = torch.randn(40, 16, device="cuda").half().requires_grad_()
    b = torch.randn(16, 24, device="cuda").half().requires_grad_()
    torch.library.opcheck(torch.ops.spio.mm.default, (a, b))
    bias = torch.randn(24, device="cuda").half().requires_grad_()
    torch.library.opcheck(torch.ops.spio.addmm.default, (bias, a, b))


def test_a_bias_off_its_alignment_is_copied_and_still_added() -> None:
    x = torch.randn(40, 64, device="cuda").half()
    w = torch.randn(24, 64, device="cuda").half()
    bias = torch.randn(25, device="cuda").half()[1:]  # 2 bytes past an aligned start
    expected = (x.float() @ w.float().t() + bias.float()).half()
    torch.testing.assert_close(spio_f.linear(x, w, bias), expected, rtol=2e-3, atol=2e-2)


def test_operands_off_their_alignment_take_the_copying_path_and_the_plan_stays() -> None:
    """One geometry, aligned and not: the plan reads aligned operands in place, and the
    same shapes and strides off a 16-byte boundary are copied first, both right."""
    w = torch.randn(24, 64, device="cuda").half()
    storage = torch.randn(40 * 64 + 8, device="cuda").half()
    aligned, shifted = storage[:2560].view(40, 64), storage[1:2561].view(40, 64)
    for x in (aligned, shifted, aligned):
        expected = (x.float() @ w.float().t()).half()
        torch.testing.assert_close(spio_f.linear(x, w), expected, rtol=2e-3, atol=2e-2)
    key = (aligned.shape, aligned.stride(), (64, 24), (1, 64), torch.float16, w.device, True)
    assert _matmul._PLANS[key] is not None


def test_a_linear_layer_hands_every_operand_over_without_a_copy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The forward reads the weight as N x K, the input gradient as K x N, the weight
    gradient grad_output as K x M: the layouts the kernels take, so nothing is copied."""
    seen = []
    make = _matmul._params.__wrapped__

    def record(*key: object) -> object:
        seen.append(key[3:])  # (dtype, b_layout, a_layout, bias)
        return make(*key)

    monkeypatch.setattr(_matmul, "_params", record)
    x = torch.randn(52, 64, device="cuda").half().requires_grad_()
    w = torch.randn(32, 64, device="cuda").half().requires_grad_()
    b = torch.randn(32, device="cuda").half().requires_grad_()
    for bias in (None, b):
        seen.clear()
        _matmul._PLANS.clear()  # (each geometry's params are made once, then its plan is found)
        y = spio_f.linear(x, w, bias)
        # The eager path, straight (a 2-D input needs no view to its leading dimensions).
        assert type(y.grad_fn).__name__ == "_MmFunctionBackward"
        y.backward(torch.randn_like(y))
        # The bias, where there is one, is added in the forward product's epilogue.
        forward = ("float16", "nk", "mk", bias is not None)
        assert seen == [forward, ("float16", "kn", "mk", False), ("float16", "kn", "km", False)]


def test_runs_on_the_current_stream_and_captures_into_a_cuda_graph() -> None:
    x = torch.randn(64, 128, device="cuda").half()
    w = torch.randn(256, 128, device="cuda").half()
    expected = spio_f.linear(x, w)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        on_side = spio_f.linear(x, w)
    torch.cuda.current_stream().wait_stream(side)
    torch.testing.assert_close(on_side, expected, atol=0, rtol=0)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = spio_f.linear(x, w)
    x.copy_(torch.randn_like(x))
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(captured, spio_f.linear(x, w), atol=0, rtol=0)


def test_compiles_with_torch_compile_on_cuda() -> None:
    x = torch.randn(24, 64, device="cuda").half().requires_grad_()
    w = torch.randn(16, 64, device="cuda").half().requires_grad_()

    def step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return spio_f.linear(x, w).float().square().sum()

    compiled = torch.compile(step, backend="aot_eager", fullgraph=True)
    loss = compiled(x, w)
    loss.backward()
    torch.testing.assert_close(loss, step(x.detach(), w.detach()), rtol=1e-3, atol=1e-3)
    assert w.grad is not None
