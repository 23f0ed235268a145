"""The benchmark's result rows, CSV/JSON writers, bandwidth plot and command line (no GPU)."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig
from spio.kernels.conv2d_gw8.bench import CSV_NAME, DEFAULT_SHAPES, JSON_NAME, parse_args
from spio.kernels.conv2d_gw8.bench_results import (
    COLUMNS,
    BenchRow,
    bandwidth_figure,
    contender_rows,
    plot_filename,
    read_csv,
    read_json,
    write_bandwidth_plots,
    write_config_times,
    write_csv,
    write_json,
)

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_RUN: dict[str, Any] = {
    "gpu": "NVIDIA H100 80GB HBM3",
    "torch_version": "2.11.0+cu130",
    "cudnn_version": "91900",
    "launches": 20,
    "repetitions": 9,
    "spio_launch": "pdl",
}


def _sweep(batches: tuple[int, ...] = (1, 2, 4, 8)) -> list[BenchRow]:
    rows: list[BenchRow] = []
    for n in batches:
        params = Conv2dGw8Params.make(n, 64, 64, 64)
        rows += contender_rows(
            params, "fprop", FpropConfig(), 2.0 * n, 5.0 * n, copy_gbs=3000.0, **_RUN
        )
    return rows


def test_contender_rows_derive_bandwidth_fraction_and_speedup() -> None:
    params = Conv2dGw8Params.make(128, 64, 64, 64)
    spio, cudnn = contender_rows(
        params, "fprop", FpropConfig(), 50.0, 200.0, copy_gbs=4000.0, **_RUN
    )
    nbytes = params.compulsory_bytes("fprop")
    assert (spio.contender, cudnn.contender) == ("spio", "cudnn")
    assert spio.gbs == pytest.approx(nbytes / 50.0 / 1e3)
    assert cudnn.gbs == pytest.approx(nbytes / 200.0 / 1e3)
    assert spio.fraction_of_copy == pytest.approx(spio.gbs / 4000.0)
    assert spio.speedup_over_cudnn == pytest.approx(4.0)
    assert cudnn.speedup_over_cudnn == pytest.approx(1.0)
    assert spio.config == repr(FpropConfig())
    assert cudnn.config == ""
    assert spio.shape == "128x64x64x64"
    assert (spio.r, spio.s, spio.padding, spio.dtype) == (3, 3, (1, 1, 1, 1), "float16")
    assert spio.gpu == _RUN["gpu"]
    assert spio.cudnn_version == "91900"


def test_contender_rows_reject_non_positive_times() -> None:
    params = Conv2dGw8Params.make(1, 64, 8, 8)
    with pytest.raises(ValueError, match="spio_us=0"):
        contender_rows(params, "fprop", FpropConfig(), 0.0, 1.0, copy_gbs=1.0, **_RUN)


def test_result_row_is_frozen() -> None:
    row = _sweep((1,))[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.median_us = 1.0  # type: ignore[misc]


def test_csv_round_trip(tmp_path: Path) -> None:
    rows = _sweep()
    path = write_csv(rows, tmp_path / "r.csv")
    with path.open(newline="") as f:
        records = list(csv.DictReader(f))
    assert tuple(records[0]) == COLUMNS
    assert len(records) == len(rows) == 8
    assert records[0]["contender"] == "spio"
    assert records[0]["padding"] == "1 1 1 1"
    assert records[1]["config"] == ""
    assert float(records[0]["median_us"]) == rows[0].median_us
    assert read_csv(path) == rows


def test_json_round_trip(tmp_path: Path) -> None:
    rows = _sweep()
    path = write_json(rows, tmp_path / "r.json")
    document = json.loads(path.read_text())
    assert document["columns"] == list(COLUMNS)
    assert document["rows"][2]["n"] == 2
    assert document["rows"][2]["padding"] == [1, 1, 1, 1]
    assert document["rows"][3]["speedup_over_cudnn"] == 1.0
    assert read_json(path) == rows


def test_rows_written_before_the_timing_column_read_as_loop_timings(tmp_path: Path) -> None:
    rows = _sweep((1,))
    path = write_csv(rows, tmp_path / "r.csv")
    header, *lines = path.read_text().splitlines()
    assert header.endswith(",timing")
    old = "\n".join([header.removesuffix(",timing")] + [line.rsplit(",", 1)[0] for line in lines])
    path.write_text(old + "\n")
    assert [row.timing for row in read_csv(path)] == ["loop", "loop"]
    assert read_csv(path) == rows


def test_csv_without_a_column_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("gpu,n\nH100,1\n")
    with pytest.raises(ValueError, match="lacks columns"):
        read_csv(path)


def test_bandwidth_figure_has_spio_cudnn_and_copy_lines() -> None:
    rows = _sweep()
    figure = bandwidth_figure(rows)
    (axes,) = figure.axes
    lines = {line.get_label(): line for line in axes.get_lines()}
    assert set(lines) == {"Spio", "PyTorch / cuDNN", "copy (3000 GB/s)"}
    spio = lines["Spio"]
    assert np.asarray(spio.get_xdata()).tolist() == [1, 2, 4, 8]
    expected = [r.gbs for r in rows if r.contender == "spio"]
    assert np.asarray(spio.get_ydata()).tolist() == pytest.approx(expected)
    assert np.asarray(lines["copy (3000 GB/s)"].get_ydata()).tolist() == [3000.0, 3000.0]
    assert axes.get_xscale() == "log"
    title = axes.get_title()
    for part in ("NVIDIA H100", "fprop", "C=64", "64x64", "3x3", "group width 8", "float16"):
        assert part in title


def test_bandwidth_figure_rejects_mixed_layers() -> None:
    rows = _sweep((1,)) + contender_rows(
        Conv2dGw8Params.make(2, 128, 32, 32), "fprop", FpropConfig(), 1.0, 2.0,
        copy_gbs=3000.0, **_RUN,
    )  # fmt: skip
    with pytest.raises(ValueError, match="share GPU, layer and pass"):
        bandwidth_figure(rows)


def test_write_bandwidth_plots_writes_one_png_per_layer_and_pass(tmp_path: Path) -> None:
    rows = _sweep()
    other = contender_rows(
        Conv2dGw8Params.make(4, 128, 32, 32), "fprop", FpropConfig(), 1.0, 2.0,
        copy_gbs=3000.0, **_RUN,
    )  # fmt: skip
    paths = write_bandwidth_plots(rows + other, tmp_path)
    assert [p.name for p in paths] == [plot_filename(rows[0]), plot_filename(other[0])]
    assert paths[0].name.startswith("batch_size_vs_eff_bandwidth__nvidia_h100_80gb_hbm3__fprop")
    for path in paths:
        data = path.read_bytes()
        assert data.startswith(_PNG_SIGNATURE)
        assert data[12:16] == b"IHDR"
        assert len(data) > 1000


def test_parse_args_defaults() -> None:
    args = parse_args([])
    assert args.shapes == list(DEFAULT_SHAPES)
    assert args.out is None
    assert args.batch_sweep is None
    assert args.padding == (1, 1, 1, 1)
    assert not args.cuda_graph
    assert parse_args(["--cuda-graph"]).cuda_graph


def test_parse_args_batch_sweep_and_out(tmp_path: Path) -> None:
    batches = [str(1 << i) for i in range(10)]
    args = parse_args(["--batch-sweep", *batches, "--out", str(tmp_path / "o")])
    assert args.shapes == [f"{1 << i}x64x64x64" for i in range(10)]
    assert args.out == tmp_path / "o"
    assert not args.out.exists()  # nothing is written before the run
    args = parse_args(["--batch-sweep", "1", "8", "--layer", "128x32x32", "--r", "5", "--pad", "2"])
    assert args.shapes == ["1x128x32x32", "8x128x32x32"]
    assert args.padding == (2, 2, 2, 2)
    assert (CSV_NAME, JSON_NAME) == ("conv2d_gw8_bench.csv", "conv2d_gw8_bench.json")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--batch-sweep", "0"], "positive integer (>= 1), got 0"),
        (["--batch-sweep", "4", "-2"], "positive integer (>= 1), got -2"),
        (["--batch-sweep", "two"], "expected a positive integer, got 'two'"),
        (["--batch-sweep", "4", "--shapes", "4x64x8x8"], "either --shapes or --batch-sweep"),
        (["--layer", "64x8x8"], "--layer goes with --batch-sweep"),
        (["--batch-sweep", "4", "--layer", "64x8"], "--layer must be 3 positive integers"),
        (["--shapes", "4x60x8x8"], "c must be a multiple of 8"),
        (["--shapes", "4x64x8"], "a shape must be 4 positive integers"),
        (["--launches", "5"], "--launches >= 20"),
    ],
)
def test_parse_args_bad_input_is_a_clear_error(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as excinfo:
        parse_args(argv)
    assert excinfo.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "pdl", "spio_launch", "timing"),
    [
        ([], True, "pdl", "loop"),
        (["--no-pdl"], False, "ordered", "loop"),
        (["--cuda-graph"], True, "pdl", "graph"),
    ],
)
def test_main_writes_csv_json_and_a_png_per_pass(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    pdl: bool,
    spio_launch: str,
    timing: str,
) -> None:
    """The --out wiring of main, with the GPU timings replaced by fixed numbers; --no-pdl
    and --cuda-graph reach the timing and the rows."""
    torch = pytest.importorskip("torch")
    from spio.kernels.conv2d_gw8 import bench

    speedups = {"fprop": 3.0, "dgrad": 4.0, "wgrad": 2.0}

    def fake_bench_pass(
        pass_: str,
        params: Conv2dGw8Params,
        configs: list[Any],
        buffers: object,
        launches: int,
        repetitions: int,
        pdl: bool,
        graph: bool,
    ) -> tuple[dict[Any, float], float]:
        launched_with.add(pdl)
        graphed.add(graph)
        return {config: 1.0 * params.n for config in configs}, speedups[pass_] * params.n

    launched_with: set[bool] = set()
    graphed: set[bool] = set()
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda: "NVIDIA H100 80GB HBM3")
    monkeypatch.setattr(bench, "copy_bandwidth_gbs", lambda launches, repetitions: 3000.0)
    monkeypatch.setattr(bench, "Buffers", lambda params, passes, configs: None)
    monkeypatch.setattr(bench, "bench_pass", fake_bench_pass)
    # The entries' configs ask the GPU for its SM count and occupancy: the heuristics stand
    # in for them here.
    from spio.kernels.conv2d_gw8 import dgrad_spec, fprop_spec, wgrad_spec

    monkeypatch.setattr(
        bench,
        "PASS_CONFIGS",
        {
            name: (spec.config_space, spec.default_config)
            for name, spec in (("fprop", fprop_spec), ("dgrad", dgrad_spec), ("wgrad", wgrad_spec))
        },
    )
    out = tmp_path / "out"
    bench.main(["--batch-sweep", "1", "2", "4", "--layer", "64x16x16", "--out", str(out), *flags])
    assert launched_with == {pdl}
    assert graphed == {timing == "graph"}
    rows = read_csv(out / CSV_NAME)
    assert {row.spio_launch for row in rows} == {spio_launch}
    assert {row.timing for row in rows} == {timing}
    assert read_json(out / JSON_NAME) == rows
    assert [(r.n, r.pass_name, r.contender) for r in rows] == [
        (n, p, c) for n in (1, 2, 4) for p in speedups for c in ("spio", "cudnn")
    ]
    for pass_, speedup in speedups.items():
        spio_rows = [r for r in rows if r.contender == "spio" and r.pass_name == pass_]
        assert {r.speedup_over_cudnn for r in spio_rows} == {speedup}
    pngs = sorted(out.glob("*.png"))
    assert [p.name.split("__")[2].split("_")[0] for p in pngs] == ["dgrad", "fprop", "wgrad"]
    printed = capsys.readouterr().out
    for png in pngs:
        assert png.read_bytes().startswith(_PNG_SIGNATURE)
        assert f"wrote {png}" in printed


def test_config_times_append_under_one_header(tmp_path: Path) -> None:
    path = tmp_path / "configs.csv"
    first = {FpropConfig(): 40.0, FpropConfig(block_p=32): 39.5}
    write_config_times("GPU", "fprop", "128x64x64x64", first, path)
    write_config_times("GPU", "dgrad", "32x64x64x64", {FpropConfig(mma_k=8): 10.25}, path)
    rows = list(csv.DictReader(path.open()))
    assert len(rows) == 3
    assert [r["pass_name"] for r in rows] == ["fprop", "fprop", "dgrad"]
    assert rows[1]["shape"] == "128x64x64x64"
    assert rows[1]["block_p"] == "32"
    assert rows[2]["mma_k"] == "8"
    assert float(rows[2]["median_us"]) == 10.25
