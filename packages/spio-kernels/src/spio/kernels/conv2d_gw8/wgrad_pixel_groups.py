"""wgrad's 1 x 1 tiles that read whole pixels, or whole runs of 20 or 12 groups, on layers
whose groups are not a multiple of 8 (96, 160, 480, 672 channels).

A 1 x 1 pass reads every byte once, so its time is how close its reads come to the copy rate.
The heuristic's 1 x 1 tile takes four groups: 64 bytes of each pixel, half a 128-byte line,
the other half read by another block. On 12-group layers (192-byte pixels) that ran at 71-85%
of copy, and 512x96x112x112 slower than cuDNN (0.86x), which reads them at 96%. A block of
all 12 groups reads each row's pixels as one run of whole lines. Such a block has three times
the work, so where the grid stays large it also walks two steps of images, which halves its
partial sums and pipeline fills again.

On an H200 (2026-12-01, tools/wgrad_variants_check.py --check-all, each tile as the launcher
places it, alternating in one process; the gain over the four-group tile):

- 12 groups, whole pixels: 512x96x112x112 710.4 -> 598.8 us (1.186x with two steps, 1.02x
  cuDNN; 1.103x with one), 64x96x112x112 1.184x, 1024x96x14x14 1.186x, 256x96x32x32 1.178x,
  256x96x56x56 1.156x; on smaller grids one step, as two would leave SMs idle:
  8x96x112x112 10.67 -> 8.79 us (98 blocks, 1.213x; two steps 0.716x), 24x96x112x112
  1.117x, 32x96x56x56 1.085x;
- 20 groups, whole pixels: 128x160x80x80 1.221x (two steps), 256x160x28x28 1.171x,
  16x160x112x112 1.137x;
- runs of 20 groups of 60: 256x480x80x80 1.089x, 128x480x28x28 1.106x (two steps);
- runs of 12 groups of 84: 4x672x112x112 1.060x, 48x672x80x80 1.025x (two steps);
- lost: 4x96x56x56, a grid of 48 blocks that whole pixels cut to 16 (0.709x), so the
  rule keeps the tile where the wider grid would leave most SMs without a block; 28 groups
  in runs of 14 (7 lines of 32 bytes: no whole lines either) ran 0.981-1.059x and keep
  theirs.

Held out (tools/wgrad_former_default_check.py, the former default against this rule's tile,
both as the launcher places them, alternating in one process): 23 of the 587 layers the rule
changed before RUN_MIN_BLOCKS_PER_SM, on a grid of 1470 1 x 1 layers (96, 160, 224, 480 and
672 channels, N 1 to 1024, sides 4 to 112), ran 1.041x in geometric mean, 0.846-1.217x; 17
gained: 128x480x20x20 35.57 -> 29.23 us, 512x96x56x56 1.150x, 96x96x80x80 1.146x,
24x96x56x56 1.166x, 512x96x112x112 697.01 -> 608.56 (cuDNN 609.53). The five that lost were
runs on small grids (1x480x80x80 0.866x, 2x672x56x56 0.846x, 4x480x56x56 0.847x,
16x480x24x24 0.860x, 48x672x14x14 0.894x): RUN_MIN_BLOCKS_PER_SM now keeps their tile, and
16x672x40x40's, which gained 1.110x. On the 17 the rule still changes (516 of the grid's
layers): 1.096x, 0.994-1.217x.
"""

from __future__ import annotations

from ._tiling import replaced_if_fits
from .even_chunks import even_chunks
from .params import LINE_GROUPS, Conv2dGw8Params
from .wgrad_spec import WgradConfig, check_config, grid_blocks

#: Groups per block of the wider tiles, the first that divides the layer's groups and
#: fits the block (at most 16 warps): multiples of 4, so that every run starts on a
#: 64-byte boundary; 20 groups take 80 KiB of rings (two blocks an SM), more would take
#: one.
PIXEL_GROUPS = (20, 12)
#: Groups per warp of the wider tiles: 5 or 3 warps per row of images (2 and 6 ran as fast
#: at 12 groups; 10 took 124 registers).
PIXEL_WARP_G = 4
#: Steps of images a wider block walks where its grid stays large.
PIXEL_WALK_N = 2
#: The share of the SMs the wider grid of whole pixels must give a block at least
#: (4x96x56x56: 16 blocks on 132 SMs lost 0.709x; 8x96x112x112: 98 blocks gained 1.213x).
PIXEL_MIN_SM_SHARE = 0.5
#: Blocks per SM the wider grid of runs (part of each pixel, 60 and 84 groups) must hold at
#: least, before its walk: grids of 75 to 168 blocks lost 0.846-0.894x on passes of 5 to 7
#: us (2x672x56x56, 4x480x56x56, 48x672x14x14), grids of 384 blocks and more gained.
RUN_MIN_BLOCKS_PER_SM = 2.0
#: The share of the SMs a grid walked two steps must keep busy (a block each at least):
#: walked grids of 49 to 84 blocks lost 0.55-0.84x, of 256 blocks on 132 SMs gained.
PIXEL_WALK_SM_SHARE = 1.0
#: The heuristic's 1 x 1 tile the rule widens: 16 columns of four groups (its images, warps
#: a group and ring depth as the heuristic set them).
NARROW_BLOCK_Q = 16
NARROW_BLOCK_G = 4


def _narrow_pointwise_tile(params: Conv2dGw8Params, config: WgradConfig) -> bool:
    return (
        (params.r, params.s) == (1, 1)
        and params.groups % LINE_GROUPS != 0
        and (config.block_q, config.block_g) == (NARROW_BLOCK_Q, NARROW_BLOCK_G)
        and config.walk_n == 1
        and not (config.tma or config.segments or config.block_r)
    )


def pixel_groups_tile(params: Conv2dGw8Params, config: WgradConfig, sm_count: int) -> WgradConfig:
    """config with the first of PIXEL_GROUPS that divides the layer's groups and fits per
    block, PIXEL_WARP_G a warp, walking PIXEL_WALK_N steps of images where that grid still
    gives every SM a block (PIXEL_WALK_SM_SHARE), where the filter is 1 x 1, the groups are
    not a multiple of LINE_GROUPS (whose layers read whole lines with eight-group tiles
    already), config is the heuristic's tile of NARROW_BLOCK_G groups in
    NARROW_BLOCK_Q columns walking one step, and the wider grid (its rows in even chunks)
    gives at least PIXEL_MIN_SM_SHARE of the SMs a block where its blocks read whole pixels,
    or holds RUN_MIN_BLOCKS_PER_SM blocks an SM where they read runs of them; else config."""
    if not _narrow_pointwise_tile(params, config):
        return config
    widths = (
        replaced_if_fits(check_config, params, config, block_g=groups, warp_g=PIXEL_WARP_G)
        for groups in PIXEL_GROUPS
        if params.groups % groups == 0
    )
    wide = next((tile for tile in widths if tile is not None), None)
    if wide is None:
        return config
    whole = wide.block_g == params.groups
    least = PIXEL_MIN_SM_SHARE if whole else RUN_MIN_BLOCKS_PER_SM
    if grid_blocks(params, even_chunks(params, wide)) < least * sm_count:
        return config
    walked = replaced_if_fits(check_config, params, wide, walk_n=PIXEL_WALK_N)
    if (
        walked is not None
        and grid_blocks(params, even_chunks(params, walked)) >= PIXEL_WALK_SM_SHARE * sm_count
    ):
        return walked
    return wide
