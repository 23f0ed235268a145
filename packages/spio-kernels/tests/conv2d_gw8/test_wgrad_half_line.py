"""wgrad's full-line tile takes four images side by side where the layer's groups are not a
multiple of its 8 (wgrad_heuristic.HALF_LINE_IMAGES)."""

from __future__ import annotations

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
