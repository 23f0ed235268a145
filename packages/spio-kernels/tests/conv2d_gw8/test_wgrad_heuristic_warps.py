"""wgrad's heuristic asks fewer warps per SM of filters of 5 x 5 and wider
(wgrad_heuristic.LARGE_FILTER_MIN_WARPS_PER_SM) and of the eight-group TMA tile
(EIGHT_GROUP_MIN_WARPS_PER_SM), and keeps MIN_WARPS_PER_SM for the other tiles of smaller
filters."""

from __future__ import annotations

import pytest

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    WgradConfig,
    wgrad_heuristic,
    wgrad_spec,
    wgrad_tma_tile,
)

H200_SMS = 132


def warps_per_sm(params: Conv2dGw8Params, config: WgradConfig) -> float:
    return wgrad_spec.grid_blocks(params, config) * config.warps / H200_SMS


def test_a_5x5_filter_takes_the_larger_tile_at_fewer_than_13_warps_per_sm() -> None:
    params = Conv2dGw8Params.make(48, 64, 56, 56, r=5, s=5, padding=2)
    config = wgrad_heuristic.default_config(params, H200_SMS)
    assert config == WgradConfig(32, 4, 1, 64, 2, 1)  # whole 56-row images, not 32-row chunks
    warps = warps_per_sm(params, config)
    assert wgrad_heuristic.LARGE_FILTER_MIN_WARPS_PER_SM <= warps < wgrad_heuristic.MIN_WARPS_PER_SM


def test_a_7x7_filter_walks_more_steps_at_fewer_than_13_warps_per_sm() -> None:
    params = Conv2dGw8Params.make(24, 1024, 20, 20, r=7, s=7, padding=3)
    config = wgrad_heuristic.default_config(params, H200_SMS)
    assert config.walk_n == 4
    assert warps_per_sm(params, config) < wgrad_heuristic.MIN_WARPS_PER_SM


def test_a_7x7_filter_takes_32_column_tiles_where_they_hold_10_warps_per_sm() -> None:
    params = Conv2dGw8Params.make(96, 64, 28, 28, r=7, s=7, padding=3)
    config = wgrad_heuristic.default_config(params, H200_SMS)
    assert (config.block_q, config.block_p, config.block_n) == (32, 32, 2)


def test_a_3x3_filter_still_asks_13_warps_per_sm(monkeypatch: pytest.MonkeyPatch) -> None:
    # The full-line tile would hold 11.6 warps an SM; at 10 it would be taken, and lost
    # 0.86x (H200) against the tile of the ladder that the launcher runs as 48-column strips.
    params = Conv2dGw8Params.make(128, 64, 48, 48)
    full_line = WgradConfig(16, 8, 2, 64, 2, 2, image_sync=True)
    config = wgrad_heuristic.default_config(params, H200_SMS)
    assert config == WgradConfig(32, 4, 2, 64, 2, 1)
    assert warps_per_sm(params, full_line) < wgrad_heuristic.MIN_WARPS_PER_SM
    monkeypatch.setattr(wgrad_heuristic, "MIN_WARPS_PER_SM", 10)
    assert wgrad_heuristic.default_config(params, H200_SMS) == full_line


@pytest.mark.parametrize(
    ("shape", "k"),
    [((48, 512, 14, 14), 3), ((16, 64, 80, 80), 3), ((96, 64, 28, 28), 1), ((8, 256, 40, 40), 3)],
)
def test_the_eight_group_tma_tile_needs_8_warps_per_sm(
    monkeypatch: pytest.MonkeyPatch, shape: tuple[int, int, int, int], k: int
) -> None:
    # H200: 48x512x14x14 12.73 -> 8.98 us, 16x64x80x80 16.00 -> 9.50, 8x256x40x40 (8.7 warps
    # an SM) 12.00 -> 8.41 against the four-group cp.async tile that 13 warps per SM kept.
    params = Conv2dGw8Params.make(*shape, r=k, s=k, padding=k // 2)
    ladder = wgrad_heuristic.default_config(params, H200_SMS)
    assert (ladder.block_g, ladder.tma) == (4, False)
    tile = wgrad_tma_tile.tma_tile(params, ladder, H200_SMS)
    assert (tile.block_g, tile.warp_g, tile.tma) == (8, 2, True)
    warps = warps_per_sm(params, tile)
    assert wgrad_heuristic.EIGHT_GROUP_MIN_WARPS_PER_SM <= warps < wgrad_heuristic.MIN_WARPS_PER_SM
    monkeypatch.setattr(wgrad_heuristic, "EIGHT_GROUP_MIN_WARPS_PER_SM", 13)
    assert wgrad_tma_tile.tma_tile(params, ladder, H200_SMS) == ladder
