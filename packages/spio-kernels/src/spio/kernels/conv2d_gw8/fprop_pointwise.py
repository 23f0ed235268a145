"""Where fprop's and dgrad's 1 x 1 tiles walk 4 rows as many rows ahead as fit a block (six,
or five for blocks of 20 groups in 32-column strips) rather than their long walks, always in
row chunks: the rule fprop.tile_chunks applies to the heuristic's tile.

A 1 x 1 pass only streams its bytes and re-reads no halo rows, so nothing is lost to short
walks; a deep ring keeps each block's rows in flight, and many short blocks keep every SM's
slots refilled to the end. The long walks were made for filters that re-read halo rows.

The tiles that take it: strips of 32 columns or more two rows ahead (ring_depth.deeper_ring's
depth), and 16-column strips of images wider than one strip, which load six rows ahead
already (fprop_spec.DEEP_PREFETCH) in long walks. The ladder's one-row-ahead tiles of small
grids keep their walks: in short ones they gained 1.06-1.10x on four layers (8x256x28x28,
4x512x28x28, 32x128x32x32, 16x256x32x32) but lost 0.88-0.94x on two (16x128x56x56,
8x96x56x56), too few to draw the line between. So do 16-column images, one strip each
(256x256x14x14 1.013x, 128x256x16x16 0.983x: little to gain).

On an H200 (tools/fprop_variants_check.py, each tile placed as the launcher places it,
alternating in one process; fprop unless named):

- 2026-12-01 (fifty-seventh session), grids of several waves, 32-column strips: the tile six
  rows ahead in its long chunks gained 1.007-1.194x on 10 layers but lost 0.937-0.955x where
  its chunks then walked segments; in 4-row chunks it gained 1.08-1.19x more on 8 layers:
  95-97.5% of copy, 1.11-1.27x cuDNN (64x672x56x56 153.3 -> 130.6 us, 128x384x56x56 168.1
  -> 149.5, 256x768x28x28 166.4 -> 149.5). Held out: 1.10-1.47x on 9 fprop layers and 3
  dgrad.
- 2026-12-01 (fifty-eighth session), over the launcher before these cases:
  - grids of one wave, 32-column strips: 1.03-1.13x on 7 layers (64x128x56x56 30.16 ->
    26.72 us, 32x384x28x28 1.09x); held out, 1.008-1.10x on 4 layers and 2 dgrad
    (24x128x64x64 12.91 -> 11.69 us), 1.06-1.33x where the blocks take 14, 20 or 4 groups
    (96x480x28x28 51.44 -> 38.67 us, 64x224x56x56 dgrad 1.26x);
  - 16-column strips of wider images: 1.06-1.21x on 5 layers (64x256x80x80 123.2 -> 101.6
    us, from 0.96x cuDNN to 1.16x, whose long walks ran as segments); held out, 1.015-1.63x
    on 8 layers and 3 dgrad (16x256x40x40 9.18 -> 5.63 us, 256x128x40x40 1.28x), but 0.82x
    and 0.83x on 8x64x112x112 (ONE_WAVE_MIN_WAVES);
  - blocks of 20 groups five rows ahead: 256x480x28x28 108.4 -> 93.8 us (1.156x, dgrad
    1.154x: 1.00x cuDNN before, 1.15x after); held out 128x160x56x56 1.153x and 1.159x dgrad,
    64x160x56x56 1.063x.

Kept out of the sources digest (sources_digest.PASS_FILES): it decides which config runs,
not what a config compiles to.
"""

from __future__ import annotations

from collections.abc import Callable

from ._tiling import replaced_if_fits
from .fprop_spec import DEEP_PREFETCH, TILE_Q, FpropConfig, check_config, grid_blocks
from .params import Conv2dGw8Params
from .ring_depth import DEEPER_PREFETCH

#: The rows ahead pointwise_walk gives 1 x 1 tiles, the deepest that fits a block: fprop_spec's
#: deepest ring, or for blocks of 20 groups in 32-column strips (a third of 60), whose six
#: rows ahead need 104,960 bytes of shared memory, five.
POINTWISE_PREFETCHES = (6, 5, 4)
#: The walk pointwise_walk gives them: fprop_spec's shortest.
POINTWISE_BLOCK_P = 4

#: The fewest waves of its block slots a short walk's grid may take past one where the tile's
#: own grid fits one wave: a grid just past one wave runs its last blocks alone after the
#: first wave, a tail the short layers that fit one wave do not hide (8x64x112x112: 1568
#: blocks on 1320 slots, 0.82x; grids of 1.45 waves and more gained 1.06-1.63x).
ONE_WAVE_MIN_WAVES = 4 / 3


def pointwise_walk(
    params: Conv2dGw8Params, config: FpropConfig, slots_of: Callable[[FpropConfig], int]
) -> FpropConfig:
    """config walking POINTWISE_BLOCK_P rows the first of POINTWISE_PREFETCHES rows ahead
    that fits, where the filter is 1 x 1 and config streams long walks (_streams_long_walks):
    strips of two or more column tiles loading DEEPER_PREFETCH rows ahead, or strips of one
    (16 columns) of a wider image loading fprop_spec.DEEP_PREFETCH rows ahead; unless config's
    grid fits one wave and the short walk's takes more than one but fewer than
    ONE_WAVE_MIN_WAVES; else config. slots_of(config): the blocks of config that fit on the
    GPU at once (compiling it). Such walks run in row chunks (fprop_segments.walks_segments).
    params: the kernel's (for dgrad, dgrad_spec.to_fprop_params of the layer)."""
    short = _short_walk(params, config)
    if short is None:
        return config
    if grid_blocks(params, config) <= slots_of(config):
        waves = grid_blocks(params, short) / slots_of(short)
        if 1 < waves < ONE_WAVE_MIN_WAVES:
            return config
    return short


def _short_walk(params: Conv2dGw8Params, config: FpropConfig) -> FpropConfig | None:
    if not _streams_long_walks(params, config):
        return None
    for prefetch in POINTWISE_PREFETCHES:
        short = replaced_if_fits(
            check_config, params, config, block_p=POINTWISE_BLOCK_P, prefetch=prefetch
        )
        if short is not None:
            return short
    return None


def _streams_long_walks(params: Conv2dGw8Params, config: FpropConfig) -> bool:
    if (params.r, params.s) != (1, 1) or config.block_p <= POINTWISE_BLOCK_P:
        return False
    if config.block_q > TILE_Q:
        return config.prefetch == DEEPER_PREFETCH
    return config.block_q == TILE_Q < params.q and config.prefetch == DEEP_PREFETCH


def is_pointwise_walk(params: Conv2dGw8Params, config: FpropConfig) -> bool:
    """Whether config is a walk pointwise_walk gives, or the launcher's placement of one
    (which may shorten it to fill the waves): such walks keep their row chunks."""
    return (
        (params.r, params.s) == (1, 1)
        and config.block_p <= POINTWISE_BLOCK_P
        and config.prefetch in POINTWISE_PREFETCHES
    )
