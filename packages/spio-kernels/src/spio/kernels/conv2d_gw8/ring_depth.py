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

1 x 1 tiles of long walks walk short chunks as deep as fit instead (fprop_pointwise).
"""

from __future__ import annotations

import dataclasses

from ._tiling import fits
from .fprop_spec import FpropConfig, check_config, grid_blocks
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
