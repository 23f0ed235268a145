"""fprop's and dgrad's tiles read whole pixels, halves of them or runs of 20, 14 or 12 groups
where the layer's groups are not a multiple of 8 and the wider grid still spreads over the
SMs (fprop_pixel_groups)."""

from __future__ import annotations

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig, dgrad_spec, fprop_spec
from spio.kernels.conv2d_gw8.fprop_pixel_groups import pixel_groups_tile

H200_SMS = 132


def _layer(n: int, c: int, h: int, w: int, k: int, **kwargs: object) -> Conv2dGw8Params:
    return Conv2dGw8Params.make(n, c, h, w, r=k, s=k, padding=k // 2, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("shape", "groups", "warp_g"),
    [
        # 1 x 1, whole pixels: H200 gains over the four-group tile in the comments.
        ((256, 96, 56, 56, 1), 12, 2),  # 114.2 -> 86.0 us, 1.33x
        ((8, 96, 56, 56, 1), 12, 2),  # 224 blocks, 1.10x
        ((16, 96, 28, 28, 1), 12, 1),  # the ladder's one-group warps, 12 of them, 1.08x
        ((256, 160, 14, 14, 1), 20, 2),  # 1.78x
        ((16, 160, 28, 28, 1), 20, 2),  # one group a warp would be 20 warps: two, 1.46x
        ((128, 224, 28, 28, 1), 14, 2),  # halves of 28 groups, 1.37x
        # 1 x 1, runs on grids of 2.5 blocks an SM or more.
        ((256, 480, 28, 28, 1), 20, 2),  # 1.21x: 0.90x cuDNN before, 1.08x after
        ((128, 480, 14, 14, 1), 20, 2),  # 384 blocks, 1.27x
        ((64, 672, 14, 14, 1), 14, 2),  # 1.72x
        # 3 x 3: whole pixels of 12 groups and halves of 28, on 32-column strips.
        ((64, 96, 56, 56, 3), 12, 2),  # 1.02x (dgrad 1.05x)
        ((256, 96, 56, 56, 3), 12, 2),  # 1.05x, held out
        ((128, 224, 56, 56, 3), 14, 2),  # 1.15x
    ],
)
def test_layers_off_the_full_line_read_whole_pixels_or_runs(
    shape: tuple[int, int, int, int, int], groups: int, warp_g: int
) -> None:
    params = _layer(*shape)
    for spec in (fprop_spec, dgrad_spec):
        config = spec.default_config(params, H200_SMS)
        assert (config.block_g, config.warp_g) == (groups, warp_g)
        assert config.block_g not in fprop_spec.BLOCK_G_VALUES  # (no model has timed them)
        spec.check_config(params, config)


@pytest.mark.parametrize(
    "shape",
    [
        (32, 480, 14, 14, 1),  # 192 blocks of runs of 20 (0.92x)
        (64, 480, 28, 28, 1),  # 192 blocks of runs (1.03x: not worth the risk)
        (32, 672, 28, 28, 1),  # 192 blocks of runs of 14 (0.99x)
        (1, 96, 56, 56, 1),  # whole pixels: 56 blocks, most SMs without one
        (64, 160, 56, 56, 3),  # 20 groups of 3 x 3: one block an SM (0.95x)
        (128, 480, 14, 14, 3),  # 3 x 3 runs of 60 groups (0.88-0.96x)
        (64, 672, 14, 14, 3),  # and of 84 (0.79-0.95x)
        (64, 96, 56, 56, 5),  # filters past 3 x 3 (0.98x)
        (512, 96, 14, 14, 3),  # 3 x 3 on 16-column strips (0.89x)
        (96, 224, 28, 28, 3),  # 3 x 3 on 192 blocks of halves of 28 groups (0.90x)
    ],
)
def test_the_rule_keeps_four_groups_where_wider_blocks_lost_or_were_not_timed(
    shape: tuple[int, int, int, int, int],
) -> None:
    params = _layer(*shape)
    assert fprop_spec.default_config(params, H200_SMS).block_g == 4
    assert dgrad_spec.default_config(params, H200_SMS).block_g == 4


def test_eight_group_layers_paired_images_and_other_tiles_are_left_alone() -> None:
    # 16 groups: eight-group tiles read whole lines already.
    eight = _layer(128, 128, 56, 56, 1)
    assert fprop_spec.default_config(eight, H200_SMS).block_g == 8
    tile = FpropConfig(32, 4, 2, 2, 32, 2, 8)
    assert pixel_groups_tile(eight, tile, H200_SMS) == tile
    # Images side by side (8-column strips of two images), segments, and other widths stay.
    layer = _layer(256, 96, 56, 56, 1)
    for other in (
        FpropConfig(8, 4, 2, 1, 8, 6, 8),
        FpropConfig(32, 4, 2, 2, 32, 2, 8, segments=132),
        FpropConfig(32, 2, 1, 2, 32, 2, 8),
        FpropConfig(32, 12, 2, 2, 32, 2, 8),
    ):
        assert pixel_groups_tile(layer, other, H200_SMS) == other
    # The widened tile of a four-group one.
    assert pixel_groups_tile(layer, tile, H200_SMS) == FpropConfig(32, 12, 2, 2, 32, 2, 8)


def test_the_wider_tiles_keep_the_dtype_and_bias_of_the_layer_valid() -> None:
    params = _layer(33, 96, 56, 60, 3, dtype="bfloat16", has_bias=True)
    config = fprop_spec.default_config(params, H200_SMS)
    assert config.block_g == 12
    fprop_spec.check_config(params, config)
