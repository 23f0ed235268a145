"""choose_config and compare on the GPU: the chosen configs run and are timed beside the
heuristic's and cuDNN's."""

from __future__ import annotations

from pathlib import Path

import pytest

import spio.jit
from spio.kernels.conv2d_gw8.params import Conv2dGw8Params
from spio.perfmodel import (
    PASSES,
    choose_config,
    compare,
    heuristic_config,
    set_selection_mode,
    shipped_model,
)
from spio.perfmodel._compare import report, write_csv

pytestmark = pytest.mark.gpu

LAYERS = [
    Conv2dGw8Params.make(3, 64, 20, 18),
    Conv2dGw8Params.make(2, 128, 9, 9, r=5, s=5, padding=2, dtype="bfloat16"),
]


def test_choose_config_uses_the_model_that_ships_for_this_gpu() -> None:
    gpu = spio.jit.device_info(0).name
    for pass_name in PASSES:
        choice = choose_config(pass_name, LAYERS[0])
        if shipped_model(pass_name, gpu) is not None:
            assert f"the shipped {pass_name} model for {gpu}" in choice.reason
        else:
            assert choice.reason == f"no {pass_name} model ships for {gpu}"
        if choice.source == "heuristic":
            assert choice.config == heuristic_config(pass_name, LAYERS[0])


def test_compare_times_both_configs_and_cudnn(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    comparisons = compare(LAYERS, ["fprop", "dgrad", "wgrad"], launches=5, repetitions=3)
    assert [(c.params, c.pass_name) for c in comparisons] == [
        (layer, name) for layer in LAYERS for name in ("fprop", "dgrad", "wgrad")
    ]
    for row in comparisons:
        assert 0 < row.heuristic_us < 1e4
        assert 0 < row.chosen_us < 1e4
        assert 0 < row.cudnn_us < 1e5
        assert row.chosen == choose_config(row.pass_name, row.params).config
    text = report(comparisons)
    for pass_name in ("fprop", "dgrad", "wgrad"):
        assert f"{pass_name}: chosen over heuristic" in text
    lines = write_csv(comparisons, tmp_path / "compare.csv").read_text().splitlines()
    assert len(lines) == 1 + len(comparisons)


def test_compare_times_a_model_of_your_own_beside_the_shipped_choice() -> None:
    pytest.importorskip("torch")
    gpu = spio.jit.device_info(0).name
    model = shipped_model("wgrad", gpu)
    if model is None:
        pytest.skip(f"no wgrad model ships for {gpu}")
    # The shipped model given as one's own: the same choice, timed as two contenders.
    (row,) = compare(LAYERS[:1], ["wgrad"], launches=5, repetitions=3, models={"wgrad": model})
    assert row.chosen == row.shipped == choose_config("wgrad", LAYERS[0]).config
    assert row.shipped_us is not None
    assert 0 < row.shipped_us < 1e4
    assert "chosen over the shipped model's choice" in report([row])


def test_compare_under_autotune_times_the_tuning_beside_the_shipped_choice(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("torch")
    monkeypatch.setenv("SPIO_JIT_CACHE_DIR", str(tmp_path / "cache"))  # tunings kept apart
    set_selection_mode("autotune")
    try:
        (row,) = compare(LAYERS[:1], ["fprop"], launches=5, repetitions=3)
    finally:
        set_selection_mode(None)
    assert row.source in ("autotune", "heuristic")
    assert row.shipped == choose_config("fprop", LAYERS[0], mode="model").config
    assert row.shipped_us is not None
    assert 0 < row.shipped_us < 1e4
    assert "chosen over the shipped model's choice" in report([row])
