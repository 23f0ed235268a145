"""wgrad on a GPU against the fp32 reference (autograd), and its determinism.

grad_w and the workspace of partial sums are poisoned with NaN (the workspace's header, the
single launch's barrier counter, is zero as the entry asks), so a weight or a partial the
kernels leave unwritten shows as NaN in grad_w. Where a config's grid fits on the GPU at
once, the single cooperative launch must give the two launches' bits.
"""

from typing import Any

import pytest
from gw8_cases import SHAPES, covering_configs, uniform

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    WgradConfig,
    conv2d_gw8_wgrad,
    wgrad_spec,
    wgrad_uses_single_launch,
    wgrad_workspace_bytes,
)
from spio.kernels.conv2d_gw8.reference import wgrad_reference
from spio.kernels.conv2d_gw8.wgrad import _plan, get_wgrad_kernels

pytestmark = pytest.mark.gpu

CASES = [
    (params, config)
    for params in SHAPES
    for config in covering_configs(
        wgrad_spec.config_space(params), wgrad_spec.default_config(params)
    )
]


def _poisoned_workspace(params: Conv2dGw8Params, config: WgradConfig) -> Any:
    import torch

    workspace = torch.full(
        (wgrad_workspace_bytes(params, config) // 4,), float("nan"), device="cuda"
    )
    workspace[: wgrad_spec.WORKSPACE_HEADER_BYTES // 4] = 0
    return workspace


def _run(  # type: ignore[no-untyped-def]
    params: Conv2dGw8Params,
    config: WgradConfig,
    x,
    grad_y,
    single_launch: bool | None = None,
    workspace=None,
):
    import torch

    grad_w = torch.full(params.weight_shape, float("nan"), device="cuda", dtype=torch.float32)
    if workspace is None:
        workspace = _poisoned_workspace(params, config)
    conv2d_gw8_wgrad(
        grad_w, x, grad_y, params, config, workspace=workspace, single_launch=single_launch
    )
    torch.cuda.synchronize()
    return grad_w


def _fits_at_once(params: Conv2dGw8Params, config: WgradConfig) -> bool:
    return _plan(params, config, 0).fused_fits


@pytest.mark.parametrize(("params", "config"), CASES, ids=str)
def test_wgrad_matches_reference(params: Conv2dGw8Params, config: WgradConfig) -> None:
    import torch

    x = uniform(params.input_shape, params, 5)
    grad_y = uniform(params.output_shape, params, 6)
    grad_w = _run(params, config, x, grad_y, single_launch=False)
    assert not torch.isnan(grad_w).any(), "the kernels left weights or partials unwritten"
    # Products of 16-bit values are exact in f32; the error is f32 summation over
    # depth = n * p * q terms of magnitude <= 1, in either order.
    depth = params.n * params.p * params.q
    expected = wgrad_reference(x, grad_y, params)
    torch.testing.assert_close(grad_w, expected, rtol=1e-4, atol=1e-6 * depth + 1e-6)
    if _fits_at_once(params, config):
        single = _run(params, config, x, grad_y, single_launch=True)
        assert torch.equal(single, grad_w), "one launch and two launches differ"


@pytest.mark.parametrize("single_launch", [False, True], ids=["two-launches", "single-launch"])
def test_wgrad_is_deterministic(single_launch: bool) -> None:
    """Four runs on one workspace give the same bits, and leave the barrier counter zero."""
    import torch

    params = Conv2dGw8Params.make(32, 64, 33, 31, dtype="bfloat16")
    x = uniform(params.input_shape, params, 7)
    grad_y = uniform(params.output_shape, params, 8)
    config = wgrad_spec.default_config(params)
    assert _fits_at_once(params, config)
    workspace = _poisoned_workspace(params, config)
    first = _run(params, config, x, grad_y, single_launch, workspace)
    for _ in range(3):
        assert torch.equal(_run(params, config, x, grad_y, single_launch, workspace), first)
    header = workspace[: wgrad_spec.WORKSPACE_HEADER_BYTES // 4].view(torch.int32)
    assert int(header[0]) in (0, -(2**31)), "the barrier counter must return to 0 or 2^31"


def test_single_launch_is_the_default_for_grids_that_fit_at_once() -> None:
    small = Conv2dGw8Params.make(32, 64, 64, 64)
    assert wgrad_uses_single_launch(small)
    large = Conv2dGw8Params.make(512, 64, 64, 64)
    assert not wgrad_uses_single_launch(large)


def test_single_launch_of_a_grid_too_large_is_refused() -> None:
    import torch

    params = Conv2dGw8Params.make(512, 64, 64, 64)
    config = wgrad_spec.default_config(params)
    assert not _fits_at_once(params, config)
    x = torch.zeros(params.input_shape, device="cuda", dtype=torch.float16)
    grad_y = torch.zeros(params.output_shape, device="cuda", dtype=torch.float16)
    grad_w = torch.empty(params.weight_shape, device="cuda", dtype=torch.float32)
    with pytest.raises(ValueError, match="do not fit on cuda:0 at once"):
        conv2d_gw8_wgrad(grad_w, x, grad_y, params, config, single_launch=True)
    with pytest.raises(TypeError, match="single_launch must be None, True or False"):
        conv2d_gw8_wgrad(grad_w, x, grad_y, params, config, single_launch=1)  # type: ignore[arg-type]


def test_wgrad_allocates_its_workspace_from_torch() -> None:
    import torch

    params = Conv2dGw8Params.make(2, 16, 9, 9)
    x = uniform(params.input_shape, params, 9)
    grad_y = uniform(params.output_shape, params, 10)
    grad_w = torch.empty(params.weight_shape, device="cuda", dtype=torch.float32)
    conv2d_gw8_wgrad(grad_w, x, grad_y, params)
    torch.testing.assert_close(grad_w, wgrad_reference(x, grad_y, params), rtol=1e-4, atol=1e-4)


def test_wgrad_kernels_use_no_local_memory() -> None:
    params = Conv2dGw8Params.make(128, 64, 64, 64)
    space = wgrad_spec.config_space(params)
    for config in covering_configs(space, wgrad_spec.default_config(params)):
        for kernel in get_wgrad_kernels(params, config):
            assert kernel.attributes.local_mem == 0, (config, kernel.attributes)
