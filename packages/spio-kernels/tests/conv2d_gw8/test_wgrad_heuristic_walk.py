"""wgrad's heuristic walks steps of images only where the walked grid keeps every SM busy
(wgrad_heuristic._walked)."""

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
