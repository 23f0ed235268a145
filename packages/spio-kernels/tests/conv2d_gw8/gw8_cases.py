"""Shapes, config sampling, inputs and tolerances shared by the passes' GPU tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from config_cover import one_per_field_value

from spio.kernels.conv2d_gw8 import Conv2dGw8Params

# Odd sizes, every R and S, asymmetric padding, bias, both dtypes, N = 1, a large layer.
SHAPES = [
    Conv2dGw8Params.make(1, 8, 7, 9),
    Conv2dGw8Params.make(1, 8, 1, 1, r=1, s=1, padding=0),
    Conv2dGw8Params.make(2, 16, 5, 3, r=2, s=2, padding=(1, 0, 0, 1), has_bias=True),
    Conv2dGw8Params.make(1, 24, 11, 13, r=7, s=7, padding=3, dtype="bfloat16"),
    Conv2dGw8Params.make(3, 8, 9, 17, r=1, s=7, padding=(0, 0, 6, 0), has_bias=True),
    Conv2dGw8Params.make(1, 32, 8, 6, r=5, s=3, padding=(4, 0, 0, 2), dtype="bfloat16"),
    Conv2dGw8Params.make(2, 16, 6, 33, r=4, s=6, padding=(1, 2, 5, 0)),
    Conv2dGw8Params.make(1, 64, 19, 35, has_bias=True),
    Conv2dGw8Params.make(2, 128, 15, 15, r=3, s=3, padding=(0, 2, 2, 0), dtype="bfloat16"),
    Conv2dGw8Params.make(128, 64, 64, 64),
]

# Images at most 8 wide, whose spaces hold configs with images side by side (block_q = 8 or
# 4; "paired" here for both): an odd batch
# (the last pair half past it), images narrower than 8, 1 x 1 to 7 x 7 filters, asymmetric
# padding, a short last row chunk, bias, both dtypes.
PAIRED_SHAPES = [
    Conv2dGw8Params.make(5, 64, 8, 8, has_bias=True),
    Conv2dGw8Params.make(3, 32, 7, 7, r=7, s=7, padding=3, dtype="bfloat16"),
    Conv2dGw8Params.make(6, 16, 11, 5, r=2, s=3, padding=(1, 0, 2, 0)),
    Conv2dGw8Params.make(9, 64, 4, 4, r=1, s=1, padding=0),
    Conv2dGw8Params.make(5, 32, 3, 3, dtype="bfloat16", has_bias=True),
]

# Layers for walks of segments (FpropConfig.segments) that start and end inside images and
# cross several: one image, odd sizes, asymmetric padding, bias, bf16, a 1 x 7 filter, 5 x
# 5, and images of two rows, whose parts are shorter than the ring's loads ahead (prefetch
# 6 reaches three parts on).
SEGMENT_SHAPES = [
    Conv2dGw8Params.make(1, 64, 19, 35, has_bias=True),
    Conv2dGw8Params.make(2, 128, 15, 15, r=3, s=3, padding=(0, 2, 2, 0), dtype="bfloat16"),
    Conv2dGw8Params.make(3, 8, 9, 17, r=1, s=7, padding=(0, 0, 6, 0), has_bias=True),
    Conv2dGw8Params.make(4, 32, 10, 16, r=5, s=5, padding=2, dtype="bfloat16"),
    Conv2dGw8Params.make(7, 16, 2, 17),
]

# Layers of 12 and 60 groups for blocks whose groups are not a power of two (the rings'
# ring_swizzle): odd sizes, a 5 x 3 filter with asymmetric padding, bias, bf16, a 1 x 1 filter.
GROUP_COUNT_SHAPES = [
    Conv2dGw8Params.make(5, 96, 23, 29),
    Conv2dGw8Params.make(3, 96, 17, 20, r=1, s=1, padding=0),
    Conv2dGw8Params.make(4, 480, 14, 15, r=5, s=3, padding=(2, 1), dtype="bfloat16", has_bias=True),
]
#: Groups per block those layers' blocks take (each where it divides the layer's groups).
GROUP_COUNTS = (3, 6, 10, 12, 20)

#: Walks with steady groups of rows (filters of 5 rows or more, CONV2D_GW8_STEADY_WALK): images
#: tall enough for several groups between the first and the last, in even chunks, in chunks
#: with a short last one, in one chunk of the whole image, in segments crossing images, and
#: images paired in each fragment; odd sizes, asymmetric padding, bias, bf16, 5 x 5, 7 x 7 and
#: 5 x 3 filters, prefetch 1, 2 and 6. (params, FpropConfig fields) pairs.
STEADY_WALK_CASES = [
    (
        Conv2dGw8Params.make(2, 64, 40, 24, r=5, s=5, padding=2, has_bias=True),
        dict(block_q=16, block_g=8, warp_g=1, warp_q16=1, block_p=20, prefetch=2, mma_k=16),
    ),
    (
        Conv2dGw8Params.make(2, 64, 40, 24, r=5, s=5, padding=2, has_bias=True),
        dict(block_q=32, block_g=4, warp_g=1, warp_q16=2, block_p=32, prefetch=6, mma_k=8),
    ),
    (
        Conv2dGw8Params.make(3, 32, 31, 21, r=7, s=7, padding=3, dtype="bfloat16"),
        dict(block_q=16, block_g=4, warp_g=1, warp_q16=1, block_p=32, prefetch=1, mma_k=16),
    ),
    (
        Conv2dGw8Params.make(3, 32, 31, 21, r=7, s=7, padding=3, dtype="bfloat16"),
        dict(block_q=16, block_g=2, warp_g=1, warp_q16=1, block_p=16, prefetch=6, mma_k=16),
    ),
    (
        Conv2dGw8Params.make(3, 32, 31, 21, r=7, s=7, padding=3, has_bias=True),
        dict(
            block_q=16,
            block_g=4,
            warp_g=1,
            warp_q16=1,
            block_p=16,
            prefetch=2,
            mma_k=16,
            segments=5,
        ),
    ),
    (
        Conv2dGw8Params.make(2, 16, 33, 9, r=5, s=3, padding=(2, 1, 0, 2)),
        dict(block_q=16, block_g=2, warp_g=2, warp_q16=1, block_p=16, prefetch=2, mma_k=8),
    ),
    (
        Conv2dGw8Params.make(5, 64, 24, 8, r=5, s=5, padding=2, has_bias=True),
        dict(block_q=8, block_g=8, warp_g=1, warp_q16=1, block_p=32, prefetch=6, mma_k=16),
    ),
    # The largest walk: chunks of 32 and 24 rows of a 7 x 7 filter, one filter column a mma
    # (its walk lambdas once compiled as calls, the accumulators in local memory).
    (
        Conv2dGw8Params.make(1, 16, 56, 33, r=7, s=7, padding=3),
        dict(block_q=64, block_g=1, warp_g=1, warp_q16=1, block_p=32, prefetch=2, mma_k=8),
    ),
]

#: Shapes whose space is larger than this run a covering subset (every value of every field).
MAX_CONFIGS = 48


def covering_configs(space: Sequence[Any], default: Any) -> list[Any]:
    """Return the whole space when small, else the default plus one config per field value."""
    if len(space) <= MAX_CONFIGS:
        return list(space)
    return one_per_field_value(space, default)


def paired_configs(space: Sequence[Any]) -> list[Any]:
    """A covering subset (covering_configs) of the configs of space with images side by side,
    for each block_q below 16 (8 and 4) on its own."""
    chosen = []
    for block_q in sorted({config.block_q for config in space if config.block_q < 16}):
        narrow = [config for config in space if config.block_q == block_q]
        chosen += covering_configs(narrow, narrow[0])
    return chosen


def segment_configs(tile: Any, stream_rows: int) -> list[Any]:
    """tile walking one segment, three, and one per output row of its kernel's stream
    (stream_rows: n times the rows its kernel writes), each at tile's prefetch and 6 rows
    ahead."""
    import dataclasses

    return [
        dataclasses.replace(tile, segments=segments, prefetch=prefetch)
        for segments in dict.fromkeys((1, 3, stream_rows))
        for prefetch in dict.fromkeys((tile.prefetch, 6))
    ]


def group_count_configs(
    params: Conv2dGw8Params, space: Sequence[Any], check: Callable[[Any, Any], None]
) -> list[Any]:
    """For each of GROUP_COUNTS that divides params' groups, the first two configs of space
    (spread over it) that check accepts with that block_g and a warp_g that divides it."""
    import dataclasses

    chosen = []
    for groups in (g for g in GROUP_COUNTS if params.groups % g == 0):
        found = []
        for config in space[:: max(1, len(space) // 8)]:
            for warp_g in (w for w in (1, 2, 3, 4, 5, 6) if groups % w == 0):
                try:
                    candidate = dataclasses.replace(config, block_g=groups, warp_g=warp_g)
                    check(params, candidate)
                except ValueError:
                    continue
                if candidate not in found:
                    found.append(candidate)
                break
            if len(found) == 2:
                break
        chosen += found
    return chosen


def uniform(shape: Sequence[int], params: Conv2dGw8Params, salt: int) -> Any:
    """Values uniform in [-1, 1) of params.dtype on the GPU, seeded by the shape and salt."""
    import torch

    seed = params.n * 1000 + params.h * 10 + params.r + salt
    gen = torch.Generator(device="cuda").manual_seed(seed)
    values = torch.rand(tuple(shape), device="cuda", generator=gen) * 2 - 1
    return values.to(getattr(torch, params.dtype))


def assert_close_16bit(got: Any, expected: Any, params: Conv2dGw8Params, depth: int) -> None:
    """Check a 16-bit result: final rounding plus f32 accumulation of depth terms <= 1."""
    import torch

    eps = 2.0**-8 if params.dtype == "bfloat16" else 2.0**-11
    torch.testing.assert_close(
        got.float(), expected, rtol=2 * eps, atol=2 * eps * depth**0.5 + depth * 2.0**-20
    )
