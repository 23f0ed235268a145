"""Where fprop and dgrad's default walks segments of each column strip's stream of rows
(FpropConfig.segments) rather than row chunks: the rule default_config_on applies to the
config of row chunks it would otherwise run.

Segments give every block of one wave the same rows, whatever the batch, at the price of R - 1
halo rows per image a segment crosses, and of a wave that starts and ends all at once. On an
H200 (2026-11-29, tools/fprop_segments_check.py: the launcher's row chunks against the
heuristic's tile in one wave of segments, alternating in one process, fprop; dgrad alike):

- Where the row chunks were already even, segments lost: 128x64x64x64 37.10 -> 37.49 us
  (0.989x), 192x64x64x64 0.987x, 256x64x64x64 0.989x, 512x64x64x64 0.976x, and one-wave
  grids 0.95x (64x64x64x64, 128x128x32x32).
- Images of 16 rows or fewer lost whatever the chunks (0.86-0.99x: 512x256x14x14,
  256x256x16x16, 128x1024x16x16), as did 7 x 7 filters on 28 rows (0.88x).
- Where the chunks were not, segments won: walks of 8 rows that evened the waves
  (96x64x64x64 30.06 -> 28.90 us, 1.040x; dgrad 1.040x), a last wave 61% full
  (100x128x32x32 21.54 -> 19.58 us, 1.100x) and chunks uneven on the image (56 rows in
  chunks of 32: 128x64x56x56 5 x 5 60.39 -> 54.70 us, 1.104x).

Since the launcher cuts its chunks evenly (even_chunks), they are uneven only where their
count does not divide the rows, and those two layers walk even chunks instead: 128x64x56x56
5 x 5 in two chunks of 28 rows ran 54.12 -> 50.14 us against the segments (1.079x),
64x128x48x48 5 x 5 in two of 24 1.009x (H200, 2026-11-30, tools/even_chunks_check.py).

So segments replace row chunks of more than one wave, on images of at least
MIN_IMAGE_ROWS rows, where the chunks are uneven, shorter than MIN_CHUNK_ROWS or fill
less than WAVE_FILL of their waves, and each segment still walks MIN_SEGMENT_ROWS rows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ._tiling import WAVE_FILL, wave_fill
from .fprop_pointwise import is_pointwise_walk
from .fprop_spec import TILE_Q, FpropConfig, grid_blocks, stream_config
from .one_wave import chunk_fill
from .params import Conv2dGw8Params

#: Images shorter than this keep their row chunks: their segments' parts are short, each with
#: its R - 1 halo rows (14 and 16 rows lost 0.86-0.99x).
MIN_IMAGE_ROWS = 32
#: Chunks shorter than this re-read a large share of halo rows (8 of 64: 10 rows read per 8).
MIN_CHUNK_ROWS = 16
#: The fewest output rows a segment walks.
MIN_SEGMENT_ROWS = 16


def may_walk_segments(params: Conv2dGw8Params) -> bool:
    """Whether walks_segments can hold for any row chunks of params (the kernel's): whether
    its images have MIN_IMAGE_ROWS rows. Compiles nothing."""
    return params.p >= MIN_IMAGE_ROWS


def walks_segments(params: Conv2dGw8Params, chunks: FpropConfig, slots: int) -> bool:
    """Whether the default walks segments instead of `chunks`, the row chunks it would run
    where `slots` of its blocks fit on the GPU at once (params: the kernel's; for dgrad,
    dgrad_spec.to_fprop_params of the layer)."""
    if chunks.segments or chunks.block_q < TILE_Q or not may_walk_segments(params):
        return False
    if is_pointwise_walk(params, chunks):
        return False  # short 1 x 1 walks fill the waves with many blocks (ring_depth)
    blocks = grid_blocks(params, chunks)
    if blocks <= slots:
        return False
    return (
        chunk_fill(params.p, chunks.block_p) < 1.0
        or chunks.block_p < MIN_CHUNK_ROWS
        or wave_fill(blocks, slots) < WAVE_FILL
    )


def segments_or_chunks(
    params: Conv2dGw8Params, chunks: FpropConfig, slots_of: Callable[[FpropConfig], int]
) -> FpropConfig:
    """chunks' tile walking segments for the blocks that fit on the GPU at once
    (fprop_spec.stream_config), where walks_segments says and each segment walks at least
    MIN_SEGMENT_ROWS rows; else chunks. slots_of(config): the blocks of config that fit on
    the GPU at once (compiling it)."""
    if not walks_segments(params, chunks, slots_of(chunks)):
        return chunks
    tile = dataclasses.replace(chunks, segments=1)
    config = stream_config(params, tile, slots_of(tile))
    if params.n * params.p < MIN_SEGMENT_ROWS * config.segments:
        return chunks
    return config


def slots_on(pass_name: str, params: Conv2dGw8Params, config: FpropConfig, device: int = 0) -> int:
    """Blocks of config's kernel of pass_name ("fprop" or "dgrad") on the layer params that
    fit on device at once (compiling and loading it)."""
    from . import dgrad, dgrad_spec, fprop, fprop_spec

    if pass_name == "dgrad":
        kernel = dgrad.dgrad_launch(params, config, device).kernel
        return fprop.resident_slots(kernel, dgrad_spec.launch_geometry(params, config))
    if pass_name == "fprop":
        kernel = fprop.fprop_launch(params, config, device).kernel
        return fprop.resident_slots(kernel, fprop_spec.launch_geometry(params, config))
    raise ValueError(f"pass_name must be 'fprop' or 'dgrad', got {pass_name!r}")


def walks_on(
    pass_name: str, params: Conv2dGw8Params, config: FpropConfig, device: int = 0
) -> list[FpropConfig]:
    """config's row chunks as the launcher cuts them (even_chunks) and, where segments could
    pay (may_walk_segments; one image a block), its tile in one wave of segments on device:
    the walks a tuning times for each shortlisted config (spio-perfmodel), since the models
    know row chunks only. params: the layer's (for dgrad, its forward shape); compiles the
    segments' kernel to count its slots."""
    from .even_chunks import even_chunks
    from .pass_params import fprop_kernel_params

    kernel_params = fprop_kernel_params(pass_name, params)
    chunks = even_chunks(kernel_params, config)
    if config.block_q < TILE_Q or not may_walk_segments(kernel_params):
        return [chunks]
    tile = dataclasses.replace(config, segments=1)
    segments = stream_config(kernel_params, tile, slots_on(pass_name, params, tile, device))
    return list(dict.fromkeys((chunks, segments)))
