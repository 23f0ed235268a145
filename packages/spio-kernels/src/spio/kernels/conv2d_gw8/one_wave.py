"""Where fprop and dgrad's default, on a grid of one wave at most, walks row chunks half as
long: the rule default_config_on applies to such grids, which _tiling.balance_waves would
leave alone (they spread over every SM, so they "fill" it).

A one-wave grid of 32-row chunks (on 132 SMs, the ladder's first tile gives 512 blocks of 4
warps for 528 slots) ran slower than the same tile's 16-row chunks in two waves in two cases,
on an H200 (2026-11-29, tools/one_wave_chunks_check.py: alternating in one process, the
default against its shorter walk: the one-wave layers of campaign seeds 0 to 6 and 16
layers of the tool's own, 44 in all, both passes):

- Uneven chunks. Where 32 does not divide the image's rows, the blocks of each image's last
  chunk walk fewer rows and finish early, and in one wave nothing takes their SMs. 48 rows
  (32 + 16) and 40 (32 + 8) ran 1.07-1.36x faster in 16-row chunks (48: three even
  ones; 40: 16 + 16 + 8, still uneven, but the blocks now share two waves): 16x512x40x40
  31.8 -> 26.3 us, 64x128x40x40 1 x 1 18.3 -> 13.7, 128x64x48x48 32.5 -> 27.8. Where the
  halving evens the chunks less (56 rows, 32 + 24 against 16 + 16 + 16 + 8: 0.98x; 112 rows,
  3.5 chunks against 7: 1.00x) or unevens them (28 rows in one chunk against 16 + 12:
  0.91x, 5 x 5 0.75x), it does not pay.
- Filters of three rows. With 32 dividing the rows (32, 64 or 128) the 3 x 3 layers ran
  1.001-1.110x faster in 16-row chunks, on all 11 layers and both passes (128x64x64x64 fprop
  1.001x, dgrad 38.09 -> 37.22 us; 256x128x32x32 1.08x and 1.11x; 64x128x64x64 1.10x).
  1 x 1 filters lost there (0.96-1.00x, no halo to share), 2 x 2 went either way (0.95-1.02x),
  and 5 x 5 lost (0.86-0.90x, two layers of the held-out seeds below).

Chunks of 16 rows and fewer keep their walks: halving them to 8 lost 7-19% on every 3 x 3
layer measured (64x64x64x64, 512x64x16x16, 32x512x32x32).

Held out, on the 31 one-wave layers of campaign seeds 7 to 13, the rule halved two
(128x64x64x64 1.002x and 1.025x, 32x1024x32x32 bf16 1.010x and 1.035x) and kept every layer
where halving lost; its choice ran 1.000x and 1.002x the old default's in geometric mean,
never slower, where halving all of them would have run 0.92x.
"""

from __future__ import annotations

from ._tiling import ceil_div
from .fprop_spec import FpropConfig, shorter_walk
from .params import Conv2dGw8Params

#: The shortest row chunks a one-wave grid halves.
MIN_SPLIT_BLOCK_P = 32
#: How much more of its chunks' rows the halved walk must fill (chunk_fill) where the image's
#: chunks are uneven: 48 and 40 rows gain 1.33x (and ran 1.07-1.36x faster), 112 only 1.14x
#: (and ran as fast).
MIN_CHUNK_FILL_GAIN = 1.2
#: The filter rows whose evenly divided images gain from the halved walk.
SPLIT_FILTER_ROWS = 3


def chunk_fill(rows: int, block_p: int) -> float:
    """The share of its row chunks' rows an image of `rows` output rows fills with chunks of
    block_p rows (one chunk of all of them where block_p is larger): 1.0 where the chunks
    divide the rows evenly."""
    chunk = min(block_p, rows)
    return rows / (ceil_div(rows, chunk) * chunk)


def split_one_wave(params: Conv2dGw8Params, config: FpropConfig) -> FpropConfig:
    """The config a grid of one wave at most runs instead of config: its shorter walk
    (fprop_spec.shorter_walk) where the module's rule takes it, else config. params are the
    kernel's (for dgrad, dgrad_spec.to_fprop_params of the layer)."""
    if config.block_p < MIN_SPLIT_BLOCK_P:
        return config
    shorter = shorter_walk(params, config)
    if shorter is None or shorter.block_p >= params.p:
        return config  # no halved walk, or one that is still the whole image
    before = chunk_fill(params.p, config.block_p)
    after = chunk_fill(params.p, shorter.block_p)
    if after >= MIN_CHUNK_FILL_GAIN * before:
        return shorter
    if params.r == SPLIT_FILTER_ROWS and before == after == 1.0:
        return shorter
    return config
