"""Where fprop's and dgrad's default loads two input rows ahead rather than the one row the
ladder's narrow tiles load (fprop_spec.TILE_LADDER): where its SMs hold few of its blocks
at a time. The rule chunks_config_on applies to the row chunks it would otherwise run.

One row ahead suffices where every SM holds four or five blocks of the tile from start to end:
the blocks' rows in flight together keep the SM's loads going. Where an SM holds fewer, each
block's own rows in flight set its pace, and a deeper ring pays:

- Grids of fewer than FEW_BLOCKS_PER_SM blocks an SM. In the campaigns' timings of the
  heuristic's tile at one and two rows ahead (H200 and H100, fprop and dgrad, the tile's own
  walk), two rows ran 1.028x faster in geometric mean over the 83 layer-passes of such grids,
  more than 2% faster on 54 and more than 2% slower on 6 (at worst 0.90x at 8x1024x14x14;
  up to 1.12x at 32x512x8x8 1 x 1).
- Grids of more than one wave, whose later blocks start as earlier ones end, a few an SM at
  a time: on an H200 (2026-11-29, tools/fprop_segments_check.py --prefetch 2 4 6, fprop,
  the launcher's chunks) 100x128x32x32 21.66 -> 18.57 us (1.167x), 100x128x28x28 1.104x,
  100x256x16x16 1.046x.

Grids of one full wave keep one row ahead: there two rows ran 0.965-0.992x (H200, the same
run: 32x64x64x64, 64x128x32x32, 64x64x48x48, 16x64x64x64), as 0.996x in the campaigns'
geometric mean over such grids.

1 x 1 tiles of 32-column strips, two rows ahead, walk 4 rows six rows ahead instead, in row
chunks, where their grid takes more than one wave (pointwise_walk). A 1 x 1 pass only streams
its bytes and re-reads no halo rows, so nothing is lost to short walks; a deep ring keeps
each block's rows in flight, and many short blocks keep every SM's slots refilled to the
end. On an H200 (2026-12-01, tools/fprop_variants_check.py, each tile placed as the launcher
places it, alternating in one process): the launcher's tile six rows ahead in its long
chunks gained 1.007-1.194x on 10 layers of grids of more than one wave but lost
0.937-0.955x where its chunks then walked segments, and in walks of 8 and 4 rows (row
chunks) it gained again, 1.06-1.13x and 1.08-1.19x over the long chunks six rows ahead, on
8 layers: 95-97.5% of copy, 1.11-1.27x cuDNN (64x672x56x56 153.3 -> 130.6 us,
128x384x56x56 168.1 -> 149.5, 256x768x28x28 166.4 -> 149.5, 256x96x56x56 80.6 -> 74.7),
where the tile two rows ahead ran at or below cuDNN on six of them (0.84-0.98x). Held out,
against the tile two rows ahead: 1.10-1.47x on 9 fprop layers and 3 dgrad, 94.5-99.5% of
copy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ._tiling import fits, replaced_if_fits
from .fprop_spec import DEEP_PREFETCH, TILE_Q, FpropConfig, check_config, grid_blocks
from .params import Conv2dGw8Params

#: Blocks an SM a grid of one wave must give for its tile to keep loading one row ahead.
FEW_BLOCKS_PER_SM = 3
#: The rows ahead such tiles load instead.
DEEPER_PREFETCH = 2


def deeper_ring(
    params: Conv2dGw8Params, config: FpropConfig, slots: int, sm_count: int
) -> FpropConfig:
    """config loading DEEPER_PREFETCH rows ahead where it loads one and its grid either
    gives the GPU's sm_count SMs fewer than FEW_BLOCKS_PER_SM blocks each or takes more
    than one wave of the `slots` blocks that fit at once; else config. params: the kernel's
    (for dgrad, dgrad_spec.to_fprop_params of the layer)."""
    if config.prefetch != 1:
        return config
    blocks = grid_blocks(params, config)
    if FEW_BLOCKS_PER_SM * sm_count <= blocks <= slots:
        return config
    deeper = dataclasses.replace(config, prefetch=DEEPER_PREFETCH)
    return deeper if fits(check_config, params, deeper) else config


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
