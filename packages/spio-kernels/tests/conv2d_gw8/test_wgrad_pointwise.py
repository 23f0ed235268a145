"""wgrad's 1 x 1 tile of four groups and two images walks 16-row chunks where the layer's
groups are not a multiple of 8 and that grid fills its waves (wgrad_pointwise)."""

from __future__ import annotations

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, WgradConfig, wgrad_heuristic
from spio.kernels.conv2d_gw8.wgrad_pointwise import (
    POINTWISE_BLOCK_P,
    pointwise_chunks,
    walks_pointwise_chunks,
)

H200_SMS = 132


def _pointwise(n: int, c: int, h: int, w: int) -> Conv2dGw8Params:
    return Conv2dGw8Params.make(n, c, h, w, r=1, s=1, padding=0)


@pytest.mark.parametrize(
    ("shape", "longer"),
    [
        ((16, 480, 112, 112), 64),  # 152.5 -> 105.2 us on an H200 (segments before)
        ((256, 480, 80, 80), 64),  # 1004.6 -> 872.0 us, a full grid before
        ((128, 480, 28, 28), 32),  # one 32-row chunk before, two of 14 now
        ((65, 224, 56, 56), 64),  # an odd batch: 33 steps of two images
    ],
)
def test_pointwise_tiles_off_the_full_line_walk_16_row_chunks(
    shape: tuple[int, int, int, int], longer: int
) -> None:
    params = _pointwise(*shape)
    config = WgradConfig(16, 4, 2, POINTWISE_BLOCK_P, 2, 2, image_sync=True)
    # The tile the rule starts from is the heuristic's own in longer chunks (which
    # wgrad_pixel_groups then widens on layers of 60 groups).
    before = WgradConfig(16, 4, 2, longer, 2, 2, image_sync=True)
    assert pointwise_chunks(params, before, H200_SMS) == config
    assert walks_pointwise_chunks(params, config)
    chosen = wgrad_heuristic.default_config(params, H200_SMS)
    assert (chosen.block_p, chosen.image_sync) == (POINTWISE_BLOCK_P, True)


@pytest.mark.parametrize(
    "shape",
    [
        (24, 96, 112, 112),  # one wave of 504 blocks: 16-row chunks walked segments, 0.944x
        (16, 672, 56, 56),  # 16-row chunks would leave their last wave idle
    ],
)
def test_pointwise_tiles_keep_their_chunks_on_one_wave_or_idle_short_chunks(
    shape: tuple[int, int, int, int],
) -> None:
    params = _pointwise(*shape)
    config = wgrad_heuristic.default_config(params, H200_SMS)
    assert config.block_p > POINTWISE_BLOCK_P
    assert not walks_pointwise_chunks(params, config)


def test_eight_group_layers_and_wider_filters_keep_their_chunks() -> None:
    # 16 groups: the eight-group tile lost with 16-row chunks (0.92-0.97x).
    eight_groups = _pointwise(128, 128, 64, 64)
    tile = wgrad_heuristic.default_config(eight_groups, H200_SMS)
    assert (tile.block_g, tile.block_p) == (8, 64)
    assert pointwise_chunks(eight_groups, tile, H200_SMS) == tile
    # A 3 x 3 filter of a layer off the full line: the rule is the 1 x 1 tile's.
    three = Conv2dGw8Params.make(16, 480, 112, 112)
    tile = WgradConfig(16, 4, 2, 64, 2, 2, image_sync=True)
    assert pointwise_chunks(three, tile, H200_SMS) == tile
    assert not walks_pointwise_chunks(three, WgradConfig(16, 4, 2, 16, 2, 2, image_sync=True))


def test_the_rule_leaves_other_tiles_of_a_pointwise_layer_alone() -> None:
    params = _pointwise(16, 480, 112, 112)
    # Without image sync, with four images, or with TMA rows, the tile keeps its chunks.
    for tile in (
        WgradConfig(16, 4, 2, 64, 2, 2),
        WgradConfig(16, 4, 2, 64, 2, 4, image_sync=True),
        WgradConfig(32, 4, 2, 64, 2, 1),
    ):
        assert pointwise_chunks(params, tile, H200_SMS) == tile
    # An image of 16 rows or fewer has no longer chunks to shorten.
    small = _pointwise(512, 480, 16, 16)
    assert not walks_pointwise_chunks(small, WgradConfig(16, 4, 2, 16, 2, 2, image_sync=True))
