"""fprop's and dgrad's 1 x 1 tiles of long walks walk 4 rows as many rows ahead as fit, in row
chunks (fprop_pointwise, fprop.tile_chunks)."""

from __future__ import annotations

import dataclasses

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig, fprop, fprop_spec
from spio.kernels.conv2d_gw8.fprop_pointwise import (
    POINTWISE_BLOCK_P,
    POINTWISE_PREFETCHES,
    is_pointwise_walk,
    pointwise_walk,
)
from spio.kernels.conv2d_gw8.fprop_segments import segments_or_chunks

H200_SMS = 132
#: Blocks an SM of the 1 x 1 tiles on an H200 by (columns, groups, rows ahead), as the
#: launcher counts them on the compiled kernels (tools/fprop_variants_check.py's "blocks at
#: once"): shared memory holds 8 blocks of the eight-group tile of 32 columns two rows ahead,
#: 5 six rows ahead.
BLOCKS_PER_SM = {
    (32, 8, 2): 8,
    (32, 8, 6): 5,
    (32, 4, 2): 16,
    (32, 4, 6): 10,
    (32, 12, 2): 5,
    (32, 12, 6): 3,
    (32, 14, 2): 5,
    (32, 14, 6): 3,
    (32, 20, 2): 3,
    (32, 20, 5): 2,
    (16, 8, 6): 10,
    (16, 12, 6): 7,
}


def _slots(config: FpropConfig) -> int:
    return BLOCKS_PER_SM[config.block_q, config.block_g, config.prefetch] * H200_SMS


def _pointwise(n: int, c: int, h: int, w: int) -> Conv2dGw8Params:
    return Conv2dGw8Params.make(n, c, h, w, r=1, s=1, padding=0)


def _chunks(params: Conv2dGw8Params) -> FpropConfig:
    """The launcher's row chunks on an H200, and that it keeps them rather than segments."""
    tile = fprop_spec.default_config(params, H200_SMS)
    chunks = fprop.tile_chunks(params, tile, _slots, H200_SMS)
    assert segments_or_chunks(params, chunks, _slots) == chunks
    fprop_spec.check_config(params, chunks)
    return chunks


@pytest.mark.parametrize(
    ("shape", "block_q", "prefetch"),
    [
        # Grids of several waves two rows ahead (H200 gains over that tile in the comments).
        ((64, 672, 56, 56), 32, 6),  # 153.3 -> 130.6 us, 1.19x cuDNN (0.84x before)
        ((256, 768, 28, 28), 32, 6),  # 166.4 -> 149.5 us
        ((512, 256, 32, 32), 32, 6),  # long chunks six rows ahead walked segments (0.937x)
        # One wave two rows ahead, the short walk's grid two waves and more.
        ((64, 128, 56, 56), 32, 6),  # 1.13x
        ((32, 384, 28, 28), 32, 6),  # 2.04 waves, 1.09x
        ((64, 224, 56, 56), 32, 6),  # halves of 28 groups, 1.24x
        ((64, 480, 28, 28), 32, 6),  # the four-group tile, 1.22x
        # 20 groups a block: six rows ahead do not fit, five do.
        ((256, 480, 28, 28), 32, 5),  # 108.4 -> 93.8 us, 1.00x cuDNN before (dgrad)
        ((64, 160, 56, 56), 32, 5),  # one wave of whole pixels before, 1.06x
        # 16-column strips of images wider than a strip, six rows ahead already.
        ((64, 256, 80, 80), 16, 6),  # segments before: 0.96x cuDNN, 1.21x after
        ((16, 256, 40, 40), 16, 6),  # 1.45 waves, 1.63x
        ((64, 96, 112, 112), 16, 6),  # whole pixels of 12 groups, 1.06x
    ],
)
def test_1x1_tiles_of_long_walks_walk_short_chunks_as_deep_as_fit(
    shape: tuple[int, int, int, int], block_q: int, prefetch: int
) -> None:
    params = _pointwise(*shape)
    chunks = _chunks(params)
    assert (chunks.block_q, chunks.prefetch, chunks.segments) == (block_q, prefetch, 0)
    assert chunks.block_p <= POINTWISE_BLOCK_P
    assert is_pointwise_walk(params, chunks)


@pytest.mark.parametrize(
    "shape",
    [
        (8, 64, 112, 112),  # one wave; the short walk's 1568 blocks on 1320 slots: 0.82x
        (256, 256, 14, 14),  # 16-column images, one strip each
        (128, 256, 16, 16),  # the same, one wave: 0.98x
        (16, 128, 56, 56),  # the ladder's one-row-ahead tile: 0.93x
        (8, 96, 56, 56),  # the same, whole pixels of 12 groups: 0.88-0.91x
    ],
)
def test_other_1x1_tiles_keep_their_walk(shape: tuple[int, int, int, int]) -> None:
    params = _pointwise(*shape)
    tile = fprop_spec.default_config(params, H200_SMS)
    chunks = fprop.tile_chunks(params, tile, _slots_of_any, H200_SMS)
    assert chunks == fprop.walk_chunks(params, tile, _slots_of_any(tile), H200_SMS)
    assert not is_pointwise_walk(params, chunks)


def _slots_of_any(config: FpropConfig) -> int:
    """_slots, and stand-ins for the ladder's 16-column tiles one or two rows ahead (12 and 7
    an SM): the rule leaves those tiles whatever their slots, and both sides of the test
    place them alike."""
    if config.prefetch in (1, 2) and config.block_q == 16:
        return (12 if config.block_g == 8 else 7) * H200_SMS
    return _slots(config)


def test_the_rule_is_for_1x1_filters_loading_as_deep_as_their_strips_do() -> None:
    params = _pointwise(256, 512, 28, 28)
    tile = FpropConfig(32, 8, 2, 2, 32, 2, 8)
    short = pointwise_walk(params, tile, _slots)
    assert (short.block_p, short.prefetch) == (POINTWISE_BLOCK_P, POINTWISE_PREFETCHES[0])
    for other in (
        dataclasses.replace(tile, prefetch=1),  # the ladder's small-grid tiles
        dataclasses.replace(tile, block_p=POINTWISE_BLOCK_P),  # already short
        FpropConfig(16, 8, 2, 1, 32, 2, 8),  # 16 columns two rows ahead
    ):
        assert pointwise_walk(params, other, _slots) == other
    three = Conv2dGw8Params.make(256, 512, 28, 28)
    assert pointwise_walk(three, FpropConfig(32, 8, 2, 2, 32, 2, 16), _slots).prefetch == 2
    assert not is_pointwise_walk(three, dataclasses.replace(short, mma_k=16))
    narrow = _pointwise(256, 512, 14, 14)
    assert pointwise_walk(narrow, FpropConfig(16, 8, 2, 1, 16, 6, 8), _slots).block_p == 16


def test_the_launchers_shortened_walks_still_keep_their_row_chunks() -> None:
    # balance_waves may halve the 4-row walk where that fills the waves better; the rule's
    # rings on 1 x 1 filters keep row chunks at any walk that short.
    params = _pointwise(256, 512, 28, 28)
    for prefetch in POINTWISE_PREFETCHES:
        for block_p in range(1, POINTWISE_BLOCK_P + 1):
            config = FpropConfig(32, 8, 2, 2, block_p, prefetch, 8)
            assert is_pointwise_walk(params, config)
    assert not is_pointwise_walk(params, FpropConfig(32, 8, 2, 2, 8, 6, 8))
    assert not is_pointwise_walk(params, FpropConfig(32, 8, 2, 2, 4, 2, 8))
