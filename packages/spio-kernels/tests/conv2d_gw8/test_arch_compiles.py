"""Every pass compiles for every architecture Spio targets (NVRTC, no GPU needed)."""

import dataclasses

import pytest

import spio.jit
from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    default_config,
    dgrad_spec,
    fprop_spec,
    wgrad_heuristic,
    wgrad_spec,
)
from spio.kernels.conv2d_gw8.dgrad import compile_dgrad
from spio.kernels.conv2d_gw8.fprop import compile_fprop
from spio.kernels.conv2d_gw8.wgrad import compile_request, compile_wgrad

ARCHS = ["sm_80", "sm_86", "sm_89", "sm_90"]
PARAMS = Conv2dGw8Params.make(8, 64, 20, 18, r=3, s=3, padding=1, dtype="bfloat16")


@pytest.mark.parametrize("arch", ARCHS)
def test_every_pass_compiles(arch: str) -> None:
    for code in (
        compile_fprop(PARAMS, default_config(PARAMS), arch),
        compile_dgrad(PARAMS, dgrad_spec.default_config(PARAMS), arch),
        compile_wgrad(PARAMS, wgrad_heuristic.default_config(PARAMS), arch),
    ):
        assert code.arch == arch
        assert code.code


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize(
    "config",
    [
        wgrad_spec.WgradConfig(32, 8, 2, 16, 2, 2, image_sync=True, tma=True, producer=True),
        wgrad_spec.WgradConfig(16, 8, 2, 8, 2, 2, image_sync=True, atomic_sums=True),
        wgrad_spec.WgradConfig(8, 8, 2, 8, 2, 2),
        wgrad_spec.WgradConfig(16, 8, 2, 16, 2, 1, segments=5),
    ],
    ids=str,
)
def test_wgrad_compiles_with_the_lanes_addresses_in_registers(
    arch: str, config: wgrad_spec.WgradConfig
) -> None:
    params = Conv2dGw8Params.make(8, 64, 20, 16, has_bias=True)
    lanes = compile_wgrad(params, dataclasses.replace(config, lane_registers=True), arch)
    assert lanes.code != compile_wgrad(params, config, arch).code


@pytest.mark.parametrize("arch", ARCHS)
def test_wgrad_reduce_discards_its_partial_sums_on_every_arch(arch: str) -> None:
    params = Conv2dGw8Params.make(8, 64, 20, 16, has_bias=True)
    config = wgrad_spec.WgradConfig(16, 8, 2, 8, 2, 2, discard_partials=True)

    def ptx(config: wgrad_spec.WgradConfig) -> str:
        request = dataclasses.replace(compile_request(params, config, arch), target="ptx")
        return spio.jit.compile_many([request], workers=1, cache=False)[0].ptx

    assert "discard.global.L2" in ptx(config)
    assert "discard" not in ptx(dataclasses.replace(config, discard_partials=False))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize(
    "config",
    [
        wgrad_spec.WgradConfig(16, 4, 1, 8, 2, 2, image_sync=True, lane_registers=True),
        wgrad_spec.WgradConfig(16, 4, 1, 8, 2, 2, tma=True, producer=True),
        wgrad_spec.WgradConfig(16, 4, 1, 16, 2, 1, segments=5),
        wgrad_spec.WgradConfig(16, 4, 1, 8, 2, 1, block_r=1),
    ],
    ids=str,
)
def test_wgrad_compiles_with_the_padding_rows_left_out(
    arch: str, config: wgrad_spec.WgradConfig
) -> None:
    params = Conv2dGw8Params.make(8, 64, 20, 16, r=5, s=5, padding=2, has_bias=True)
    skipping = compile_wgrad(params, dataclasses.replace(config, skip_pad_rows=True), arch)
    assert skipping.arch == arch
    assert skipping.code != compile_wgrad(params, config, arch).code


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("pass_name", ["fprop", "dgrad"])
def test_fprop_and_dgrad_compile_walking_segments(arch: str, pass_name: str) -> None:
    spec, compile_pass = {
        "fprop": (fprop_spec, compile_fprop),
        "dgrad": (dgrad_spec, compile_dgrad),
    }[pass_name]
    tile = spec.default_config(PARAMS)
    chunks = compile_pass(PARAMS, tile, arch)
    segments = compile_pass(PARAMS, dataclasses.replace(tile, segments=7), arch)
    assert segments.arch == arch
    assert segments.code != chunks.code


@pytest.mark.parametrize("arch", ARCHS)
def test_blocks_of_groups_that_are_no_power_of_two_compile(arch: str) -> None:
    # wgrad_pixel_groups' 1 x 1 tile of a whole 12-group pixel walking two steps, with the
    # bias's sums, and fprop and dgrad taking 12 groups a block (the rings' ring_swizzle).
    pointwise = Conv2dGw8Params.make(8, 96, 20, 18, r=1, s=1, padding=0, has_bias=True)
    tile = wgrad_heuristic.default_config(
        Conv2dGw8Params.make(512, 96, 112, 112, r=1, s=1, padding=0)
    )
    assert (tile.block_g, tile.walk_n) == (12, 2)
    wide = dataclasses.replace(default_config(PARAMS), block_g=12, warp_g=4)
    layer = dataclasses.replace(PARAMS, c=96)
    for code in (
        compile_wgrad(pointwise, tile, arch),
        compile_fprop(layer, wide, arch),
        compile_dgrad(layer, wide, arch),
    ):
        assert code.arch == arch
        assert code.code
