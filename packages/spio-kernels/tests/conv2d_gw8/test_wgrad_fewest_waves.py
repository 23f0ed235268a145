"""Walked four-image TMA tiles walk as many steps as put their grid in the fewest waves
(wgrad_tma_tile._fewest_waves)."""

from __future__ import annotations

import dataclasses

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, wgrad_heuristic, wgrad_spec, wgrad_tma_tile
from spio.kernels.conv2d_gw8._tiling import ceil_div


def _tile(params: Conv2dGw8Params, sm_count: int) -> wgrad_spec.WgradConfig:
    return wgrad_tma_tile.tma_tile(
        params, wgrad_heuristic.default_config(params, sm_count), sm_count
    )


def _waves(params: Conv2dGw8Params, config: wgrad_spec.WgradConfig, sm_count: int) -> int:
    slots = wgrad_tma_tile.FOUR_IMAGE_BLOCKS_PER_SM * sm_count
    return ceil_div(wgrad_spec.grid_blocks(params, config), slots)


@pytest.mark.parametrize(
    ("shape", "sm_count", "walk_n", "blocks"),
    [
        ((1024, 256, 14), 132, 8, 128),  # two waves of four steps
        ((512, 1024, 10), 132, 16, 128),  # four waves
        ((128, 768, 12), 132, 3, 132),  # its last blocks' steps partly past the batch
        ((160, 1024, 14), 132, 5, 128),
        # On 100 SMs, 1024x256x14x14 walking four steps takes three waves; six and eight
        # steps two (172 and 128 blocks); eleven one.
        ((1024, 256, 14), 100, 11, 96),
    ],
    ids=str,
)
def test_walked_four_image_tiles_walk_into_the_fewest_waves(
    shape: tuple[int, int, int], sm_count: int, walk_n: int, blocks: int
) -> None:
    n, c, hw = shape
    params = Conv2dGw8Params.make(n, c, hw, hw)
    config = _tile(params, sm_count)
    assert (config.block_n, config.walk_n, config.tma, config.image_sync) == (4, walk_n, True, True)
    assert wgrad_spec.grid_blocks(params, config) == blocks
    assert _waves(params, config, sm_count) == 1
    assert blocks >= wgrad_tma_tile.FEWEST_WAVES_MIN_SM_SHARE * sm_count
    wgrad_spec.check_config(params, config)
    # The fewest steps that reach one wave: a step fewer takes more.
    shorter = dataclasses.replace(config, walk_n=walk_n - 1)
    assert _waves(params, shorter, sm_count) > 1


@pytest.mark.parametrize(
    ("shape", "sm_count", "walk_n"),
    [
        ((512, 256, 14), 132, 4),  # already one wave (128 blocks)
        ((64, 1024, 16), 132, 2),  # already one wave
        # Five steps would be 120 blocks, one wave on 91% of the SMs (0.986x against the
        # segments the launcher walks instead).
        ((192, 768, 14), 132, 4),
        # On 144 SMs, eight steps would be 128 blocks (89% of them) and seven 148, two waves.
        ((1024, 256, 14), 144, 4),
    ],
    ids=str,
)
def test_walks_stay_where_no_longer_walk_has_fewer_waves_on_enough_sms(
    shape: tuple[int, int, int], sm_count: int, walk_n: int
) -> None:
    n, c, hw = shape
    params = Conv2dGw8Params.make(n, c, hw, hw)
    config = _tile(params, sm_count)
    assert (config.block_n, config.walk_n, config.tma) == (4, walk_n, True)
    assert config in wgrad_spec.config_space(params)


@pytest.mark.parametrize(
    ("shape", "walk_n"), [((512, 64, 64), 4), ((768, 64, 32), 3), ((512, 256, 28), 8)], ids=str
)
def test_full_lines_walked_past_one_wave_walk_four_images_into_one(
    shape: tuple[int, int, int], walk_n: int
) -> None:
    # wgrad_tma_tile._walked_full_line_tile: two steps of two images would leave 384 to 1024
    # blocks, more than one wave of two an SM; four images a step walk into one wave.
    n, c, hw = shape
    params = Conv2dGw8Params.make(n, c, hw, hw)
    default = wgrad_heuristic.default_config(params, 132)
    assert (default.block_g, default.block_n, default.walk_n, default.tma) == (8, 2, 1, False)
    two_steps = dataclasses.replace(default, walk_n=2)
    assert wgrad_spec.grid_blocks(params, two_steps) > wgrad_tma_tile.FULL_LINE_BLOCKS_PER_SM * 132
    config = _tile(params, 132)
    assert config == dataclasses.replace(default, block_n=4, walk_n=walk_n, tma=True)
    assert _waves(params, config, 132) == 1


@pytest.mark.parametrize("shape", [(32, 768, 64), (24, 768, 56)], ids=str)
def test_full_lines_stay_unwalked_where_four_images_cannot_walk_into_one_wave(
    shape: tuple[int, int, int],
) -> None:
    # 32x768x64x64: four images walked into the fewest waves still leave 192 blocks, two
    # waves of one an SM, which were not measured (24x768x56x56: 144).
    n, c, hw = shape
    params = Conv2dGw8Params.make(n, c, hw, hw)
    config = _tile(params, 132)
    assert (config.block_n, config.walk_n) == (2, 1)


def test_unwalked_tiles_keep_their_one_step() -> None:
    # One wave of full-line blocks of four images (wgrad_tma_tile._four_image_full_line_tile).
    params = Conv2dGw8Params.make(128, 128, 32, 32)
    assert _tile(params, 132).walk_n == 1


def test_the_rule_is_the_tma_tiles_only() -> None:
    # Without TMA (wgrad_heuristic.default_config alone) the walk keeps the space's steps.
    params = Conv2dGw8Params.make(1024, 256, 14, 14)
    assert wgrad_heuristic.default_config(params, 132).walk_n in wgrad_spec.WALK_N_VALUES
