"""tools/timed_picks_estimate.py: a candidate model scored on the CPU where its picks are
configs a GPU check already timed."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tool_module import ROOT, load_tool

from spio.kernels.conv2d_gw8.params import Conv2dGw8Params
from spio.perfmodel import _select
from spio.perfmodel._compare import Comparison, write_csv
from spio.perfmodel._model import LatencyModel

sys.path.insert(0, str(ROOT / "tools"))  # the tools import their siblings
tool = load_tool("timed_picks_estimate")

H100 = "NVIDIA H100 80GB HBM3"
MODELS = ROOT / "packages/spio-perfmodel/src/spio/perfmodel/models"
# Layers no H100 campaign timed whole (so the models' picks, not measured configs, decide).
LAYERS = [
    Conv2dGw8Params.make(2, 384, 48, 48, r=5, s=5, padding=2),
    Conv2dGw8Params.make(64, 96, 56, 56, r=5, s=5, padding=2),
    Conv2dGw8Params.make(16, 768, 10, 10),
    Conv2dGw8Params.make(128, 192, 20, 20, r=7, s=7, padding=3),
]


@pytest.fixture
def h100(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Choose as on an H100 stand-in, the memo cleared before and after."""
    _select._choose_shipped.cache_clear()
    tool.stand_in(H100, monkeypatch.setattr)
    yield
    _select._choose_shipped.cache_clear()


def _row(params: Conv2dGw8Params, candidate: str, candidate_us: float) -> Comparison:
    """A compare row of params' fprop: the shipped pick at 10 us, the heuristic at 12 us, and
    `candidate` at candidate_us."""
    shipped = tool.placed_pick("fprop", params, None)
    heuristic, heuristic_us = "the heuristic's config", 12.0
    if shipped == tool.HEURISTIC:
        # (a compare CSV names the config the heuristic chose, with its time)
        shipped, heuristic_us = heuristic, 10.0
    return Comparison(
        params, "fprop", heuristic, candidate, "model", heuristic_us, candidate_us, 40.0,
        shipped, 10.0,
    )  # fmt: skip


def test_the_shipped_model_as_candidate_changes_nothing_and_times_every_pick(h100: None) -> None:
    shipped = LatencyModel.load(MODELS / "nvidia_h100_80gb_hbm3" / "fprop.ubj")
    rows = [_row(p, "another config", 8.0) for p in LAYERS]
    (result,) = tool.estimate(rows, {"fprop": shipped})
    assert (result.used, result.skipped, result.changed) == (4, 0, 0)
    assert result.ratios == [1.0] * 4
    assert result.untimed == []


def test_a_pick_the_check_timed_is_scored_and_one_it_did_not_is_listed(h100: None) -> None:
    # The H200's model picks differently from the H100's on some of these layers.
    candidate = LatencyModel.load(MODELS / "nvidia_h200" / "fprop.ubj")
    picks = [tool.placed_pick("fprop", p, candidate) for p in LAYERS]
    shipped = [tool.placed_pick("fprop", p, None) for p in LAYERS]
    moved = [i for i, (a, b) in enumerate(zip(picks, shipped, strict=True)) if a != b]
    by_model = [i for i in moved if picks[i] != tool.HEURISTIC]
    assert len(by_model) >= 2, "the test needs two layers the candidate's model moves"
    timed, untimed = by_model[:2]
    rows = [_row(p, "another config", 8.0) for p in LAYERS]
    # The check timed the candidate's pick on one layer (1.25x faster than the shipped one)
    # but not on another; and the stand-in cannot make one more row's shipped pick.
    rows[timed] = dataclasses.replace(rows[timed], chosen=picks[timed], chosen_us=8.0)
    rows.append(dataclasses.replace(rows[0], shipped="a config the stand-in never picks"))
    (result,) = tool.estimate(rows, {"fprop": candidate})
    assert (result.used, result.skipped) == (4, 1)
    assert result.changed == len(moved)
    assert 1.25 in result.ratios
    assert (LAYERS[untimed], picks[untimed]) in result.untimed
    expected = []  # shipped time / the pick's, where a column times the pick
    for i, row in enumerate(rows[:4]):
        if picks[i] == tool.HEURISTIC:
            expected.append(row.shipped_us / row.heuristic_us)  # the heuristic's column
        elif i == timed:
            expected.append(1.25)
        elif picks[i] == shipped[i]:
            expected.append(1.0)
    assert sorted(result.ratios) == sorted(expected)
    assert len(result.ratios) + len(result.untimed) == 4
    assert "the candidate changes" in result.summary()


def test_main_reads_compare_csvs_and_prints_each_pass(
    h100: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = write_csv([_row(p, "another config", 8.0) for p in LAYERS], tmp_path / "c.csv")
    model = MODELS / "nvidia_h100_80gb_hbm3" / "fprop.ubj"
    argv = ["--gpu", H100, "--compare", str(csv), "--model", f"fprop={model}"]
    tool.main(argv, monkeypatch.setattr)
    out = capsys.readouterr().out
    assert out.startswith("fprop: 4 rows (0 skipped")
    assert "4 of 4 picks timed, over the shipped picks 1.000x" in out


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("fprop", "--model takes PASS=PATH, got 'fprop'"),
        ("wgrad=x.ubj", "--model's pass must be one of fprop, dgrad"),
        (f"dgrad={MODELS / 'nvidia_h200' / 'fprop.ubj'}", "is a fprop model"),
    ],
)
def test_bad_model_arguments_say_what_is_wrong(
    spec: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        tool.main(["--gpu", H100, "--compare", "none.csv", "--model", spec], lambda *a: None)
    assert message in capsys.readouterr().err
