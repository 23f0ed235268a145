"""wgrad's 1 x 1 tiles read whole pixels, or runs of 20 or 12 groups, where the layer's groups
are not a multiple of 8 and the wider grid still spreads over the SMs (wgrad_pixel_groups)."""

from __future__ import annotations

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, WgradConfig, wgrad_heuristic, wgrad_spec
from spio.kernels.conv2d_gw8.wgrad_pixel_groups import PIXEL_WARP_G, pixel_groups_tile

H200_SMS = 132


def _pointwise(n: int, c: int, h: int, w: int, **kwargs: object) -> Conv2dGw8Params:
    return Conv2dGw8Params.make(n, c, h, w, r=1, s=1, padding=0, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("shape", "groups", "block_n", "walk_n"),
    [
        ((512, 96, 112, 112), 12, 2, 2),  # 710.4 -> 598.8 us on an H200, 1.02x cuDNN
        ((256, 96, 32, 32), 12, 2, 2),  # 1.178x
        ((8, 96, 112, 112), 12, 4, 1),  # 98 blocks: two steps would leave SMs idle
        ((24, 96, 112, 112), 12, 2, 1),  # one wave, 1.117x
        ((128, 160, 80, 80), 20, 2, 2),  # 1.221x
        ((256, 480, 80, 80), 20, 2, 2),  # runs of 20 of 60 groups, 1.089x
        ((4, 672, 112, 112), 12, 2, 2),  # runs of 12 of 84 groups, 1.060x
    ],
)
def test_pointwise_layers_off_the_full_line_read_whole_pixels_or_runs(
    shape: tuple[int, int, int, int], groups: int, block_n: int, walk_n: int
) -> None:
    params = _pointwise(*shape)
    config = wgrad_heuristic.default_config(params, H200_SMS)
    assert (config.block_q, config.block_g, config.warp_g) == (16, groups, PIXEL_WARP_G)
    assert (config.block_n, config.walk_n) == (block_n, walk_n)
    assert config.block_g not in wgrad_spec.BLOCK_G_VALUES  # (no model has timed them)
    wgrad_spec.check_config(params, config)


@pytest.mark.parametrize(
    "shape",
    [
        (4, 96, 56, 56),  # whole pixels would be 16 blocks on 132 SMs (0.709x)
        (2, 672, 56, 56),  # runs on a small grid (0.846x)
        (48, 672, 14, 14),  # 168 blocks of runs (0.894x)
        (32, 224, 80, 80),  # 28 groups: runs of 14 are no whole lines either
        (8, 160, 56, 56),  # four images of 20 groups would take 20 warps
    ],
)
def test_the_rule_keeps_four_groups_where_wider_blocks_lost_or_cannot_run(
    shape: tuple[int, int, int, int],
) -> None:
    config = wgrad_heuristic.default_config(_pointwise(*shape), H200_SMS)
    assert config.block_g == 4


def test_eight_group_layers_wider_filters_and_other_tiles_are_left_alone() -> None:
    # 16 groups: eight-group tiles read whole lines already.
    eight = _pointwise(128, 128, 64, 64)
    assert wgrad_heuristic.default_config(eight, H200_SMS).block_g == 8
    tile = WgradConfig(16, 4, 2, 16, 2, 2, image_sync=True)
    assert pixel_groups_tile(eight, tile, H200_SMS) == tile
    # A 3 x 3 filter of 12 groups: the rule is the 1 x 1 tile's.
    three = Conv2dGw8Params.make(512, 96, 56, 56)
    assert pixel_groups_tile(three, tile, H200_SMS) == tile
    # Strips of 32 columns, TMA rows, walks already, and the wider tile itself stay.
    layer = _pointwise(512, 96, 112, 112)
    for other in (
        WgradConfig(32, 4, 2, 16, 2, 1),
        WgradConfig(16, 4, 2, 16, 2, 2, 2, image_sync=True),
        WgradConfig(16, 12, 4, 16, 2, 2, 2, image_sync=True),
    ):
        assert pixel_groups_tile(layer, other, H200_SMS) == other


def test_the_wider_tiles_keep_the_dtype_and_bias_of_the_layer_valid() -> None:
    params = _pointwise(33, 96, 80, 80, dtype="bfloat16", has_bias=True)
    config = wgrad_heuristic.default_config(params, H200_SMS)
    assert config.block_g == 12
    wgrad_spec.check_config(params, config)
