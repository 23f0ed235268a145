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


def _chain(params: Conv2dGw8Params, pdl: bool) -> list:
    """fprop, wgrad, dgrad into the input wgrad just read, fprop of that: every pass depends
    on the one before it (read after write) and dgrad also writes what wgrad reads."""
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
