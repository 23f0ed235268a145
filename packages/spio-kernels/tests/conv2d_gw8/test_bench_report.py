"""The benchmark's result rows, CSV/JSON writers, bandwidth plot and command line (no GPU)."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig, WgradConfig
from spio.kernels.conv2d_gw8.bench import (
    CONFIGS_CSV_NAME,
    CSV_NAME,
    DEFAULT_SHAPES,
    JSON_NAME,
    _configs_to_time,
    parse_args,
    sample_configs,
    tile_of,
    tile_times,
)
from spio.kernels.conv2d_gw8.bench_results import (
    COLUMNS,
    CONFIG_TIMES_LAYER_COLUMNS,
    BenchRow,
    bandwidth_figure,
    batch_tick_labels,
    contender_rows,
    padding_text,
    parse_padding,
    plot_filename,
    read_csv,
    read_json,
    upgrade_config_times,
    write_bandwidth_plots,
    write_config_times,
    write_csv,
    write_json,
)
from spio.kernels.conv2d_gw8.sources_digest import sources_digest

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


def test_crowded_batch_ticks_go_unlabelled() -> None:
    batches = [1, 2, 64, 96, 128, 160, 256, 300, 512]
    labels = ["1", "2", "64", "96", "128", "", "256", "", "512"]
    assert batch_tick_labels(batches) == labels


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
        (["--sample-configs", "8"], "--sample-configs goes with --all-configs"),
        (["--all-configs", "--sample-configs", "0"], "--sample-configs must be >= 1, got 0"),
        (["--all-configs", "--sample-configs", "-3"], "--sample-configs must be >= 1, got -3"),
        (["--all-configs", "--sample-configs", "x"], "--sample-configs: invalid int value: 'x'"),
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
    from spio.kernels.conv2d_gw8 import dgrad_spec, fprop_spec, wgrad_heuristic, wgrad_spec

    monkeypatch.setattr(
        bench,
        "PASS_CONFIGS",
        {
            "fprop": (fprop_spec.config_space, fprop_spec.default_config),
            "dgrad": (dgrad_spec.config_space, dgrad_spec.default_config),
            "wgrad": (wgrad_spec.config_space, wgrad_heuristic.default_config),
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
    # --no-plots: the tables alone.
    plain = tmp_path / "plain"
    bench.main(
        ["--batch-sweep", "1", "2", "--layer", "64x16x16", "--out", str(plain), "--no-plots"]
    )
    assert sorted(path.name for path in plain.iterdir()) == sorted([CSV_NAME, JSON_NAME])


def test_config_times_describe_the_layer_and_append_under_one_header(tmp_path: Path) -> None:
    path = tmp_path / "configs.csv"
    big = Conv2dGw8Params.make(128, 64, 64, 64)
    small = Conv2dGw8Params.make(32, 64, 56, 48, r=5, s=3, padding=(2, 1), dtype="bfloat16")
    first = {FpropConfig(): 40.0, FpropConfig(block_p=32): 39.5}
    write_config_times("GPU", "fprop", big, first, path, timing="loop")
    write_config_times(
        "GPU",
        "dgrad",
        small,
        {FpropConfig(mma_k=16): 10.25},
        path,
        timing="graph",
        launch="launcher",
    )
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
    config_fields = [field.name for field in dataclasses.fields(FpropConfig)]
    assert reader.fieldnames == [
        "gpu",
        "shape",
        "n",
        "c",
        "h",
        "w",
        "r",
        "s",
        "padding",
        "dtype",
        "timing",
        "launch",
        "kernel",
        "pass_name",
        *config_fields,
        "median_us",
    ]
    assert reader.fieldnames[: len(CONFIG_TIMES_LAYER_COLUMNS)] == list(CONFIG_TIMES_LAYER_COLUMNS)
    assert path.read_text().count("gpu,shape,") == 1  # one header for both writes
    big_layer = ["GPU", "128x64x64x64", "128", "64", "64", "64", "3", "3", "1 1 1 1", "float16"]
    small_layer = ["GPU", "32x64x56x48", "32", "64", "56", "48", "5", "3", "2 2 1 1", "bfloat16"]
    fprop, dgrad = sources_digest("fprop"), sources_digest("dgrad")
    assert [[r[k] for k in CONFIG_TIMES_LAYER_COLUMNS] for r in rows] == [
        [*big_layer, "loop", "tile", fprop, "fprop"],
        [*big_layer, "loop", "tile", fprop, "fprop"],
        [*small_layer, "graph", "launcher", dgrad, "dgrad"],
    ]
    configs = [FpropConfig(**{k: int(r[k]) for k in config_fields}) for r in rows]
    assert configs == [*first, FpropConfig(mma_k=16)]
    assert [float(r["median_us"]) for r in rows] == [40.0, 39.5, 10.25]
    # The padding text is BenchRow's CSV convention: it reads back to the params' padding.
    assert parse_padding(rows[2]["padding"]) == small.padding


def test_config_times_keep_bool_fields_and_write_nothing_for_no_times(tmp_path: Path) -> None:
    path = tmp_path / "wgrad.csv"
    write_config_times("GPU", "wgrad", Conv2dGw8Params.make(8, 64, 8, 8), {}, path, timing="loop")
    assert not path.exists()
    config = WgradConfig(block_n=2, image_sync=True)
    write_config_times(
        "GPU", "wgrad", Conv2dGw8Params.make(8, 64, 8, 8), {config: 7.0}, path, timing="loop"
    )
    (row,) = csv.DictReader(path.open(newline=""))
    assert list(row)[len(CONFIG_TIMES_LAYER_COLUMNS) : -1] == list(dataclasses.asdict(config))
    assert (row["block_n"], row["image_sync"]) == ("2", "True")


def test_config_times_refuse_a_file_with_another_header(tmp_path: Path) -> None:
    params = Conv2dGw8Params.make(32, 64, 64, 64)
    old = tmp_path / "old.csv"
    old.write_text("gpu,shape,pass_name,block_q,median_us\nGPU,32x64x64x64,fprop,32,9.5\n")
    before = old.read_text()
    with pytest.raises(ValueError, match=r"old\.csv.*use a new --out directory"):
        write_config_times("GPU", "fprop", params, {FpropConfig(): 9.0}, old, timing="loop")
    assert old.read_text() == before  # nothing appended
    # fprop's configs and wgrad's have different fields: they cannot share one file.
    mixed = tmp_path / "mixed.csv"
    write_config_times("GPU", "fprop", params, {FpropConfig(): 9.0}, mixed, timing="loop")
    with pytest.raises(ValueError, match=r"mixed\.csv"):
        write_config_times("GPU", "wgrad", params, {WgradConfig(): 12.0}, mixed, timing="loop")
    # An empty file (e.g. created by hand) gets the header.
    empty = tmp_path / "empty.csv"
    empty.touch()
    write_config_times("GPU", "fprop", params, {FpropConfig(): 9.0}, empty, timing="graph")
    assert [r["timing"] for r in csv.DictReader(empty.open(newline=""))] == ["graph"]


def test_an_older_config_times_file_is_upgraded_before_anything_is_timed(tmp_path: Path) -> None:
    # Rows written before block_r and skip_pad_rows were WgradConfig fields: they ran with
    # those fields' defaults, which the upgrade fills in, and new rows append under the header.
    params = Conv2dGw8Params.make(32, 64, 64, 64)
    path = tmp_path / "configs.csv"
    config = WgradConfig(16, 8, 2, 16, 2, 4, image_sync=True, tma=True)
    write_config_times("GPU", "wgrad", params, {config: 10.0}, path, timing="graph")
    rows = list(csv.reader(path.open(newline="")))
    dropped = [rows[0].index("block_r"), rows[0].index("skip_pad_rows")]
    path.write_text(
        "".join(",".join(v for i, v in enumerate(row) if i not in dropped) + "\n" for row in rows)
    )
    upgrade_config_times(path, config)
    assert list(csv.reader(path.open(newline=""))) == rows
    write_config_times("GPU", "wgrad", params, {config: 11.0}, path, timing="graph")
    assert [r["median_us"] for r in csv.DictReader(path.open(newline=""))] == ["10.000", "11.000"]
    upgrade_config_times(tmp_path / "missing.csv", config)  # nothing to do
    assert not (tmp_path / "missing.csv").exists()


def test_config_times_of_another_format_stop_the_run_before_timing(tmp_path: Path) -> None:
    old = tmp_path / "old.csv"
    old.write_text("gpu,shape,pass_name,block_q,median_us\nGPU,32x64x64x64,fprop,32,9.5\n")
    before = old.read_text()
    with pytest.raises(ValueError, match=r"old\.csv.*use a new --out directory"):
        upgrade_config_times(old, WgradConfig())
    assert old.read_text() == before


def test_config_times_reject_an_unknown_timing_or_launch_and_mixed_config_types(
    tmp_path: Path,
) -> None:
    params = Conv2dGw8Params.make(32, 64, 64, 64)
    path = tmp_path / "configs.csv"
    with pytest.raises(ValueError, match="timing must be one of"):
        write_config_times("GPU", "fprop", params, {FpropConfig(): 9.0}, path, timing="graphs")
    with pytest.raises(ValueError, match=r"launch must be one of \('tile', 'launcher'\)"):
        write_config_times(
            "GPU", "fprop", params, {FpropConfig(): 9.0}, path, timing="graph", launch="placed"
        )
    mixed: dict[Any, float] = {FpropConfig(): 9.0, WgradConfig(): 12.0}
    with pytest.raises(ValueError, match="share their fields"):
        write_config_times("GPU", "fprop", params, mixed, path, timing="loop")
    assert not path.exists()


def test_padding_text_round_trips() -> None:
    assert padding_text((2, 1, 0, 1)) == "2 1 0 1"
    assert parse_padding("2 1 0 1") == (2, 1, 0, 1)
    assert parse_padding([1, 1, 1, 1]) == (1, 1, 1, 1)


_SPACE = [FpropConfig(block_p=p, prefetch=f) for p in (4, 8, 16, 32) for f in (1, 2)] + [
    FpropConfig(block_p=p, mma_k=16) for p in (4, 8, 16, 32)
]


def test_sample_configs_is_deterministic_default_first_and_distinct() -> None:
    default = FpropConfig(block_p=16, prefetch=2)
    assert default in _SPACE
    sample = sample_configs(_SPACE, default, 5, "128x64x64x64:fprop")
    assert sample == sample_configs(list(_SPACE), default, 5, "128x64x64x64:fprop")
    assert sample[0] == default
    assert len(sample) == len(set(sample)) == 6
    assert set(sample) <= set(_SPACE)
    # A default outside the space is timed too, still first.
    outside = FpropConfig(block_q=64)
    sample = sample_configs(_SPACE, outside, 3, "128x64x64x64:fprop")
    assert sample[0] == outside
    assert len(set(sample)) == 4
    assert set(sample[1:]) <= set(_SPACE)


def test_sample_configs_takes_the_whole_space_when_k_is_large() -> None:
    default = _SPACE[3]
    for k in (len(_SPACE) - 1, len(_SPACE), 10 * len(_SPACE)):
        sample = sample_configs(_SPACE, default, k, "32x64x64x64:wgrad")
        assert sample[0] == default
        assert sorted(map(repr, sample)) == sorted(map(repr, _SPACE))
    assert sample_configs([default], default, 4, "k") == [default]


def test_sample_configs_differ_between_shapes_and_passes() -> None:
    default = _SPACE[0]
    samples = {
        key: tuple(sample_configs(_SPACE, default, 4, key))
        for key in ("128x64x64x64:fprop", "32x64x64x64:fprop", "128x64x64x64:dgrad")
    }
    assert len(set(samples.values())) == 3


def test_sample_configs_rejects_k_below_one() -> None:
    with pytest.raises(ValueError, match="k must be at least 1, got 0"):
        sample_configs(_SPACE, _SPACE[0], 0, "key")


def test_parse_args_sample_configs() -> None:
    assert parse_args([]).sample_configs is None
    args = parse_args(["--all-configs", "--sample-configs", "64"])
    assert (args.all_configs, args.sample_configs) == (True, 64)


@pytest.mark.parametrize("sample", [None, 3])
def test_main_all_configs_writes_a_config_times_csv_per_pass(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    sample: int | None,
) -> None:
    """--all-configs (and --sample-configs) with the GPU stubbed out: which configs are
    compiled and timed, and the per-pass config-times CSVs with the layer and timing."""
    torch = pytest.importorskip("torch")
    from spio.kernels.conv2d_gw8 import bench, dgrad_spec, fprop_spec, wgrad_heuristic, wgrad_spec

    timed: dict[tuple[str, str], list[Any]] = {}
    compiled: dict[str, list[Any]] = {}

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
        timed[(bench.shape_text(params), pass_)] = list(configs)
        return {config: 1.0 + i for i, config in enumerate(configs)}, 50.0

    def fake_precompile(params: Conv2dGw8Params, configs: dict[str, list[Any]]) -> None:
        for pass_, pass_configs in configs.items():
            compiled.setdefault(pass_, []).extend(pass_configs)

    specs: dict[str, tuple[Any, Any]] = {
        "fprop": (fprop_spec.config_space, fprop_spec.default_config),
        "dgrad": (dgrad_spec.config_space, dgrad_spec.default_config),
        "wgrad": (wgrad_spec.config_space, wgrad_heuristic.default_config),
    }
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda: "NVIDIA H200")
    monkeypatch.setattr(bench, "copy_bandwidth_gbs", lambda launches, repetitions: 4000.0)
    monkeypatch.setattr(bench, "Buffers", lambda params, passes, configs: None)
    monkeypatch.setattr(bench, "bench_pass", fake_bench_pass)
    monkeypatch.setattr(bench, "precompile", fake_precompile)
    monkeypatch.setattr(bench, "PASS_CONFIGS", dict(specs))
    shapes = ["2x64x8x8", "4x64x8x8"]
    flags = ["--sample-configs", str(sample)] if sample is not None else []
    out = tmp_path / "out"
    argv = ["--shapes", *shapes, "--pad", "1", "0", "--all-configs", "--cuda-graph", *flags]
    bench.main([*argv, "--out", str(out)])
    for text in shapes:
        params = bench.parse_shape(text, 3, 3, (1, 1, 0, 0), "float16")
        for pass_, (config_space, default_config) in specs.items():
            space = config_space(params)
            default = default_config(params)
            configs = timed[(text, pass_)]
            assert configs[0] == default or sample is None
            if sample is None:
                assert configs == space
            else:
                assert configs == sample_configs(space, default, sample, f"{text}:{pass_}")
                assert len(configs) == min(sample + 1, len(space))
    assert sum(len(v) for v in compiled.values()) == sum(len(v) for v in timed.values())
    assert sorted(p.name for p in out.glob("conv2d_gw8_configs*.csv")) == [
        CONFIGS_CSV_NAME.format(pass_name=p) for p in ("dgrad", "fprop", "wgrad")
    ]
    for pass_ in specs:
        rows = list(csv.DictReader((out / f"conv2d_gw8_configs_{pass_}.csv").open(newline="")))
        assert [r["shape"] for r in rows] == [text for text in shapes for _ in timed[(text, pass_)]]
        assert {(r["gpu"], r["pass_name"], r["timing"]) for r in rows} == {
            ("NVIDIA H200", pass_, "graph")
        }
        assert {(r["r"], r["s"], r["padding"], r["dtype"]) for r in rows} == {
            ("3", "3", "1 1 0 0", "float16")
        }
    assert "configs" in capsys.readouterr().out


def test_as_launched_times_each_tile_as_its_launcher_runs_it_and_writes_the_tile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--as-launched: each sampled tile is timed as the launcher places it, and its row keeps
    the tile (what a latency model scores) with the placed config's time and launch
    "launcher"; the placed default is timed for the table."""
    torch = pytest.importorskip("torch")
    from spio.kernels.conv2d_gw8 import bench, placement, wgrad_heuristic, wgrad_spec

    timed: dict[str, list[Any]] = {}

    def fake_bench_pass(pass_: str, params: Any, configs: list[Any], *args: Any, **kw: Any):  # type: ignore[no-untyped-def]
        timed[pass_] = list(configs)
        return {config: 1.0 + i for i, config in enumerate(configs)}, 50.0

    def padded(pass_name: str, params: Conv2dGw8Params, tile: Any, device: int = 0) -> Any:
        assert pass_name == "wgrad"
        return dataclasses.replace(tile, padded_slabs=True)

    placed_default = dataclasses.replace(
        wgrad_heuristic.default_config(Conv2dGw8Params.make(2, 64, 8, 8)), lane_registers=True
    )
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda: "NVIDIA H200")
    monkeypatch.setattr(bench, "copy_bandwidth_gbs", lambda launches, repetitions: 4000.0)
    monkeypatch.setattr(bench, "Buffers", lambda params, passes, configs: None)
    monkeypatch.setattr(bench, "bench_pass", fake_bench_pass)
    monkeypatch.setattr(bench, "precompile", lambda params, configs: None)
    monkeypatch.setattr(placement, "placed_config_on", padded)
    monkeypatch.setattr(
        bench, "PASS_CONFIGS", {"wgrad": (wgrad_spec.config_space, lambda p: placed_default)}
    )
    out = tmp_path / "out"
    argv = ["--shapes", "2x64x8x8", "--passes", "wgrad", "--all-configs", "--sample-configs"]
    bench.main([*argv, "3", "--as-launched", "--cuda-graph", "--out", str(out)])
    configs = timed["wgrad"]
    assert configs[0] == placed_default
    tiles = [tile_of(c) for c in configs[1:]]
    assert configs[1:] == [padded("wgrad", None, t) for t in tiles]  # type: ignore[arg-type]
    assert tiles[0] == tile_of(placed_default)  # the default's tile is sampled
    rows = list(csv.DictReader((out / "conv2d_gw8_configs_wgrad.csv").open(newline="")))
    assert {r["launch"] for r in rows} == {"launcher"}
    assert [r["padded_slabs"] for r in rows] == ["False"] * len(tiles)  # the tiles themselves
    assert [float(r["median_us"]) for r in rows] == [2.0 + i for i in range(len(tiles))]
    with pytest.raises(SystemExit):
        bench.main(["--shapes", "2x64x8x8", "--as-launched"])


def test_launched_configs_place_only_tiles() -> None:
    from spio.kernels.conv2d_gw8 import bench

    params = Conv2dGw8Params.make(2, 64, 8, 8)
    tile = FpropConfig(mma_k=16)
    assert bench.launched_configs("fprop", params, [tile, tile]) == {tile: tile}
    assert bench.launched_configs("fprop", params, []) == {}


def test_bench_pass_times_cudnn_in_benchmark_mode_and_restores_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """cuDNN is timed with torch.backends.cudnn.benchmark on whoever calls bench_pass (the
    method of TARGETS.md), and the caller's setting comes back."""
    torch = pytest.importorskip("torch")
    from spio.kernels.conv2d_gw8 import bench

    seen: list[bool] = []

    def fake_time_us(run: Any, launches: int, repetitions: int, graph: bool) -> float:
        seen.append(torch.backends.cudnn.benchmark)
        return 1.0

    monkeypatch.setattr(bench, "time_us", fake_time_us)
    monkeypatch.setattr(bench, "_cudnn_launcher", lambda pass_, params, buffers: None)
    monkeypatch.setattr(bench, "_spio_launcher", lambda *args: None)
    monkeypatch.setattr(torch.backends.cudnn, "benchmark", False)
    params = Conv2dGw8Params.make(2, 64, 8, 8)
    bench.bench_pass("wgrad", params, ["a config"], None, 20, 9)
    assert seen == [False, True]  # Spio's config, then cuDNN
    assert torch.backends.cudnn.benchmark is False


def test_a_placed_default_is_timed_but_its_tile_is_sampled_and_written() -> None:
    """Latency models train on tiles: the config times keep the tiles only, and the sample
    is drawn around the placed default's tile, which it holds."""
    from spio.kernels.conv2d_gw8 import wgrad_heuristic

    params = Conv2dGw8Params.make(2, 64, 16, 16)
    tile = wgrad_heuristic.default_config(params)
    placed = dataclasses.replace(tile, padded_slabs=True, atomic_sums=True)
    assert tile_of(placed) == tile
    assert tile_of(FpropConfig(mma_k=16)) == FpropConfig(mma_k=16)  # no placement fields
    args = parse_args(["--shapes", "2x64x16x16", "--all-configs", "--sample-configs", "2"])
    timed = _configs_to_time(args, params, "wgrad", placed)
    assert timed[0] == placed
    assert timed[1] == tile
    assert len(timed) == 4
    assert tile_times({c: 1.0 for c in timed}) == {c: 1.0 for c in timed[1:]}
    whole = parse_args(["--shapes", "2x64x16x16", "--all-configs"])
    assert _configs_to_time(whole, params, "wgrad", placed)[0] == placed


def test_main_without_a_gpu_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import torch

    def no_gpu() -> str:
        raise RuntimeError("No CUDA GPUs are available")  # torch's words on a CUDA build

    monkeypatch.setattr(torch.cuda, "get_device_name", no_gpu)
    from spio.kernels.conv2d_gw8 import bench

    out = tmp_path / "out"
    with pytest.raises(SystemExit) as caught:
        bench.main(["--shapes", "2x64x8x8", "--out", str(out), "--no-plots"])
    assert caught.value.code == 2  # as argparse's errors and the matmul benchmark's
    assert "error: the conv2d_gw8 benchmark needs a CUDA GPU" in capsys.readouterr().err
    assert not out.exists()  # a refused run leaves no empty folder


def test_main_without_matplotlib_says_so_before_timing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    from spio.kernels.conv2d_gw8 import bench

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *rest: None if name == "matplotlib" else real_find_spec(name, *rest),
    )
    monkeypatch.setattr(bench, "copy_bandwidth_gbs", _no_timing)
    with pytest.raises(SystemExit) as caught:
        bench.main(["--shapes", "2x64x8x8", "--out", str(tmp_path)])
    assert caught.value.code == 2
    assert "plots need matplotlib" in capsys.readouterr().err


def _no_timing(*_args: object) -> float:
    raise AssertionError("the benchmark timed something before saying what it lacks")
