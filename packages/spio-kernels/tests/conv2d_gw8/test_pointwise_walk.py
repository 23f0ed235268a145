"""fprop's and dgrad's 1 x 1 tiles of 32-column strips walk 4 rows six rows ahead, in row
chunks, where their grid takes several waves (ring_depth.pointwise_walk, fprop.tile_chunks)."""

from __future__ import annotations

import dataclasses

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig, fprop, fprop_spec
from spio.kernels.conv2d_gw8.fprop_segments import segments_or_chunks
from spio.kernels.conv2d_gw8.ring_depth import (
    POINTWISE_BLOCK_P,
    POINTWISE_PREFETCH,
    is_pointwise_walk,
    pointwise_walk,
)

H200_SMS = 132
#: Blocks an SM of the 1 x 1 tiles of 32 columns on an H200, by rows ahead: shared memory
#: holds 8, 5 and 10 of the eight-group tile, 5, 3 and 7 of the twelve- and fourteen-group
#: ones (the launcher counts them on the compiled kernel).
BLOCKS_PER_SM = {8: {2: 8, 6: 5, 1: 10}, 12: {2: 5, 6: 3, 1: 7}, 14: {2: 5, 6: 3, 1: 7}}


def _slots(config: FpropConfig) -> int:
    return BLOCKS_PER_SM[config.block_g][config.prefetch] * H200_SMS


def _pointwise(n: int, c: int, h: int, w: int) -> Conv2dGw8Params:
    return Conv2dGw8Params.make(n, c, h, w, r=1, s=1, padding=0)


@pytest.mark.parametrize(
    "shape",
    [
        (64, 672, 56, 56),  # 153.3 -> 130.6 us on an H200, 1.19x cuDNN (0.84x before)
        (128, 384, 56, 56),  # 168.1 -> 149.5 us
        (256, 768, 28, 28),  # 166.4 -> 149.5 us
        (256, 96, 56, 56),  # 80.6 -> 74.7 us, 97.5% of copy
        (512, 256, 32, 32),  # long chunks six rows ahead walked segments here (0.937x)
    ],
)
def test_several_waves_of_pointwise_tiles_walk_short_chunks_six_rows_ahead(
    shape: tuple[int, int, int, int],
) -> None:
    params = _pointwise(*shape)
    tile = fprop_spec.default_config(params, H200_SMS)
    assert (tile.block_q, tile.prefetch) == (32, 2)
    chunks = fprop.tile_chunks(params, tile, _slots, H200_SMS)
    assert (chunks.block_p, chunks.prefetch) == (POINTWISE_BLOCK_P, POINTWISE_PREFETCH)
    assert is_pointwise_walk(params, chunks)
    # Many short blocks fill the waves: the launcher keeps the row chunks.
    assert segments_or_chunks(params, chunks, _slots) == chunks
    fprop_spec.check_config(params, chunks)


@pytest.mark.parametrize("shape", [(64, 128, 56, 56), (128, 96, 56, 56), (128, 512, 32, 32)])
def test_pointwise_grids_of_one_wave_keep_their_walk(shape: tuple[int, int, int, int]) -> None:
    params = _pointwise(*shape)
    tile = fprop_spec.default_config(params, H200_SMS)
    chunks = fprop.tile_chunks(params, tile, _slots, H200_SMS)
    assert chunks.prefetch == 2
    assert chunks == fprop.walk_chunks(params, tile, _slots(tile), H200_SMS)


def test_the_rule_is_for_two_rows_ahead_of_1x1_filters_in_32_column_strips() -> None:
    params = _pointwise(256, 512, 28, 28)
    tile = FpropConfig(32, 8, 2, 2, 32, 2, 8)
    short = pointwise_walk(params, tile, 1056)
    assert (short.block_p, short.prefetch) == (POINTWISE_BLOCK_P, POINTWISE_PREFETCH)
    assert pointwise_walk(params, tile, 2048) == tile  # one wave
    for other in (
        dataclasses.replace(tile, prefetch=1),
        FpropConfig(16, 8, 2, 1, 32, 2, 8),
    ):
        assert pointwise_walk(params, other, 1056) == other
    three = Conv2dGw8Params.make(256, 512, 28, 28)
    assert pointwise_walk(three, FpropConfig(32, 8, 2, 2, 32, 2, 16), 1056).prefetch == 2
    assert not is_pointwise_walk(three, dataclasses.replace(short, mma_k=16))
