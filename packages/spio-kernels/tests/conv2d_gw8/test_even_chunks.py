"""even_chunks: the launchers cut an image's rows into chunks of even length."""

from __future__ import annotations

import dataclasses

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig, fprop, fprop_spec, wgrad_spec
from spio.kernels.conv2d_gw8.even_chunks import even_chunks, even_rows


@pytest.mark.parametrize(
    ("rows", "block_p", "even"),
    [(56, 16, 14), (56, 32, 28), (28, 16, 14), (20, 16, 10), (24, 16, 12), (50, 16, 13),
     (40, 16, 14), (100, 32, 25), (64, 16, 16), (48, 16, 16), (7, 4, 4), (5, 2, 2), (57, 32, 29)],
)  # fmt: skip
def test_even_rows(rows: int, block_p: int, even: int) -> None:
    assert even_rows(rows, block_p) == even


@pytest.mark.parametrize("rows", range(1, 130))
@pytest.mark.parametrize("block_p", [2, 4, 8, 16, 32])
def test_even_rows_keep_the_chunks_and_shorten_the_longest(rows: int, block_p: int) -> None:
    even = even_rows(rows, block_p)
    chunks = -(-rows // block_p)
    assert -(-rows // even) == chunks  # the same blocks
    assert even <= block_p
    # None longer than needed: one row fewer would take another chunk.
    assert even == 1 or -(-rows // (even - 1)) > chunks


def _layer(side: int, k: int = 3, n: int = 32) -> Conv2dGw8Params:
    return Conv2dGw8Params.make(n, 64, side, side, r=k, s=k, padding=k // 2)


@pytest.mark.parametrize(
    ("params", "block_p", "even"),
    [(_layer(56), 16, 14), (_layer(56), 32, 28), (_layer(28), 16, 14), (_layer(20), 16, 10),
     (_layer(56, k=5), 16, 14), (_layer(64), 16, 16), (_layer(28), 32, 32), (_layer(56), 64, 64)],
)  # fmt: skip
def test_fprop_configs_are_evened_on_the_same_grid(
    params: Conv2dGw8Params, block_p: int, even: int
) -> None:
    config = FpropConfig(block_q=16, block_p=block_p, warp_q16=1, mma_k=16)
    evened = even_chunks(params, config)
    assert evened == dataclasses.replace(config, block_p=even)
    assert fprop_spec.grid_blocks(params, evened) == fprop_spec.grid_blocks(params, config)
    fprop_spec.check_config(params, evened)
    assert even_chunks(params, evened) == evened  # the rule holds once applied
    # An even walk has no short last chunk to compile for.
    header = fprop_spec.generate_types(params, evened)
    assert ("CONV2D_GW8_SHORT_LAST_CHUNK" in header) == (params.p % even != 0 and even < params.p)


def test_segments_are_left_as_they_are() -> None:
    config = FpropConfig(block_q=16, block_p=16, warp_q16=1, segments=66)
    assert even_chunks(_layer(56), config) is config


def test_wgrad_configs_are_evened_with_the_same_partial_sums() -> None:
    params = _layer(20, n=128)
    tile = wgrad_spec.WgradConfig(block_q=16, block_g=4, warp_g=1, block_p=16, prefetch=1)
    evened = even_chunks(params, tile)
    assert evened == dataclasses.replace(tile, block_p=10)
    assert wgrad_spec.partial_count(params, evened) == wgrad_spec.partial_count(params, tile)
    assert wgrad_spec.grid_blocks(params, evened) == wgrad_spec.grid_blocks(params, tile)
    wgrad_spec.check_config(params, evened)


@pytest.mark.parametrize(("side", "even"), [(56, 14), (28, 14), (64, 16)])
def test_the_launchers_chunks_are_even(side: int, even: int) -> None:
    # 16-row chunks (the ladder's second tile), a grid of four full waves: only evened.
    params = _layer(side, n=64)
    config = FpropConfig(block_q=16, block_g=8, warp_g=2, warp_q16=1, block_p=16, prefetch=2)
    blocks = fprop_spec.grid_blocks(params, config)
    assert blocks % 4 == 0
    slots = blocks // 4
    assert fprop.walk_chunks(params, config, slots, 132).block_p == even
