"""tools/launched_rows_check.py: rows of one layer timed as tiles and as launched, compared."""

from __future__ import annotations

import math
import random
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from tool_module import load_tool

from spio.kernels.conv2d_gw8 import fprop_spec
from spio.kernels.conv2d_gw8.even_chunks import even_chunks
from spio.kernels.conv2d_gw8.params import Conv2dGw8Params
from spio.perfmodel._data import ConfigTime
from spio.perfmodel._features import GpuLimits

tool = load_tool("launched_rows_check")
GPU = "NVIDIA H200"


def _row(params: Conv2dGw8Params, config: Any, us: float, launch: str) -> ConfigTime:
    return ConfigTime(GPU, "fprop", params, config, us, "graph", "k", launch)


def _two_configs(params: Conv2dGw8Params) -> tuple[Any, Any]:
    first, second = fprop_spec.config_space(params)[:2]
    return first, second


def test_the_ceiling_runs_the_tile_rows_fastest_as_launched() -> None:
    layer = Conv2dGw8Params.make(8, 64, 56, 56)
    tiles_only = Conv2dGw8Params.make(8, 64, 28, 28)  # no launched rows: not compared
    a, b = _two_configs(layer)
    tiles = [_row(layer, a, 10.0, "tile"), _row(layer, b, 11.0, "tile")]
    tiles += [_row(tiles_only, c, 5.0, "tile") for c in _two_configs(tiles_only)]
    launched = [_row(layer, a, 10.0, "launcher"), _row(layer, b, 8.0, "launcher")]
    assert sorted(tool.paired_ratios(tiles, launched)) == [1.0, 11.0 / 8.0]
    (ceiling,) = tool.ceilings(tiles, launched)
    assert (ceiling.tile_best, ceiling.launched_best) == (a, b)
    assert ceiling.loss == pytest.approx(10.0 / 8.0)


def test_the_heuristic_stands_where_the_pick_is_predicted_less_than_the_gain() -> None:
    layer = Conv2dGw8Params.make(16, 64, 56, 56)
    default = fprop_spec.default_config(layer, GpuLimits().sm_count)
    other = next(c for c in fprop_spec.config_space(layer) if c != default)
    rows = [_row(layer, default, 12.0, "launcher"), _row(layer, other, 10.0, "launcher")]

    def model(default_us: float, other_us: float) -> Any:
        def predict_us(params: Any, configs: list[Any]) -> np.ndarray:
            return np.array([default_us if c == default else other_us for c in configs])

        return SimpleNamespace(pass_name="fprop", predict_us=predict_us)

    # The pick predicted 2% faster: the heuristic's tile runs, 1.2x the fastest.
    assert tool.chosen_regret(model(10.2, 10.0), rows, GpuLimits()) == pytest.approx(0.2)
    # 10% faster: the pick runs, the fastest.
    assert tool.chosen_regret(model(11.0, 10.0), rows, GpuLimits()) == 0.0
    # ... unless the gate asks more of it, or less of the 2% pick.
    assert tool.chosen_regret(model(11.0, 10.0), rows, GpuLimits(), 0.15) == pytest.approx(0.2)
    assert tool.chosen_regret(model(10.2, 10.0), rows, GpuLimits(), 0.01) == 0.0


LAYERS = [Conv2dGw8Params.make(n, 64, h, h) for n, h in [(8, 56), (16, 28), (32, 56), (4, 28)]]


def _both_launches() -> tuple[list[ConfigTime], list[ConfigTime]]:
    """Twelve sampled tiles of each of LAYERS timed both ways: an evened tile runs 0.8x."""
    rng = random.Random(3)
    tiles, launched = [], []
    for params in LAYERS:
        for config in rng.sample(fprop_spec.config_space(params), 12):
            us = 5.0 + config.block_p / 4 + 8.0 / config.block_q + rng.random()
            evened = even_chunks(params, config) != config
            tiles.append(_row(params, config, us, "tile"))
            launched.append(_row(params, config, us * (0.8 if evened else 1.0), "launcher"))
    return tiles, launched


def test_every_variant_scores_every_launched_layer_once() -> None:
    tiles, launched = _both_launches()
    layers = LAYERS
    regrets = tool.fold_regrets(tiles, launched, folds=2, limits=GpuLimits())
    assert set(regrets) == set(tool.VARIANTS)
    for scores in regrets.values():
        assert len(scores) == len(layers)
        assert all(score >= 0.0 for score in scores)
    with pytest.raises(ValueError, match="folds must be 2 to the 4 launched layers, got 5"):
        tool.fold_regrets(tiles, launched, folds=5, limits=GpuLimits())


def test_the_report_gives_each_variant_once_per_seed() -> None:
    tiles, launched = _both_launches()
    lines = tool.report("fprop", tiles, launched, 2, GpuLimits(), seeds=(0, 5)).splitlines()
    assert lines[0].startswith("fprop: 48 configs timed both ways, tile over launched time")
    for seed in (0, 5):
        for name in tool.VARIANTS:
            (line,) = [x for x in lines if x.startswith(f"fprop seed {seed} {name:>16}: 4 layers")]
            assert "geometric mean slowdown 1." in line


def test_an_infinite_gate_keeps_every_heuristic_tile_and_a_zero_one_every_pick() -> None:
    tiles, launched = _both_launches()
    sm_count = GpuLimits().sm_count
    for params in LAYERS:  # the heuristic's tile, timed slowest on every layer
        default = fprop_spec.default_config(params, sm_count)
        launched = [r for r in launched if (r.params, r.config) != (params, default)]
        launched.append(_row(params, default, 40.0, "launcher"))
    regrets = tool.gate_regrets(tiles, launched, 2, GpuLimits(), gates=(0.0, math.inf))
    slowest = sorted(40.0 / min(r.median_us for r in launched if r.params == p) - 1 for p in LAYERS)
    assert sorted(regrets[math.inf]) == pytest.approx(slowest)
    assert all(regret < 40.0 / 12.0 - 1 for regret in regrets[0.0])
    lines = tool.report(
        "fprop", tiles, launched, 2, GpuLimits(), gates=(0.0, math.inf)
    ).splitlines()
    assert [line.split(":")[0] for line in lines if " gate " in line] == [
        "fprop seed 0 gate 0%",
        "fprop seed 0 gate inf",
    ]
