"""Passes launched back to back with programmatic dependent launch (the default) wait for
each other: each reads what the previous one wrote and overwrites what it read, and the
results are bit for bit those of the same passes run one at a time in plain stream order."""

import pytest
from gw8_cases import uniform

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    conv2d_gw8_dgrad,
    conv2d_gw8_fprop,
    conv2d_gw8_wgrad,
)

pytestmark = pytest.mark.gpu


def _chain(params: Conv2dGw8Params, pdl: bool, graph: bool = False) -> list:
    """fprop, wgrad, dgrad into the input wgrad just read, fprop of that: every pass depends
    on the one before it (read after write) and dgrad also writes what wgrad reads. graph:
    captured into a CUDA graph (after a warm-up run) and replayed once on fresh inputs."""
    import torch

    x = uniform(params.input_shape, params, 0)
    w = uniform(params.weight_shape, params, 1) / 8
    y = torch.empty(params.output_shape, device="cuda", dtype=x.dtype)
    z = torch.empty_like(y)
    grad_w = torch.empty(params.weight_shape, device="cuda", dtype=torch.float32)
    steps = [
        lambda: conv2d_gw8_fprop(y, x, w, None, params, pdl=pdl),
        lambda: conv2d_gw8_wgrad(grad_w, x, y, params, pdl=pdl),
        lambda: conv2d_gw8_dgrad(x, y, w, params, pdl=pdl),
        lambda: conv2d_gw8_fprop(z, x, w, None, params, pdl=pdl),
    ]
    if graph:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for step in steps:  # compiles, loads and plans outside the capture
                step()
        torch.cuda.current_stream().wait_stream(side)
        captured = torch.cuda.CUDAGraph()
        with torch.cuda.graph(captured):
            for step in steps:
                step()
        x.copy_(uniform(params.input_shape, params, 0))
        captured.replay()
    else:
        for step in steps:
            step()
            if not pdl:
                torch.cuda.synchronize()
    torch.cuda.synchronize()
    return [x, y, z, grad_w]


@pytest.mark.parametrize("n", [1, 32])
def test_back_to_back_passes_wait_for_each_other(n: int) -> None:
    import torch

    params = Conv2dGw8Params.make(n, 64, 64, 64)
    overlapped = _chain(params, pdl=True)
    ordered = _chain(params, pdl=False)
    for name, got, expected in zip(("x", "y", "z", "grad_w"), overlapped, ordered, strict=True):
        assert torch.isfinite(expected).all(), name
        assert torch.equal(got, expected), f"{name} differs when the passes overlap"


def test_back_to_back_passes_replay_from_a_cuda_graph() -> None:
    import torch

    params = Conv2dGw8Params.make(8, 64, 32, 32)
    replayed = _chain(params, pdl=True, graph=True)
    ordered = _chain(params, pdl=False)
    for name, got, expected in zip(("x", "y", "z", "grad_w"), replayed, ordered, strict=True):
        assert torch.equal(got, expected), f"{name} differs when replayed from a graph"
