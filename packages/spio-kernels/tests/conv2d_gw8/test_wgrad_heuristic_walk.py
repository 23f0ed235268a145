"""wgrad's heuristic walks steps of images only where the walked grid keeps every SM busy
(wgrad_heuristic._walked)."""

from __future__ import annotations

import dataclasses

import pytest

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    WgradConfig,
    wgrad_heuristic,
    wgrad_spec,
    wgrad_tma_tile,
)

H200_SMS = 132


@pytest.mark.parametrize(
    "shape", [(64, 128, 24, 24), (128, 64, 20, 20), (32, 256, 24, 24), (48, 64, 40, 40)]
)
def test_a_walk_that_would_leave_sms_without_a_block_is_not_taken(
    shape: tuple[int, int, int, int],
) -> None:
    params = Conv2dGw8Params.make(*shape)
    config = wgrad_heuristic.default_config(params, H200_SMS)
    assert config.walk_n == 1
    assert wgrad_spec.grid_blocks(params, config) >= H200_SMS
    # Walked two steps the grid would still count enough warps, in too few blocks.
    walked = WgradConfig(16, 4, 1, 16, 1, 4, walk_n=2)
    assert config == WgradConfig(16, 4, 1, 16, 1, 4)
    assert wgrad_spec.grid_blocks(params, walked) < H200_SMS
    assert (
        wgrad_spec.grid_blocks(params, walked) * walked.warps
        >= wgrad_heuristic.MIN_WARPS_PER_SM * H200_SMS
    )


def test_the_same_layer_walks_on_a_gpu_its_walked_grid_fills() -> None:
    params = Conv2dGw8Params.make(64, 128, 24, 24)
    assert wgrad_heuristic.default_config(params, 100).walk_n == 2  # 128 blocks on 100 SMs


@pytest.mark.parametrize(("shape", "walk_n"), [((512, 256, 14, 14), 4), ((64, 1024, 16, 16), 2)])
def test_large_batches_still_walk_to_divide_their_partial_sums(
    shape: tuple[int, int, int, int], walk_n: int
) -> None:
    params = Conv2dGw8Params.make(*shape)
    config = wgrad_heuristic.default_config(params, H200_SMS)
    assert config.walk_n == walk_n
    assert wgrad_spec.grid_blocks(params, config) >= H200_SMS


def test_the_unwalked_tile_takes_eight_groups_by_tma_on_a_gpu_with_tma() -> None:
    params = Conv2dGw8Params.make(64, 128, 24, 24)
    tile = wgrad_tma_tile.tma_tile(params, wgrad_heuristic.default_config(params, H200_SMS))
    assert tile == WgradConfig(16, 8, 2, 16, 2, 4, image_sync=True, tma=True)


@pytest.mark.parametrize(
    "shape", [(128, 768, 7, 7, 3), (96, 768, 8, 8, 3), (256, 160, 10, 10, 3), (96, 768, 4, 4, 5)]
)
def test_heavy_partial_sums_walk_two_steps_under_the_warps_threshold(
    shape: tuple[int, int, int, int, int],
) -> None:
    n, c, h, w, k = shape
    params = Conv2dGw8Params.make(n, c, h, w, r=k, s=k, padding=k // 2)
    config = wgrad_heuristic.default_config(params, H200_SMS)
    assert config.walk_n == 2
    unwalked = dataclasses.replace(config, walk_n=1)
    assert wgrad_heuristic._partials_share(params, unwalked) > wgrad_heuristic.HEAVY_PARTIALS_SHARE
    # The walk leaves the grid under the warps the other walks ask, in more than 2 blocks
    # an SM.
    walked_warps = config.warps * wgrad_spec.grid_blocks(params, config)
    assert walked_warps < wgrad_heuristic._min_warps(params, H200_SMS)
    assert wgrad_spec.grid_blocks(params, config) > 2 * H200_SMS
    wgrad_spec.check_config(params, config)


@pytest.mark.parametrize(
    "shape",
    [
        (128, 512, 7, 7),  # 256 walked blocks: 2 an SM, where the walk lost (0.89x)
        (96, 672, 7, 7),  # 252
        (128, 192, 20, 20),  # partial sums under a quarter of the bytes (0.91x)
    ],
)
def test_heavy_partials_walk_only_on_wide_grids_of_heavy_partials(
    shape: tuple[int, int, int, int],
) -> None:
    params = Conv2dGw8Params.make(*shape)
    assert wgrad_heuristic.default_config(params, H200_SMS).walk_n == 1


def test_the_heavy_partials_walk_counts_blocks_on_the_gpus_sms() -> None:
    # 384 walked blocks are more than 2 an SM on 132 SMs, not on 200.
    params = Conv2dGw8Params.make(128, 768, 7, 7)
    assert wgrad_heuristic.default_config(params, H200_SMS).walk_n == 2
    assert wgrad_heuristic.default_config(params, 200).walk_n == 1
