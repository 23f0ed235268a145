"""Row chunks cut evenly: an image's rows in as many chunks as the config's block_p gives,
each as long as the others (the last one shorter by the remainder where they do not divide),
rather than full chunks and a short last one. Every pass's launcher cuts the chunks of the
config it runs so: fprop and dgrad (fprop.walk_chunks, placement.placed_config_on) and wgrad
(wgrad.balanced_config_on). A config given to a kernel entry runs as given.

A grid's time is its slowest blocks'. Chunks of 16 rows on a 56-row image walk 16, 16, 16
and 8 rows; the blocks of the first three set the pace while the last ones idle half their
time. Chunks of 14 walk the same rows in the same blocks, each 14: the slowest walks 12.5%
fewer rows. On an H200 (2026-11-30, tools/fprop_variants_check.py, the launcher's default
against the same tile in even chunks, alternating in one process, 3 x 3, fprop; dgrad alike):
64x64x56x56 17.12 -> 15.33 us (1.117x, chunks of 14 for 16), 32x128x56x56 1.093x,
32x64x56x56 1.078x, 128x64x56x56 1.074x (28 for 32), 256x64x56x56 1.045x (28 rather than
the segments the uneven chunks made it walk), and on 28-row images 1.033-1.105x (14 for
16: 128x128x28x28 16.52 -> 15.23 us).

wgrad's launcher defaults gained the same way (H200, the same day,
tools/wgrad_variants_check.py): 128x64x20x20 18.90 -> 12.45 us (1.518x, chunks of 10 for
16), 64x64x50x50 1.206x (25 for 32), 64x128x24x24 1.183x (12 for 16), 64x64x56x56 1.089x
(28 for 32), 32x64x56x56 and 128x64x28x28 1.013x and 1.004x (14 for 16).

The same fprop tiles with 8 columns of two images a block (no column past a 56-wide image's edge)
and with 4 columns of four images on 28-wide ones ran 0.73-1.01x: the columns past the edge
cost less than the halo columns narrower strips read again.
"""

from __future__ import annotations

import dataclasses
from typing import TypeVar

from ._tiling import ceil_div
from .fprop_spec import FpropConfig
from .params import Conv2dGw8Params
from .wgrad_spec import WgradConfig

Config = TypeVar("Config", FpropConfig, WgradConfig)


def even_rows(rows: int, block_p: int) -> int:
    """The rows of each of the chunks that cut `rows` output rows into as many chunks as
    block_p-row ones would, as evenly as whole rows allow (the last one shorter by the
    remainder)."""
    return ceil_div(rows, ceil_div(rows, block_p))


def even_chunks(params: Conv2dGw8Params, config: Config) -> Config:
    """config with its image's row chunks cut evenly (even_rows), or config where its walk
    is already even, walks segments or is one chunk (params: the kernel's; for dgrad,
    dgrad_spec.to_fprop_params of the layer). The grid, and so the number of wgrad's partial
    sums, is the same."""
    if config.segments or config.block_p >= params.p:
        return config  # (one chunk of the image's rows, however long the tile's)
    block_p = even_rows(params.p, config.block_p)
    if block_p >= config.block_p:
        return config
    return dataclasses.replace(config, block_p=block_p)
