"""wgrad's full-line tile takes four images side by side where the layer's groups are not a
multiple of its 8 (wgrad_heuristic.HALF_LINE_IMAGES), with half its rows where the grid
lacks warps; full-line tiles sync their images on row chunks cut evenly."""

from __future__ import annotations

import dataclasses

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, WgradConfig, wgrad_heuristic, wgrad_spec

H200_SMS = 132


@pytest.mark.parametrize(
    ("shape", "block_p"),
    [
        ((128, 96, 56, 56), 64),  # 12 groups: 76.54 -> 47.04 us on an H200
        ((256, 96, 28, 28), 32),
        ((128, 160, 28, 28), 32),  # 20 groups
        ((64, 480, 14, 14), 16),  # 60 groups
    ],
)
def test_groups_off_the_full_line_take_four_images(
    shape: tuple[int, int, int, int], block_p: int
) -> None:
    params = Conv2dGw8Params.make(*shape)
    assert params.groups % 8
    config = wgrad_heuristic.default_config(params, H200_SMS)
    assert config == WgradConfig(16, 4, 2, block_p, 2, 4, image_sync=True)
    assert config.warps == 8  # the full-line tile's warps, with half its groups
    wgrad_spec.check_config(params, config)


@pytest.mark.parametrize(
    "shape",
    [
        (64, 96, 56, 56),  # 33.86 -> 25.82 us on an H200: rows 56 in chunks of 28
        (48, 96, 48, 48),
        (8, 480, 56, 56),
    ],
)
def test_four_images_walk_half_the_rows_where_the_grid_lacks_warps(
    shape: tuple[int, int, int, int],
) -> None:
    params = Conv2dGw8Params.make(*shape)
    four, half_rows = wgrad_heuristic._full_line_tiles(params)[:2]
    assert (four.block_n, half_rows.block_n) == (4, 4)
    assert half_rows.block_p * 2 == four.block_p
    # The four-image tile's grid misses the warps the heuristic asks; its half-rows grid
    # has them, and takes the rows in chunks the launcher cuts evenly (56 = 28 + 28).
    sm_warps = wgrad_heuristic.MIN_WARPS_PER_SM * H200_SMS
    assert wgrad_heuristic._total_warps(params, four) < sm_warps
    config = wgrad_heuristic.default_config(params, H200_SMS)
    assert config == dataclasses.replace(half_rows, image_sync=True)
    assert wgrad_heuristic._total_warps(params, config) >= sm_warps
    wgrad_spec.check_config(params, config)


@pytest.mark.parametrize(
    "shape",
    [
        (16, 672, 24, 24),  # 21.78 -> 12.54 us on an H200 (the ladder's tile walked two steps)
        (96, 96, 20, 20),  # 1.225x (the ladder's tile in segments)
        (128, 96, 24, 24),
    ],
)
def test_four_images_take_16_row_chunks_where_the_partials_stay_under_a_quarter(
    shape: tuple[int, int, int, int],
) -> None:
    params = Conv2dGw8Params.make(*shape)
    config = wgrad_heuristic.default_config(params, H200_SMS)
    assert config == WgradConfig(16, 4, 2, 16, 2, 4, image_sync=True)
    # More partial sums than the two-image full-line tile may write, fewer than a quarter.
    share = wgrad_heuristic._partials_share(params, config)
    assert (
        wgrad_heuristic.WALK_PARTIALS_SHARE < share <= wgrad_heuristic.HALF_LINE_MAX_PARTIALS_SHARE
    )


def test_half_rows_keep_chunks_of_16_rows() -> None:
    # 14 x 14 images: the four-image tile's 16-row chunk is not halved to 8 (untimed).
    params = Conv2dGw8Params.make(24, 672, 14, 14)
    four = wgrad_heuristic._full_line_tiles(params)[0]
    assert (four.block_n, four.block_p) == (4, 16)
    assert wgrad_heuristic._half_rows(params, four) is None
    assert wgrad_heuristic.default_config(params, H200_SMS).block_p == 16


def test_one_chunk_four_image_tiles_keep_the_full_lines_partials_limit() -> None:
    # 10 x 10 images in one 16-row chunk: partials over a tenth of the bytes still walk.
    params = Conv2dGw8Params.make(192, 672, 10, 10)
    config = wgrad_heuristic.default_config(params, H200_SMS)
    assert config.walk_n > 1


@pytest.mark.parametrize(
    ("hw", "synced"),
    [(112, True), (96, True), (120, True), (81, True), (113, False), (83, False)],
)
def test_full_lines_off_eight_groups_sync_images_on_chunks_cut_evenly(
    hw: int, synced: bool
) -> None:
    # 112 rows in chunks of 64 are walked as two of 56: whole chunks, so the four-image
    # tile (whose gain needs its images synced) runs, as do 81 in three of 27 (of 32);
    # 113 cut as 57 + 56 is not whole, nor 83 in 42 + 41 or 28 + 28 + 27.
    params = Conv2dGw8Params.make(32, 96, hw, hw)
    config = wgrad_heuristic.default_config(params, H200_SMS)
    assert (config.block_n == 4) == synced
    assert config.image_sync == synced


def test_full_lines_of_eight_groups_sync_images_on_chunks_of_their_rows() -> None:
    # With 8 groups the full-line tile would replace the eight-group TMA tile, which went
    # either way on an H200 (0.821-1.197x): 112 rows in chunks of 64 keep the ladder's tile.
    params = Conv2dGw8Params.make(64, 64, 112, 112)
    config = wgrad_heuristic.default_config(params, H200_SMS)
    assert (config.block_q, config.block_n, config.image_sync) == (32, 1, False)


def test_ladder_tiles_sync_only_on_chunks_of_their_rows() -> None:
    # The ladder's tiles synced on even chunks went either way on an H200 (0.845-1.127x):
    # 4x64x56x56's 16-row chunks, cut as 14, keep the block's barrier.
    params = Conv2dGw8Params.make(4, 64, 56, 56)
    config = wgrad_heuristic._tile_config(params, H200_SMS)
    assert (config.block_p, config.block_n) == (16, 4)
    assert not config.image_sync


def test_groups_of_the_full_line_keep_two_images() -> None:
    params = Conv2dGw8Params.make(128, 64, 64, 64)
    config = wgrad_heuristic.default_config(params, H200_SMS)
    assert (config.block_g, config.block_n) == (8, 2)


@pytest.mark.parametrize("k", [1, 5, 7])
def test_untimed_filters_keep_their_tile(k: int) -> None:
    # 1 x 1 and 5 x 5 or wider: the four-image tile was timed on 3 x 3 only.
    params = Conv2dGw8Params.make(128, 96, 56, 56, r=k, s=k, padding=k // 2)
    assert wgrad_heuristic._full_line_tiles(params) == [
        wgrad_heuristic._fit_tile(params, wgrad_heuristic.FULL_LINE_TILE)
    ]


def test_four_images_need_a_batch_of_four() -> None:
    # Images past the batch would only read zeros: two images keep the two-image tile.
    params = Conv2dGw8Params.make(2, 96, 56, 56)
    assert all(tile.images <= 2 for tile in wgrad_heuristic._full_line_tiles(params))
