"""tools/wgrad_walk_blocks_data.py: walked rows pair with their unwalked twins, split by
whether the walked grid leaves SMs without a block."""

from __future__ import annotations

import dataclasses

import pytest
from tool_module import load_tool

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, WgradConfig, wgrad_spec
from spio.perfmodel._data import ConfigTime

tool = load_tool("wgrad_walk_blocks_data")
PARAMS = Conv2dGw8Params.make(64, 128, 24, 24)
TILE = WgradConfig(16, 4, 1, 16, 1, 4)


def _row(config: WgradConfig, median_us: float, kernel: str = "k1") -> ConfigTime:
    return ConfigTime("GPU", "wgrad", PARAMS, config, median_us, kernel=kernel)


def test_walked_rows_pair_with_the_same_config_walking_one_step() -> None:
    walked = dataclasses.replace(TILE, walk_n=2)
    blocks = wgrad_spec.grid_blocks(PARAMS, walked)  # 128
    rows = [
        _row(TILE, 10.0),
        _row(walked, 16.0),
        # Rows of other kernel versions pair with nothing here.
        _row(dataclasses.replace(TILE, walk_n=4), 30.0, kernel="k2"),
        _row(TILE, 1.0, kernel="k3"),
    ]
    assert tool.walk_speed_ups(rows, blocks + 1) == {True: [pytest.approx(10 / 16)], False: []}
    assert tool.walk_speed_ups(rows, blocks) == {True: [], False: [pytest.approx(10 / 16)]}
