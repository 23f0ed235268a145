"""compare without a GPU: the choices and the benchmark's timing replaced by stand-ins, so
that what is timed against what, and how it is reported, is checked here."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import spio.kernels.conv2d_gw8.bench as bench
from spio.kernels.conv2d_gw8.params import Conv2dGw8Params
from spio.perfmodel import _compare
from spio.perfmodel._select import ConfigChoice
from spio.perfmodel._selection_mode import selection_mode, set_selection_mode

LAYER = Conv2dGw8Params.make(32, 64, 64, 64)
#: The stand-in GPU's time of each stand-in config.
TIMES = {"heuristic": 12.0, "shipped": 10.0, "candidate": 9.0, "tuned": 8.0}


@pytest.fixture
def timed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """The stand-ins; returns the configs bench_pass timed, in order."""
    order: list[Any] = []

    def choose(
        pass_name: str, params: Conv2dGw8Params, model: Any = None, mode: str | None = None
    ) -> ConfigChoice:
        if model is not None:
            return ConfigChoice("candidate", "model", "stand-in")
        if (mode or selection_mode()) == "model":
            return ConfigChoice("shipped", "model", "stand-in")
        return ConfigChoice("tuned", "autotune", "stand-in")

    def bench_pass(pass_name: str, params: Any, configs: list[Any], *args: Any, **kwargs: Any):
        order.extend(configs)
        return {config: TIMES[config] for config in configs}, 30.0

    monkeypatch.setattr(_compare, "choose_config", choose)
    monkeypatch.setattr(_compare, "heuristic_config", lambda pass_name, params: "heuristic")
    monkeypatch.setattr(bench, "precompile", lambda params, configs: None)
    monkeypatch.setattr(bench, "Buffers", lambda params, passes, configs: None)
    monkeypatch.setattr(bench, "bench_pass", bench_pass)
    monkeypatch.delenv("SPIO_CONFIG_SELECTION", raising=False)
    yield order
    set_selection_mode(None)


def test_the_shipped_choice_is_the_chosen_one_without_a_model_of_your_own(
    timed: list[Any],
) -> None:
    (row,) = _compare.compare([LAYER], ["wgrad"])
    assert (row.heuristic, row.chosen, row.shipped, row.shipped_us) == (
        "heuristic",
        "shipped",
        None,
        None,
    )
    assert timed == ["heuristic", "shipped"] * _compare.ROUNDS
    assert row.speedup == pytest.approx(1.2)
    assert "shipped us" not in _compare.report([row])


def test_a_model_of_your_own_is_timed_against_the_shipped_choice_too(
    timed: list[Any], tmp_path: Path
) -> None:
    (row,) = _compare.compare([LAYER], ["wgrad"], models={"wgrad": object()})  # type: ignore[dict-item]
    assert (row.chosen, row.shipped) == ("candidate", "shipped")
    # Each round times all three, alternating, so clock drift falls on each.
    assert timed == ["heuristic", "candidate", "shipped"] * _compare.ROUNDS
    assert (row.chosen_us, row.shipped_us) == (9.0, 10.0)
    assert row.speedup_over_shipped == pytest.approx(10 / 9)
    text = _compare.report([row])
    assert "shipped us  over it" in text
    assert (
        "wgrad: chosen over the shipped model's choice 1.111x (geometric mean of 1 layers, "
        "95% bootstrap interval 1.111-1.111x; 1 faster and 0 slower by more than 3%" in text
    )
    lines = _compare.write_csv([row], tmp_path / "c.csv").read_text().splitlines()
    assert lines[0].endswith(",cudnn_us,shipped,shipped_us")
    assert lines[1].endswith(",30.000,shipped,10.000")


def test_another_selection_mode_is_timed_against_the_shipped_choice(timed: list[Any]) -> None:
    set_selection_mode("autotune")
    (row,) = _compare.compare([LAYER], ["fprop"])
    assert (row.chosen, row.source, row.shipped) == ("tuned", "autotune", "shipped")
    assert timed == ["heuristic", "tuned", "shipped"] * _compare.ROUNDS
    assert row.speedup_over_shipped == pytest.approx(10 / 8)


def test_the_interval_of_a_geometric_mean_spans_what_other_layers_could_give() -> None:
    speedups = [0.80, 0.95, 1.00, 1.02, 1.10, 1.30]
    low, high = _compare.geometric_mean_interval(speedups)
    assert low < _compare.geometric_mean(speedups) < high
    assert 0.80 < low < 1.0 < high < 1.30  # these six layers show no change either way
    assert _compare.geometric_mean_interval(speedups) == (low, high)  # seeded
    # Layers that all gained alike: an interval that leaves 1.0 out.
    low, high = _compare.geometric_mean_interval([1.08, 1.10, 1.12, 1.09, 1.11, 1.10])
    assert 1.08 < low < high < 1.12
    with pytest.raises(ValueError, match="no values"):
        _compare.geometric_mean_interval([])


def test_runs_written_apart_read_back_into_one_report(tmp_path: Path) -> None:
    """compare times one filter size a run; the verdict pools every run's layers."""
    seven = Conv2dGw8Params.make(2, 512, 56, 56, r=7, s=7, padding=3)
    first = _compare.Comparison(LAYER, "fprop", "h", "c", "model", 12.0, 9.0, 30.0, "s", 10.0)
    second = _compare.Comparison(seven, "fprop", "h", "h", "heuristic", 8.0, 8.0, 40.0, "s", 7.2)
    paths = [
        _compare.write_csv([first], tmp_path / "a.csv"),
        _compare.write_csv([second], tmp_path / "b.csv"),
    ]
    rows = _compare.read_csv(paths)
    assert rows == [first, second]
    assert _compare.report(rows) == _compare.report([first, second])
    pooled = _compare.report(rows).splitlines()[-1]
    # sqrt(10 / 9 * 7.2 / 8) = 1.0
    assert pooled.startswith(
        "fprop: chosen over the shipped model's choice 1.000x (geometric mean of 2 layers"
    )
    # (10 + 7.2) / (9 + 8)
    assert pooled.endswith("; 1.012x in total time)")


def test_the_total_time_weighs_each_layer_by_its_time() -> None:
    """Picks 10% faster on a 2 us layer and 5% slower on a 180 us one: ahead in geometric
    mean, behind in total time, which is what a network's step feels."""
    big = Conv2dGw8Params.make(32, 1024, 56, 56, r=5, s=5, padding=2)
    rows = [
        _compare.Comparison(LAYER, "fprop", "h", "c", "model", 2.2, 2.0, 4.0, "s", 2.2),
        _compare.Comparison(big, "fprop", "h", "c", "model", 180.0, 189.0, 870.0, "s", 180.0),
    ]
    over_heuristic, over_shipped = _compare.report(rows).splitlines()[-2:]
    assert "chosen over heuristic 1.024x" in over_heuristic
    assert "; 0.954x in total time)" in over_heuristic  # 182.2 / 191.0
    assert "choice 1.024x" in over_shipped
    assert over_shipped.endswith("; 0.954x in total time)")
    assert _compare.total_time_speedup([(2.2, 2.0), (180.0, 189.0)]) == pytest.approx(182.2 / 191)
    assert math.isnan(_compare.total_time_speedup([]))


def test_a_file_compare_did_not_write_is_refused_by_name_and_line(tmp_path: Path) -> None:
    other = tmp_path / "times.csv"
    other.write_text("gpu,shape,median_us\nH200,8x64x8x8,3.0\n")
    with pytest.raises(ValueError, match=r"times\.csv: not a CSV of spio-perfmodel compare"):
        _compare.read_csv([other])
    row = _compare.Comparison(LAYER, "wgrad", "h", "c", "model", 12.0, 9.0, 30.0)
    path = _compare.write_csv([row], tmp_path / "c.csv")
    header, line = path.read_text().splitlines()
    path.write_text(f"{header}\n{line}\n{line.replace('32x64x64x64', '32x64x64')}\n")
    with pytest.raises(ValueError, match=r"c\.csv:3: a layer's name is NxCxHxW"):
        _compare.read_csv([path])
    path.write_text(f"{header}\n{line.rsplit(',', 3)[0]}\n")
    with pytest.raises(ValueError, match=r"c\.csv:2: a row of 10 cells is needed"):
        _compare.read_csv([path])


@pytest.mark.parametrize(
    ("column", "cell", "message"),
    [
        ("chosen_us", "0", "chosen_us must be a positive finite number, got '0'"),
        ("chosen_us", "-3", "chosen_us must be a positive finite number, got '-3'"),
        ("heuristic_us", "inf", "heuristic_us must be a positive finite number, got 'inf'"),
        ("chosen_us", "nan", "chosen_us must be a positive finite number, got 'nan'"),
        ("cudnn_us", "fast", "cudnn_us must be a positive finite number, got 'fast'"),
        ("shipped_us", "0", "shipped_us must be a positive finite number, got '0'"),
        ("pass", "bogus", r"pass must be one of \['dgrad', 'fprop', 'wgrad'\], got 'bogus'"),
    ],
)
def test_a_bad_cell_of_a_compare_csv_is_refused_by_file_and_line(
    tmp_path: Path, column: str, cell: str, message: str
) -> None:
    """Regression (B6): a 0 divided by zero (a traceback), a negative or infinite time said
    only "math domain error", and a NaN or an unknown pass reported speed-ups of nan and a
    pass of its own."""
    row = _compare.Comparison(LAYER, "wgrad", "h", "c", "model", 12.0, 9.0, 30.0, "s", 10.0)
    path = _compare.write_csv([row, row], tmp_path / "c.csv")
    header, *lines = path.read_text().splitlines()
    cells = lines[1].split(",")
    cells[header.split(",").index(column)] = cell
    path.write_text("\n".join([header, lines[0], ",".join(cells)]) + "\n")
    with pytest.raises(ValueError, match=rf"c\.csv:3: {message}"):
        _compare.read_csv([path])


def test_a_compare_csv_of_the_header_alone_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.csv"
    path.write_text(",".join(_compare.CSV_COLUMNS) + "\n")
    with pytest.raises(ValueError, match=r"empty\.csv: the header alone, no rows"):
        _compare.read_csv([path])


def test_a_compare_csv_from_before_the_shipped_columns_reads_without_them(
    tmp_path: Path,
) -> None:
    """Regression (N6): the 8-column files compare wrote before it timed the shipped choice
    (most of docs/assets/benchmarks') were refused."""
    row = _compare.Comparison(LAYER, "fprop", "h", "c", "model", 12.0, 9.0, 30.0)
    path = _compare.write_csv([row], tmp_path / "old.csv")
    header, line = path.read_text().splitlines()
    assert line.endswith(",,")  # no shipped choice: the last two cells empty
    path.write_text(f"{header.rsplit(',', 2)[0]}\n{line[:-2]}\n", encoding="utf-8-sig")
    assert _compare.read_csv([path]) == [row]  # (with a byte-order mark, as a spreadsheet saves)
