"""wgrad's row chunks for 1 x 1 filters on layers whose groups are not a multiple of 8
(96, 160, 224, 480, 672 channels): the heuristic's tile of four groups and two images side
by side walks chunks of POINTWISE_BLOCK_P rows where that grid still fills its waves.

A 1 x 1 pass reads every byte once, whatever the tile, so its time is how close its reads
come to the copy rate. The heuristic's long chunks (half the image's rows) fell short of it
twice over: grids of a few waves that leave the last one idle are walked as segments across
the images by the launcher (wgrad._balanced_walk), which ran slowest, and even full grids
ran faster in shorter chunks (not yet profiled: the blocks of a chunk's group slices run
side by side, and shorter chunks keep more of them on each image's rows at once). On an H200
(2026-11-30, tools/wgrad_variants_check.py --variants block_p=16, each as the launcher
places it, alternating in one process):

- where the long chunks walked segments: 16x480x112x112 152.5 -> 105.2 us (1.45x; 0.86x
  cuDNN before, 1.24x after), 32x224x80x80 71.4 -> 53.7 (1.33x), 8x480x80x80 1.096x,
  64x96x112x112 1.044x;
- where they filled their waves: 256x480x80x80 1004.6 -> 872.0 us (1.15x), 128x160x80x80
  1.014x, 512x96x112x112 0.980-0.993x (three runs);
- where 16-row chunks would leave their own last wave idle, the launcher walks segments and
  they lose (24x96x112x112, one wave of 504 blocks: 34.1 -> 36.2 us), so those layers keep
  their tile; so does a grid of one wave.

Held out, with the rule as it stands (tools/wgrad_former_default_check.py, the former
default against this one as the launcher places each, alternating in one process; 9 of the
439 layers the rule changes on a grid of 15940 (N 1 to 1024, C 64 to 1024 with the network
widths, sides 4 to 112, 1 x 1 to 7 x 7), and 4 of the layers above): 1.113x in
geometric mean, 0.948-1.418x, 10 of 13 faster. 64x672x56x56 178.2 -> 146.8 us (1.214x),
128x224x40x40 1.364x, 256x96x32x32 1.102x (32-row chunks before); slower: 4x672x112x112 and
128x480x28x28 0.948x, 512x96x112x112 0.979x.

Eight-group tiles (whole 128-byte pixel lines) lost with 16-row chunks, 0.92-0.97x on four
of five layers at 90-98% of the copy rate (128x128x64x64, 64x256x56x56), and keep theirs.
"""

from __future__ import annotations

import dataclasses

from ._tiling import WAVE_FILL, wave_fill
from .even_chunks import even_chunks
from .params import LINE_GROUPS, Conv2dGw8Params
from .wgrad_spec import WgradConfig, _is_valid, grid_blocks

#: Rows of each chunk the 1 x 1 tile walks (before the launcher cuts them evenly).
POINTWISE_BLOCK_P = 16
#: Blocks of that tile (4 warps, few registers and 16 KiB of shared memory) an SM holds at
#: once, as its kernel counts them on an H200: 528 on 132 SMs. (The kernel's per-image
#: barriers are named by a register, so each block reserves all 16 of its hardware barriers.
#: With immediate barrier numbers 13 blocks fit, and the tile ran no faster: 512x96x112x112
#: 0.89x and 256x480x80x80 0.82x as fast, 16x480x112x112 1.07x, in the same run.)
POINTWISE_TILE_BLOCKS_PER_SM = 4
#: The tile the rule applies to: (block_q, block_g, warp_g, block_n), its images synced on
#: their own, without TMA rows, one step a block.
POINTWISE_TILE = (16, 4, 2, 2)


def _pointwise_layer(params: Conv2dGw8Params) -> bool:
    return (params.r, params.s) == (1, 1) and params.groups % LINE_GROUPS != 0


def _pointwise_tile(config: WgradConfig) -> bool:
    fields = (config.block_q, config.block_g, config.warp_g, config.block_n)
    return fields == POINTWISE_TILE and config.image_sync and not config.tma and config.walk_n == 1


def pointwise_chunks(params: Conv2dGw8Params, config: WgradConfig, sm_count: int) -> WgradConfig:
    """config walking POINTWISE_BLOCK_P-row chunks where the layer's filter is 1 x 1 and its
    groups are not a multiple of LINE_GROUPS, config is POINTWISE_TILE in longer chunks, its
    grid (in even chunks) takes more than one wave of POINTWISE_TILE_BLOCKS_PER_SM blocks an
    SM, and the shorter chunks' grid fills at least WAVE_FILL of its waves; else config."""
    if not _pointwise_layer(params) or not _pointwise_tile(config):
        return config
    if config.block_p <= POINTWISE_BLOCK_P:
        return config
    slots = POINTWISE_TILE_BLOCKS_PER_SM * sm_count
    if grid_blocks(params, even_chunks(params, config)) <= slots:
        return config
    short = dataclasses.replace(config, block_p=POINTWISE_BLOCK_P)
    if not _is_valid(params, short):
        return config
    if wave_fill(grid_blocks(params, even_chunks(params, short)), slots) < WAVE_FILL:
        return config
    return short


def walks_pointwise_chunks(params: Conv2dGw8Params, config: WgradConfig) -> bool:
    """Whether config is POINTWISE_TILE in POINTWISE_BLOCK_P-row chunks on a layer the rule
    covers whose images have more rows (pointwise_chunks' tiles)."""
    return (
        _pointwise_layer(params)
        and _pointwise_tile(config)
        and config.block_p == POINTWISE_BLOCK_P < params.p
    )
