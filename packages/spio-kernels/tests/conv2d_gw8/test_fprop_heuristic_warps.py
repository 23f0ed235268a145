"""fprop's and dgrad's heuristic take a larger tile at fewer warps per SM where its warps walk
long (fprop_spec.LONG_WALK_MIN_WARPS_PER_SM), and keep MIN_WARPS_PER_SM for short walks."""

from __future__ import annotations

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig, dgrad_spec, fprop_spec

H200_SMS = 132


def warps_per_sm(params: Conv2dGw8Params, config: FpropConfig) -> float:
    return fprop_spec.grid_blocks(params, config) * config.warps / H200_SMS


@pytest.mark.parametrize(
    ("shape", "tile"),
    [
        # 16-row chunks, two groups a warp: 32 rows of groups.
        ((48, 512, 16, 16), (16, 8, 2, 1, 16, 6)),
        ((24, 64, 64, 64), (16, 8, 2, 1, 16, 1)),
        # 8-row chunks, two groups a warp instead of one: 16 rows of groups.
        ((64, 64, 24, 24), (16, 8, 2, 1, 8, 1)),
        # 32 columns instead of 16.
        ((48, 64, 64, 64), (32, 8, 2, 2, 16, 2)),
    ],
)
def test_a_long_walk_tile_is_taken_under_13_warps_per_sm(
    shape: tuple[int, int, int, int], tile: tuple[int, ...]
) -> None:
    params = Conv2dGw8Params.make(*shape)
    config = fprop_spec.default_config(params, H200_SMS)
    assert config == FpropConfig(*tile, mma_k=16)
    assert config.block_p * config.warp_g >= fprop_spec.LONG_WALK_GROUP_ROWS
    warps = warps_per_sm(params, config)
    assert fprop_spec.LONG_WALK_MIN_WARPS_PER_SM <= warps < fprop_spec.MIN_WARPS_PER_SM


def test_dgrad_takes_the_same_tile() -> None:
    params = Conv2dGw8Params.make(48, 512, 16, 16)
    assert dgrad_spec.default_config(params, H200_SMS) == fprop_spec.default_config(
        params, H200_SMS
    )
    assert dgrad_spec.default_config(params, H200_SMS).block_p == 16


@pytest.mark.parametrize(
    ("shape", "tile"),
    [
        # One group a warp, 8 rows: a short walk, which lost at 11.6 warps an SM; the 4-row
        # tile's grid fills 13.
        ((32, 64, 24, 24), (16, 8, 1, 1, 4, 1)),
        # The 4-row ladder tile at 11.6 warps lost to SMALL_GRID_TILE's as many warps.
        ((48, 64, 16, 16), (16, 2, 1, 1, 4, 2)),
    ],
)
def test_a_short_walk_tile_still_asks_13_warps_per_sm(
    shape: tuple[int, int, int, int], tile: tuple[int, ...]
) -> None:
    params = Conv2dGw8Params.make(*shape)
    assert fprop_spec.default_config(params, H200_SMS) == FpropConfig(*tile, mma_k=16)


def test_a_long_walk_under_10_warps_per_sm_is_not_taken() -> None:
    # 16-row chunks would leave 8.7 warps an SM (0.78x of the 8-row chunks on an H200).
    params = Conv2dGw8Params.make(8, 256, 36, 36)
    config = fprop_spec.default_config(params, H200_SMS)
    assert config.block_p == 8
    sixteen_rows = FpropConfig(16, 8, 2, 1, 16, 1, mma_k=16)
    assert warps_per_sm(params, sixteen_rows) < fprop_spec.LONG_WALK_MIN_WARPS_PER_SM
