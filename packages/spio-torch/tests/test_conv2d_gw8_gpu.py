"""spio.functional.conv2d_gw8 on CUDA (Spio's kernels): results and gradients against fp32
conv2d, the caller's stream, and CUDA-graph capture."""

from __future__ import annotations

import pytest
import torch
from conv2d_cases import CASES, Case
from test_conv2d_gw8 import check_operators, run_case

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
