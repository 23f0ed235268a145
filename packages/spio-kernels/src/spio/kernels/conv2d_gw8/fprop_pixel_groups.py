"""fprop's and dgrad's tiles that read whole pixels, halves of them, or runs of 20, 14 or 12
groups, on layers whose groups are not a multiple of 8 (96, 160, 224, 480, 672 channels).

The heuristic's ladder keeps eight groups a block, one 128-byte line of each pixel; where
eight does not divide the groups it halves them to four: 64 bytes, half a line, the other
half read by another block, and the pixels' lines split between blocks that do not run
together. On those layers the passes ran at 58-74% of copy (8-group layers: 85-88%), and
1 x 1 passes, which only stream their bytes, ran level with cuDNN or slower (256x480x28x28
fprop 0.90x, dgrad 0.84x). A block of all of a pixel's groups reads each row as one run of
whole lines.

On an H200 (2026-12-01, tools/fprop_variants_check.py: the heuristic's tile against the
same tile with more groups a block, each placed as the launcher places it, alternating in one
process; gain over the four-group tile, fprop unless named):

- 1 x 1, whole pixels: 12 groups 1.08-1.33x on 8 layers (256x96x56x56 114.2 -> 86.0 us,
  512x96x14x14 1.22x, 8x96x56x56 1.10x, dgrad 128x96x56x56 1.19x); 20 groups 1.35-1.78x
  (256x160x14x14 10.1 -> 5.7 us, 128x160x28x28 1.37x, dgrad 1.38x); 28 groups in halves of 14
  1.37-1.38x (whole pixels of 28, 1.45x, need 14 warps);
- 1 x 1, runs: of 20 of 60 groups 1.27x (128x480x14x14) and 1.20-1.21x (256x480x28x28, fprop
  and dgrad: 0.90x and 0.84x cuDNN before, 1.08x and 1.01x after); of 14 of 84, 1.72x
  (64x672x14x14) and 1.07x (256x672x14x14); on grids of at most 192 blocks they ran
  0.92-1.04x (32x480x14x14, 64x480x28x28, 32x672x28x28), so runs need
  RUN_MIN_BLOCKS_PER_SM;
- 3 x 3: whole pixels of 12 and halves of 28 gained 1.02-1.15x on 9 layers (128x224x56x56
  124.1 -> 108.1 us, 128x224x28x28 1.12x, 16x96x112x112 1.07x); 20 groups, one block of 10
  warps an SM, ran 0.91-1.11x (32x160x56x56 0.91x), and runs of 60 and 84 groups on 7 x 7
  and 14 x 14 images 0.79-0.96x: filters past 1 x 1 keep their tile there.

Held out (the same tool, the rule's tile against the four-group one, on layers the rule was
not written from): 1 x 1, 16 layers of fprop and 4 of dgrad, 1.007-1.50x, every one faster
or level (24x96x28x28 4.66 -> 3.10 us, 32x160x28x28 1.41x, 96x160x56x56 1.30x and 1.29x
dgrad: 1.01x and 0.93x cuDNN before, 1.31x and 1.19x after). 3 x 3, 11 layers: 1.03-1.13x
on 32-column strips of grids of 256 blocks or more (32x224x56x56 1.13x, 256x96x56x56
1.05x), but 0.89-0.96x on most 16-column strips and 0.90x on a grid of 192 blocks: the
rule's FILTER_MIN_BLOCK_Q and FILTER_MIN_BLOCKS_PER_SM came from those, after.

Kept out of the sources digest (sources_digest.PASS_FILES): it decides which config runs,
not what a config compiles to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._tiling import replaced_if_fits
from .params import LINE_GROUPS, Conv2dGw8Params

if TYPE_CHECKING:
    from .fprop_spec import FpropConfig

#: The tile the rule widens: the ladder's, fitted to a layer whose groups 8 does not divide.
NARROW_BLOCK_G = 4
#: Groups per block of the wider tiles for 1 x 1 filters, the first that divides the layer's
#: groups and fits a block (warps and shared memory): 12 and 20 are whole pixels, 14 half of
#: 28 groups or a sixth of 84, 20 a third of 60, 12 a run of any other multiple of 12.
POINTWISE_GROUPS = (20, 14, 12)
#: The same for filters past 1 x 1, whose blocks of 20 groups hold one block of 10 warps an
#: SM (at 3 x 3, 126-131 registers a thread) and ran slower where the grid was small.
FILTER_GROUPS = (14, 12)
#: The most blocks that may share a pixel's groups for filters past 1 x 1 (whole pixels of
#: 12 and halves of 28: runs of 60 and 84 groups lost on small images).
FILTER_MAX_SHARES = 2
#: The largest filter (rows x columns) the rule widens: 3 x 3. At 5 x 5 and 7 x 7 whole
#: pixels ran 0.93-0.98x (64x96x56x56 5 x 5, 32x96x28x28 7 x 7, 64x224x28x28 5 x 5).
MAX_FILTER_TAPS = 9
#: The narrowest strips whose tiles the rule widens for filters past 1 x 1: 32 columns. On
#: 16-column strips whole pixels ran 0.89-1.12x, slower on 14 x 14 images (512x96x14x14
#: 0.89x, 256x224x14x14 0.89x) and on 64x96x28x28 (0.92x); on 32-column strips 1.02-1.15x.
FILTER_MIN_BLOCK_Q = 32
#: Blocks per SM the wider grid must hold for filters past 1 x 1: the blocks of 12 or 14
#: groups hold two an SM (about 128 registers a thread), so a grid of 192 blocks on 132 SMs
#: leaves 72 of them one block (96x224x28x28 0.90x), where 256 blocks gained 1.02-1.13x.
FILTER_MIN_BLOCKS_PER_SM = 1.5
#: Groups per warp the wider tile may take, the tile's own first: the first that keeps the
#: block within its warps (the 16-column ladder tile walks one group a warp, so 20 groups
#: would be 20 warps).
WARP_G_STEPS = (2, 4)
#: The share of the SMs a grid of blocks sharing a pixel at most FILTER_MAX_SHARES ways must
#: give a block at least, as wgrad_pixel_groups' (128 blocks on 132 SMs gained 1.45x).
PIXEL_MIN_SM_SHARE = 0.5
#: Blocks per SM a grid of runs (a third of a pixel or less) must hold at least: grids of
#: 192 blocks ran 0.92-1.04x, of 384 and more 1.07-1.72x.
RUN_MIN_BLOCKS_PER_SM = 2.5


def pixel_groups_tile(params: Conv2dGw8Params, config: FpropConfig, sm_count: int) -> FpropConfig:
    """config with the first of POINTWISE_GROUPS (1 x 1 filters) or FILTER_GROUPS (filters of
    at most MAX_FILTER_TAPS, shared by at most FILTER_MAX_SHARES blocks a pixel) that divides
    the layer's groups and fits a block, at the tile's groups a warp or the first of
    WARP_G_STEPS that fits; where the groups are not a multiple of LINE_GROUPS, config is the
    ladder's NARROW_BLOCK_G-group tile of one image's columns (at least FILTER_MIN_BLOCK_Q
    of them for filters past 1 x 1), and the wider grid holds enough blocks: for 1 x 1
    filters a block on PIXEL_MIN_SM_SHARE of the SMs (blocks sharing a pixel at most two
    ways) or RUN_MIN_BLOCKS_PER_SM blocks an SM (runs), for others FILTER_MIN_BLOCKS_PER_SM;
    else config. params: the kernel's (for dgrad, dgrad_spec.to_fprop_params of the
    layer)."""
    from .fprop_spec import TILE_Q, grid_blocks

    if not _widens(params, config, TILE_Q):
        return config
    wide = _widest(params, config)
    if wide is None:
        return config
    if (params.r, params.s) != (1, 1):
        least = FILTER_MIN_BLOCKS_PER_SM
    elif params.groups // wide.block_g <= 2:
        least = PIXEL_MIN_SM_SHARE
    else:
        least = RUN_MIN_BLOCKS_PER_SM
    return wide if grid_blocks(params, wide) >= least * sm_count else config


def _widens(params: Conv2dGw8Params, config: FpropConfig, tile_q: int) -> bool:
    pointwise = (params.r, params.s) == (1, 1)
    return (
        params.groups % LINE_GROUPS != 0
        and params.r * params.s <= MAX_FILTER_TAPS
        and config.block_g == NARROW_BLOCK_G
        and config.block_q >= (tile_q if pointwise else FILTER_MIN_BLOCK_Q)
        and not config.segments
    )


def _widest(params: Conv2dGw8Params, config: FpropConfig) -> FpropConfig | None:
    """The first width of the rule's groups that divides params' groups and fits a block."""
    from .fprop_spec import check_config

    pointwise = (params.r, params.s) == (1, 1)
    for groups in POINTWISE_GROUPS if pointwise else FILTER_GROUPS:
        if params.groups % groups or (
            not pointwise and params.groups // groups > FILTER_MAX_SHARES
        ):
            continue
        for warp_g in dict.fromkeys((config.warp_g, *WARP_G_STEPS)):
            wide = replaced_if_fits(check_config, params, config, block_g=groups, warp_g=warp_g)
            if wide is not None:
                return wide
    return None
