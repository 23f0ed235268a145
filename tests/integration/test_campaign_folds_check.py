"""tools/campaign_folds_check.py: a new campaign's layers held out in folds, scored by models
without and with the campaign's other folds."""

from __future__ import annotations

import random
from typing import Any

import pytest
from tool_module import load_tool

from spio.kernels.conv2d_gw8 import fprop_spec
from spio.kernels.conv2d_gw8.params import Conv2dGw8Params
from spio.perfmodel._data import ConfigTime, LatencyTable
from spio.perfmodel._evaluate import Evaluation, LayerResult

tool = load_tool("campaign_folds_check")
GPU = "NVIDIA H100 80GB HBM3"
BASE = [Conv2dGw8Params.make(n, 64, h, h) for n, h in [(8, 56), (16, 28), (32, 32)]]
NEW = [Conv2dGw8Params.make(n, 384, h, h) for n, h in [(4, 12), (8, 20), (16, 24), (32, 13)]]


def _rows(layers: list[Conv2dGw8Params], seed: int) -> list[ConfigTime]:
    """Eight sampled configs of each layer, with times that depend on the config."""
    rng = random.Random(seed)
    rows = []
    for params in layers:
        for config in rng.sample(fprop_spec.config_space(params), 8):
            us = 4.0 + config.block_p / 8 + 16.0 / config.block_q + rng.random()
            rows.append(ConfigTime(GPU, "fprop", params, config, us, "graph", "k", "tile"))
    return rows


def test_each_new_layer_is_held_out_once_and_trained_on_by_the_other_folds(
    monkeypatch: Any,
) -> None:
    base = _rows(BASE, 1)
    # The new campaign also times a layer of the base rows: it is never held out.
    new = _rows([*NEW, BASE[0]], 2)
    calls: list[tuple[list[ConfigTime], list[ConfigTime]]] = []

    def held_out(training: list[ConfigTime], held: list[ConfigTime]) -> Evaluation:
        calls.append((training, held))
        layers = sorted({row.params for row in held}, key=str)
        results = [LayerResult(p, 8, 1.0, None, 1.0, None, 1.0, 1.0) for p in layers]
        return Evaluation("fprop", tuple(results))

    monkeypatch.setattr(tool, "evaluate_held_out", held_out)
    without = tool.without_results(base, new)
    with_new = tool.with_results(base, new, folds=2, split=0)
    for evaluation in (without, with_new):
        scored = [result.params for result in evaluation.layers]
        assert sorted(scored, key=str) == sorted(NEW, key=str)  # each new layer once
    assert len(calls) == 3  # one model without; two folds, each with the other fold
    (training, held), *folds = calls
    assert training == base  # without: the base rows alone
    assert {row.params for row in held} == set(NEW)
    for training, held in folds:
        held_layers = {row.params for row in held}
        assert held_layers <= set(NEW)
        assert len(held_layers) == 2
        trained_layers = {row.params for row in training}
        assert not trained_layers & held_layers
        # with: the base rows and every new row of the other fold
        assert training[: len(base)] == base
        assert trained_layers == set(BASE) | (set(NEW) - held_layers)


def test_more_folds_than_new_layers_is_refused() -> None:
    with pytest.raises(SystemExit, match="--folds 5: the new rows hold only 4 layers"):
        tool.with_results(_rows(BASE, 1), _rows(NEW, 2), folds=5, split=0)


def test_main_scores_each_split_with_real_models(monkeypatch: Any, capsys: Any) -> None:
    tables = {"base.csv": _rows(BASE, 1), "new.csv": _rows(NEW, 2)}
    monkeypatch.setattr(
        tool, "read_config_times", lambda paths: LatencyTable(tuple(tables[paths[0]]))
    )
    argv = ["--pass", "fprop", "--kernel", "k", "--base", "base.csv", "--new", "new.csv"]
    tool.main([*argv, "--folds", "2", "--splits", "0", "1"])
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(",")[0] for line in lines[::3]] == ["fprop", "fprop"]
    assert "split 1, 4 held-out layers" in lines[3]
    assert lines[1].startswith("  without the new rows: model ")
    assert lines[2].startswith("  with    the new rows: model ")
    with pytest.raises(SystemExit, match="no fprop rows of kernel other"):
        tool.main(
            ["--pass", "fprop", "--kernel", "other", "--base", "base.csv", "--new", "new.csv"]
        )
