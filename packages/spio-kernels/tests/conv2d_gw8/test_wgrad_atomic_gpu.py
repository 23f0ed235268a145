"""wgrad with atomic sums (WgradConfig.atomic_sums, deterministic=False) on a GPU: every block
adds its sums into one that the zero kernel clears first, against the fp32 reference.

grad_w, the workspace and the bias gradient are poisoned with NaN, so a cell the zero kernel
leaves uncleared, or a weight no block adds to, shows as NaN.
"""

import dataclasses

import pytest
from gw8_cases import SHAPES, covering_configs, uniform

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    WgradConfig,
    conv2d_gw8_wgrad,
    wgrad_heuristic,
    wgrad_spec,
    wgrad_workspace_bytes,
)
from spio.kernels.conv2d_gw8.reference import wgrad_bias_reference, wgrad_reference
from spio.kernels.conv2d_gw8.wgrad import atomic_config_on, default_config_on

pytestmark = pytest.mark.gpu


def _atomic(config: WgradConfig) -> WgradConfig:
    """config with atomic sums, as atomic_config_on gives them: no partial sums to discard."""
    return dataclasses.replace(config, atomic_sums=True, discard_partials=False)


# Every value of every field on the shape set (odd sizes, each R and S, asymmetric padding,
# fp16 and bf16, N = 1), then segments, TMA rows with producer warps and padded slabs, and
# a layer whose blocks far outnumber the SMs.
CASES = [
    (params, _atomic(config))
    for params in SHAPES
    for config in covering_configs(
        wgrad_spec.config_space(params), wgrad_heuristic.default_config(params)
    )
] + [
    (
        Conv2dGw8Params.make(6, 64, 17, 21, r=5, s=3, padding=(2, 1, 0, 2), dtype="bfloat16"),
        _atomic(WgradConfig(16, 2, 1, 8, 1, 2, segments=7)),
    ),
    (
        Conv2dGw8Params.make(32, 64, 64, 64),
        _atomic(
            WgradConfig(
                32, 8, 2, 16, 2, 2, image_sync=True, tma=True, producer=True, padded_slabs=True
            )
        ),
    ),
    (Conv2dGw8Params.make(64, 128, 32, 32), _atomic(WgradConfig(16, 4, 1, 16, 1, 4))),
    # Filter rows split among a chunk's blocks (block_r), each adding its own rows; with a
    # bias, whose sums the first filter row tile adds.
    pytest.param(
        Conv2dGw8Params.make(2, 64, 8, 8, r=7, s=7, padding=3),
        _atomic(WgradConfig(8, 4, 1, 2, 4, 2, block_r=1)),
        id="split-rows-7x7-paired",
    ),
    pytest.param(
        Conv2dGw8Params.make(
            3, 64, 9, 13, r=6, s=3, padding=(3, 1, 0, 2), dtype="bfloat16", has_bias=True
        ),
        _atomic(WgradConfig(16, 2, 1, 4, 2, 2, block_r=2)),
        id="split-rows-6x3-bias-bf16",
    ),
]


def _poisoned(shape, dtype=None):  # type: ignore[no-untyped-def]
    import torch

    return torch.full(shape, float("nan"), device="cuda", dtype=dtype or torch.float32)


def _check(params: Conv2dGw8Params, grad_w, x, grad_y) -> None:  # type: ignore[no-untyped-def]
    import torch

    assert not torch.isnan(grad_w).any(), "a weight was left uncleared or unwritten"
    # Products of 16-bit values are exact in f32; the error is f32 summation over
    # depth = n * p * q terms of magnitude <= 1, in any order.
    depth = params.n * params.p * params.q
    expected = wgrad_reference(x, grad_y, params)
    torch.testing.assert_close(
        grad_w.float(), expected, rtol=1e-4 if grad_w.dtype == torch.float32 else 1e-2,
        atol=1e-6 * depth + 1e-6,
    )  # fmt: skip


@pytest.mark.parametrize(("params", "config"), CASES, ids=str)
def test_atomic_sums_match_reference(params: Conv2dGw8Params, config: WgradConfig) -> None:
    """Into grad_w itself (no workspace), or with a bias through the workspace."""
    import torch

    x = uniform(params.input_shape, params, 25)
    grad_y = uniform(params.output_shape, params, 26)
    grad_w = _poisoned(params.weight_shape)
    nbytes = wgrad_workspace_bytes(params, config, deterministic=False)
    assert nbytes == (wgrad_spec.workspace_bytes(params, config) if params.has_bias else 0)
    grad_bias = _poisoned((params.c,)) if params.has_bias else None
    conv2d_gw8_wgrad(
        grad_w, x, grad_y, params, config, workspace=_poisoned((nbytes // 4 + 1,)),
        grad_bias=grad_bias, deterministic=False,
    )  # fmt: skip
    torch.cuda.synchronize()
    _check(params, grad_w, x, grad_y)
    if grad_bias is not None:
        depth = params.n * params.p * params.q
        torch.testing.assert_close(
            grad_bias, wgrad_bias_reference(grad_y), rtol=1e-4, atol=1e-6 * depth + 1e-6
        )


@pytest.mark.parametrize("rounded", [False, True])
@pytest.mark.parametrize(("params", "config"), CASES[-3:], ids=str)
def test_atomic_sums_with_a_bias_and_a_rounded_grad_w(
    params: Conv2dGw8Params, config: WgradConfig, rounded: bool
) -> None:
    """The bias gradient's sums are added atomically after the weights' in the workspace,
    which the zero kernel clears whole; the reduce kernel then copies (or rounds) the one
    sum into grad_w and grad_bias."""
    import torch

    with_bias = dataclasses.replace(params, has_bias=True)
    grad_w_dtype = params.dtype if rounded else "float32"
    x = uniform(params.input_shape, params, 27)
    grad_y = uniform(params.output_shape, params, 28)
    grad_w = _poisoned(params.weight_shape, getattr(torch, grad_w_dtype))
    grad_bias = _poisoned((params.c,))
    nbytes = wgrad_workspace_bytes(
        with_bias, config, grad_w_dtype=grad_w_dtype, deterministic=False
    )
    assert nbytes == wgrad_spec.workspace_bytes(with_bias, config) > 0
    workspace = _poisoned((nbytes // 4,))
    conv2d_gw8_wgrad(
        grad_w, x, grad_y, with_bias, config, workspace=workspace, grad_w_dtype=grad_w_dtype,
        grad_bias=grad_bias, deterministic=False,
    )  # fmt: skip
    torch.cuda.synchronize()
    _check(params, grad_w, x, grad_y)
    depth = params.n * params.p * params.q
    torch.testing.assert_close(
        grad_bias, wgrad_bias_reference(grad_y), rtol=1e-4, atol=1e-6 * depth + 1e-6
    )


def test_each_launch_clears_the_sum_it_adds_into() -> None:
    """Launches back to back (programmatic dependent launch, no synchronisation between
    them) into the same grad_w: each gives the pass's result, not the sum of the runs."""
    import torch

    params = Conv2dGw8Params.make(32, 64, 64, 64)
    x = uniform(params.input_shape, params, 29)
    grad_y = uniform(params.output_shape, params, 30)
    config = _atomic(default_config_on(params))
    grad_w = _poisoned(params.weight_shape)
    for _ in range(4):
        conv2d_gw8_wgrad(grad_w, x, grad_y, params, config, deterministic=False)
    torch.cuda.synchronize()
    _check(params, grad_w, x, grad_y)


def test_a_nondeterministic_launch_without_a_config_takes_atomic_config_on() -> None:
    import torch

    for params in (Conv2dGw8Params.make(32, 64, 64, 64), Conv2dGw8Params.make(128, 64, 56, 56)):
        chosen = atomic_config_on(params, default_config_on(params))
        expected = 0 if chosen.atomic_sums else wgrad_spec.workspace_bytes(params, chosen)
        assert wgrad_workspace_bytes(params, deterministic=False) == expected
        x = uniform(params.input_shape, params, 31)
        grad_y = uniform(params.output_shape, params, 32)
        grad_w = _poisoned(params.weight_shape)
        conv2d_gw8_wgrad(grad_w, x, grad_y, params, deterministic=False)
        torch.cuda.synchronize()
        _check(params, grad_w, x, grad_y)


def test_atomic_config_on_takes_only_kernels_that_fit_as_well() -> None:
    """Where atomic_config_on takes atomic sums, the grid is one wave, and their kernel spills
    no more, takes within ATOMIC_REGISTER_SHIFT registers and fits as many blocks per SM;
    for a launch that reduces anyway, the blocks make ATOMIC_REDUCED_MIN_SUMS partial sums
    of each weight or more."""
    from spio.kernels.conv2d_gw8 import wgrad
    from spio.kernels.conv2d_gw8._tiling import grid_slots

    layers = [
        Conv2dGw8Params.make(64, 128, 32, 32),
        Conv2dGw8Params.make(8, 64, 56, 56),
        Conv2dGw8Params.make(16, 64, 56, 56, r=7, s=7, padding=3),
        Conv2dGw8Params.make(512, 64, 64, 64),
        Conv2dGw8Params.make(32, 64, 64, 64),
    ]
    for params in layers:
        config = default_config_on(params)
        chosen = atomic_config_on(params, config)
        assert chosen in (config, _atomic(config))
        if chosen.atomic_sums:
            base, atomic = (wgrad.wgrad_launch(params, c).main for c in (config, chosen))
            assert atomic.attributes.local_mem <= base.attributes.local_mem
            shift = atomic.attributes.registers - base.attributes.registers
            assert abs(shift) <= wgrad.ATOMIC_REGISTER_SHIFT
            slots = [
                grid_slots(k, wgrad_spec.launch_geometry(params, c))
                for k, c in ((base, config), (atomic, chosen))
            ]
            assert slots[1] >= slots[0]
            assert wgrad_spec.grid_blocks(params, config) <= slots[0]
        # Where the launch reduces anyway, only with many partial sums of each weight.
        reduced = atomic_config_on(params, config, 0, True)
        assert reduced in (config, chosen)
        if wgrad_spec.block_sums(params, config) < wgrad.ATOMIC_REDUCED_MIN_SUMS:
            assert reduced == config
