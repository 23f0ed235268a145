"""spio.functional.conv2d_gw8 on CUDA (Spio's kernels): results and gradients against fp32
conv2d, the caller's stream, and CUDA-graph capture."""

from __future__ import annotations

import pytest
import torch
from conv2d_cases import CASES, Case
from test_conv2d_gw8 import (
    check_operators,
    run_case,
    run_gradient_penalty,
    run_third_derivative,
)

import spio.functional as spio_f

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_matches_fp32_conv2d_forward_and_backward_on_cuda(case: Case) -> None:
    run_case(case, "cuda")


def test_operators_pass_torch_library_opcheck_on_cuda() -> None:
    check_operators("cuda")


def test_runs_on_the_current_stream_and_captures_into_a_cuda_graph() -> None:
    case = Case(4, 64, 16, 16, 3, 3, (1, 1, 1, 1), torch.float16, True)
    x, weight, bias = (t.detach() if t is not None else None for t in case.make("cuda"))
    expected = spio_f.conv2d_gw8(x, weight, bias, padding=1)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        on_side = spio_f.conv2d_gw8(x, weight, bias, padding=1)
        for _ in range(2):  # warm-up before capture (compiles and loads the kernels)
            spio_f.conv2d_gw8(x, weight, bias, padding=1)
    torch.cuda.current_stream().wait_stream(side)
    torch.testing.assert_close(on_side, expected, atol=0, rtol=0)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = spio_f.conv2d_gw8(x, weight, bias, padding=1)
    x.mul_(2)
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(
        captured, spio_f.conv2d_gw8(x, weight, bias, padding=1), atol=0, rtol=0
    )


def test_a_view_off_the_16_byte_boundary_gives_the_same_result() -> None:
    case = Case(2, 16, 8, 8, 1, 1, (0, 0, 0, 0), torch.bfloat16, False)
    x, weight, _ = (t.detach() if t is not None else None for t in case.make("cuda"))
    storage = torch.empty(x.numel() + 1, dtype=x.dtype, device="cuda")
    shifted = storage[1:].view(2, 8, 8, 16).permute(0, 3, 1, 2)  # channels_last, 2 bytes off
    shifted.copy_(x)
    assert shifted.data_ptr() % 16 == 2
    expected = spio_f.conv2d_gw8(x, weight)
    torch.testing.assert_close(spio_f.conv2d_gw8(shifted, weight), expected, atol=0, rtol=0)


def test_a_converted_model_trains_under_autocast_like_the_original() -> None:
    from torch import nn

    from spio.torch import convert

    torch.manual_seed(0)
    original = nn.Sequential(
        nn.Conv2d(32, 32, 3, padding=1, groups=4), nn.ReLU(), nn.Conv2d(32, 32, 1, groups=4)
    ).cuda()
    converted = nn.Sequential(*(m for m in original))  # the same layers
    reference = [p.detach().clone() for p in original.parameters()]
    x = torch.randn(8, 32, 20, 20, device="cuda").contiguous(memory_format=torch.channels_last)
    with torch.autocast("cuda", dtype=torch.float16):
        expected = original(x).float().square().mean()
    expected.backward()
    grads = [p.grad.detach().clone() for p in original.parameters()]  # type: ignore[union-attr]
    original.zero_grad()
    assert convert(converted) == ["0", "2"]
    for parameter, value in zip(converted.parameters(), reference, strict=True):
        assert torch.equal(parameter, value)
    with torch.autocast("cuda", dtype=torch.float16):
        loss = converted(x).float().square().mean()
    loss.backward()
    torch.testing.assert_close(loss, expected, atol=1e-3, rtol=1e-2)
    for parameter, grad in zip(converted.parameters(), grads, strict=True):
        assert parameter.grad is not None
        torch.testing.assert_close(parameter.grad, grad, atol=1e-3, rtol=2e-2)


def test_a_module_reads_its_weight_in_place_and_gets_its_gradient_in_the_same_layout() -> None:
    from spio.torch import Conv2dGw8
    from spio.torch._layout import spio_weight

    torch.manual_seed(1)
    module = Conv2dGw8(32, 3, padding=1, device="cuda", dtype=torch.float16)
    assert spio_weight(module.weight).data_ptr() == module.weight.data_ptr()  # no copy
    x = torch.randn(4, 32, 12, 10, device="cuda", dtype=torch.float16)
    x = x.contiguous(memory_format=torch.channels_last).requires_grad_()
    module(x).float().square().sum().backward()
    grad = module.weight.grad
    assert grad is not None
    assert grad.is_contiguous(memory_format=torch.channels_last)
    reference = module.weight.detach().float().requires_grad_()
    output = torch.nn.functional.conv2d(
        x.detach().float(), reference, module.bias.detach().float(), padding=1, groups=4
    )
    output.square().sum().backward()
    assert reference.grad is not None
    torch.testing.assert_close(grad.float(), reference.grad, atol=0.5, rtol=2e-2)


def _operator_forward_backward(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, padding: list[int]
) -> list[torch.Tensor]:
    """Output and gradients through the operators (the path tracers take)."""
    from spio.torch._conv2d_gw8 import conv2d_gw8_op

    leaves = [t.detach().requires_grad_() for t in (x, weight, bias) if t is not None]
    output = conv2d_gw8_op(leaves[0], leaves[1], leaves[2] if bias is not None else None, padding)
    output.float().square().sum().backward()
    return [output.detach(), *(t.grad for t in leaves)]  # type: ignore[misc]


# The eager path gives a weight in channels_last memory (Spio's layout) its gradient from the
# reduction in the weight's dtype, each f32 sum rounded once, and a contiguous weight the f32
# sums cast; the operators always take the reduction (a channels_last gradient): the same bits.
@pytest.mark.parametrize("weight_format", [torch.contiguous_format, torch.channels_last])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_the_eager_path_equals_the_operators_bit_for_bit(
    case: Case, weight_format: torch.memory_format
) -> None:
    from spio.torch._eager import runs_eagerly

    x, weight, bias = (t.detach() if t is not None else None for t in case.make("cuda"))
    weight = weight.contiguous(memory_format=weight_format)
    assert runs_eagerly(x, weight, bias)
    leaves = [t.clone().requires_grad_() for t in (x, weight, bias) if t is not None]
    output = spio_f.conv2d_gw8(
        leaves[0], leaves[1], leaves[2] if bias is not None else None, padding=case.padding
    )
    output.float().square().sum().backward()
    eager = [output.detach(), *(t.grad for t in leaves)]
    expected = _operator_forward_backward(x, weight, bias, list(case.padding))
    for got, want in zip(eager, expected, strict=True):
        torch.testing.assert_close(got, want, atol=0, rtol=0)


def test_tracers_and_subclasses_take_the_operators() -> None:
    from torch._subclasses.fake_tensor import FakeTensorMode

    from spio.torch._eager import runs_eagerly

    x = torch.randn(2, 16, 8, 8, device="cuda", dtype=torch.float16)
    weight = torch.randn(16, 8, 3, 3, device="cuda", dtype=torch.float16)
    assert runs_eagerly(x, torch.nn.Parameter(weight), None)
    assert not runs_eagerly(x.cpu(), weight.cpu(), None)

    class Tagged(torch.Tensor):
        pass

    assert not runs_eagerly(x.as_subclass(Tagged), weight, None)
    with FakeTensorMode() as mode:
        fake = mode.from_tensor(x)
        assert not runs_eagerly(fake, mode.from_tensor(weight), None)
        assert spio_f.conv2d_gw8(fake, mode.from_tensor(weight), padding=1).shape == x.shape


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradient_penalty_matches_fp32_conv2d_on_cuda(case: Case) -> None:
    # The eager path's backward with create_graph goes through the operators.
    run_gradient_penalty(case, "cuda")


def test_third_derivative_matches_fp32_conv2d_on_cuda() -> None:
    run_third_derivative("cuda")


def test_a_graph_building_backward_runs_the_eager_passes() -> None:
    """create_graph's gradients come from the eager path's Functions (_eager_grads), not
    the operators (whose host cost is about 50 us a call)."""
    x, weight, bias = Case(2, 16, 8, 8, 3, 3, (1, 1, 1, 1), torch.float16, True).make("cuda")
    output = spio_f.conv2d_gw8(x, weight, bias, padding=1)
    loss = output.float().square().sum()
    grad_x, grad_w, grad_b = torch.autograd.grad(loss, (x, weight, bias), create_graph=True)
    assert type(grad_x.grad_fn).__name__ == "_InputGradBackward"
    assert type(grad_w.grad_fn).__name__ == "_WeightGradBackward"
    assert grad_b.grad_fn is not None


def test_autotuned_configs_train_like_fp32_conv2d(monkeypatch: pytest.MonkeyPatch) -> None:
    """SPIO_CONFIG_SELECTION=autotune: each pass's first call times the model's shortlist on
    the device (where a model ships for the GPU), and the result is as correct as ever."""
    from spio.kernels.conv2d_gw8 import Conv2dGw8Params
    from spio.perfmodel import choose_config, shipped_model

    monkeypatch.setenv("SPIO_CONFIG_SELECTION", "autotune")
    case = Case(6, 64, 12, 20, 3, 3, (1, 1, 1, 1), torch.float16, True)  # a layer of its own
    run_case(case, "cuda")
    gpu = torch.cuda.get_device_name()
    for pass_name, has_bias in (("fprop", True), ("dgrad", False), ("wgrad", False)):
        params = Conv2dGw8Params.make(6, 64, 12, 20, padding=1, has_bias=has_bias)
        expected = "autotune" if shipped_model(pass_name, gpu) is not None else "heuristic"
        assert choose_config(pass_name, params).source == expected, pass_name


def test_autotuning_refuses_to_start_inside_cuda_graph_capture(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SPIO_CONFIG_SELECTION", "autotune")
    case = Case(5, 64, 12, 20, 3, 3, (1, 1, 1, 1), torch.float16, False)  # a layer of its own
    x, weight, _ = (t.detach() if t is not None else None for t in case.make("cuda"))
    refused = torch.cuda.CUDAGraph()
    with (
        pytest.raises(RuntimeError, match="run the model once before capturing"),
        torch.cuda.graph(refused),
    ):
        spio_f.conv2d_gw8(x, weight, padding=1)
    torch.cuda.synchronize()
    # Outside capture the same layer tunes, runs, and then captures.
    expected = spio_f.conv2d_gw8(x, weight, padding=1)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = spio_f.conv2d_gw8(x, weight, padding=1)
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(captured, expected, atol=0, rtol=0)


@pytest.fixture
def nondeterministic_wgrad():  # type: ignore[no-untyped-def]
    import spio.torch

    spio.torch.set_wgrad_deterministic(False)
    yield
    spio.torch.set_wgrad_deterministic(True)


@pytest.mark.parametrize("case", [c for c in CASES if c.c >= 64][:4], ids=str)
def test_nondeterministic_wgrad_trains_like_fp32_conv2d(
    case: Case, nondeterministic_wgrad: None
) -> None:
    """set_wgrad_deterministic(False): the weight gradients from atomic sums where they pay,
    as close to fp32 conv2d's as ever (bias and weight layouts as the cases give them)."""
    run_case(case, "cuda")


def test_deterministic_algorithms_keep_wgrad_deterministic(nondeterministic_wgrad: None) -> None:
    """torch.use_deterministic_algorithms(True) overrides set_wgrad_deterministic(False): the
    weight gradient is the deterministic launch's, bit for bit."""
    import spio.torch

    case = Case(32, 64, 64, 64, 3, 3, (1, 1, 1, 1), torch.float16, False)
    x, weight, _ = case.make("cuda")

    def weight_grad() -> torch.Tensor:
        (grad,) = torch.autograd.grad(spio_f.conv2d_gw8(x, weight, padding=1).sum(), weight)
        return grad

    before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        assert spio.torch.wgrad_is_deterministic()
        first = weight_grad()
        assert torch.equal(weight_grad(), first)
    finally:
        torch.use_deterministic_algorithms(before)
    spio.torch.set_wgrad_deterministic(True)
    assert torch.equal(weight_grad(), first)
