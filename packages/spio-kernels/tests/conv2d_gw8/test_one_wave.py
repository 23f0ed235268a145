"""one_wave: which one-wave grids of fprop and dgrad walk row chunks half as long."""

from __future__ import annotations

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig, dgrad_spec, fprop_spec
from spio.kernels.conv2d_gw8.one_wave import chunk_fill, split_one_wave


@pytest.mark.parametrize(
    ("rows", "block_p", "fill"),
    [(64, 32, 1.0), (48, 32, 0.75), (48, 16, 1.0), (40, 32, 40 / 64), (40, 16, 40 / 48),
     (28, 32, 1.0), (28, 16, 28 / 32), (112, 32, 112 / 128), (7, 8, 1.0)],
)  # fmt: skip
def test_chunk_fill(rows: int, block_p: int, fill: float) -> None:
    assert chunk_fill(rows, block_p) == pytest.approx(fill)


def _layer(n: int, c: int, side: int, k: int) -> Conv2dGw8Params:
    return Conv2dGw8Params.make(n, c, side, side, r=k, s=k, padding=k // 2)


# Each the ladder's first tile (32 columns and 32 rows a block, 512 blocks on 132 SMs), with
# what the H200 measured for the halved walk (fprop, dgrad; tools/one_wave_chunks_check.py).
# (The heuristic now gives images 40, 48 and 112 wide 16-column strips, fprop_spec.strip_columns;
# the rule is checked on the tile it was measured with.)
@pytest.mark.parametrize(
    ("params", "halved"),
    [
        (_layer(128, 64, 64, 3), True),  # 1.001x, 1.023x
        (_layer(256, 128, 32, 3), True),  # 1.084x, 1.110x
        (_layer(8, 256, 128, 3), True),  # 1.052x, 1.042x
        (_layer(128, 64, 48, 3), True),  # uneven 32 + 16: 1.168x, 1.169x
        (_layer(64, 128, 40, 1), True),  # uneven 32 + 8: 1.328x, 1.355x
        (_layer(256, 128, 32, 1), False),  # no halo: 0.982x, 0.993x
        (_layer(2, 1024, 128, 1), False),  # 0.961x, 0.965x
        (_layer(8, 1024, 56, 3), False),  # 16 + 16 + 16 + 8 no more even: 0.986x, 0.984x
        (_layer(2, 1024, 112, 3), False),  # 1.004x, 0.998x
        (_layer(32, 1024, 28, 3), False),  # one chunk of 28 -> 16 + 12: 0.925x, 0.911x
    ],
    ids=str,
)
def test_split_one_wave_follows_the_measurements(params: Conv2dGw8Params, halved: bool) -> None:
    mma_k = 8 if params.s == 1 else 16
    config = FpropConfig(block_q=32, block_g=8, warp_g=2, warp_q16=2, block_p=32, mma_k=mma_k)
    assert fprop_spec.grid_blocks(params, config) == 512
    if fprop_spec.strip_columns(params.q, 32) == 32:
        assert fprop_spec.default_config(params, 132) == config
    chosen = split_one_wave(params, config)
    expected = fprop_spec.shorter_walk(params, config) if halved else config
    assert chosen == expected
    # dgrad of these same-padded layers is the same problem.
    assert split_one_wave(dgrad_spec.to_fprop_params(params), config) == chosen


def test_split_one_wave_keeps_chunks_of_16_rows() -> None:
    # Halving 16-row chunks to 8 lost 7-19% on every 3 x 3 layer measured.
    params = _layer(64, 64, 64, 3)
    config = fprop_spec.default_config(params, 132)
    assert config.block_p == 16
    assert split_one_wave(params, config) == config


def test_split_one_wave_keeps_a_walk_that_cannot_be_halved() -> None:
    # 36 rows in walks of 16 would leave blocks of 4 rows (shorter_walk refuses).
    config = FpropConfig(32, 8, 2, 2, 32, 2, 16)
    params = _layer(128, 64, 36, 3)
    assert fprop_spec.shorter_walk(params, config) is None
    assert split_one_wave(params, config) == config
    # 14-row images: the halved walk is still one chunk of the whole image.
    params = _layer(512, 256, 14, 3)
    assert fprop_spec.shorter_walk(params, config) is not None
    assert split_one_wave(params, config) == config
