"""Campaigns: the sampled layers, and collect's runs of the benchmark (faked: no GPU here)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

import spio.jit
from spio.kernels.conv2d_gw8 import Conv2dGw8Params, bench
from spio.kernels.conv2d_gw8.bench_results import contender_rows, read_csv, write_csv
from spio.perfmodel import read_config_times
from spio.perfmodel._campaign import (
    CAMPAIGN_TABLE,
    MAX_ACTIVATION_BYTES,
    STANDARD_LAYERS,
    campaign_layers,
    collect,
    layers_done,
)


def test_layers_are_deterministic_distinct_and_bounded() -> None:
    layers = campaign_layers(40, seed=3)
    assert layers == campaign_layers(40, seed=3)
    assert layers != campaign_layers(40, seed=4)
    assert len(set(layers)) == 40
    assert layers[: len(STANDARD_LAYERS)] == list(STANDARD_LAYERS)
    for layer in layers:
        assert layer.n * layer.c * layer.h * layer.w * 2 <= MAX_ACTIVATION_BYTES
        assert layer.r == layer.s <= layer.h
        assert layer.padding == (layer.r // 2,) * 4
    assert campaign_layers(2) == list(STANDARD_LAYERS[:2])
    with pytest.raises(ValueError, match="count must be at least 1"):
        campaign_layers(0)


def test_a_campaign_can_aim_at_chosen_batch_sizes() -> None:
    layers = campaign_layers(30, seed=2, batches=(256, 512))
    assert {layer.n for layer in layers[len(STANDARD_LAYERS) :]} <= {256, 512}
    assert layers[: len(STANDARD_LAYERS)] == list(STANDARD_LAYERS)
    with pytest.raises(ValueError, match=r"batches must be positive ints, got \[0\]"):
        campaign_layers(10, batches=(0,))


def test_a_campaign_can_aim_at_the_widths_networks_use() -> None:
    from spio.perfmodel._campaign import NETWORK_CHANNELS, NETWORK_SIDES

    layers = campaign_layers(40, seed=5, channels=NETWORK_CHANNELS, sides=NETWORK_SIDES)
    sampled = layers[len(STANDARD_LAYERS) :]
    assert {layer.c for layer in sampled} <= set(NETWORK_CHANNELS)
    assert {layer.h for layer in sampled} <= set(NETWORK_SIDES)
    assert {layer.c for layer in sampled} & {96, 160}  # group counts that are not multiples of 8
    assert layers == campaign_layers(40, seed=5, channels=NETWORK_CHANNELS, sides=NETWORK_SIDES)
    with pytest.raises(ValueError, match=r"channels must be positive multiples of 8, got \[100\]"):
        campaign_layers(10, channels=(100,))
    with pytest.raises(ValueError, match=r"sides must be positive ints, got \[\]"):
        campaign_layers(10, sides=())


def _fake_bench(calls: list[list[str]]):  # type: ignore[no-untyped-def]
    """A bench.main that records its argv, writes one config row per shape and pass, and its
    table (the default against cuDNN) of this run's shapes, with its JSON twin."""

    def main(argv: list[str]) -> None:
        calls.append(argv)
        args = bench.parse_args(argv)
        out = Path(args.out)
        for pass_name in args.passes:
            path = out / f"conv2d_gw8_configs_{pass_name}.csv"
            new = not path.exists()
            with path.open("a", newline="") as f:
                writer = csv.writer(f)
                fields = ["block_q", "block_g", "warp_g", "block_p", "prefetch", "block_n"]
                layer = ["gpu", "shape", "n", "c", "h", "w", "r", "s", "padding", "dtype"]
                if new:
                    writer.writerow([*layer, "timing", "pass_name", *fields, "median_us"])
                for shape in args.shapes:
                    n, c, h, w = shape.split("x")
                    pad = " ".join(str(v) for v in args.padding)
                    writer.writerow(["G", shape, n, c, h, w, args.r, args.s, pad, args.dtype,
                                     "graph", pass_name, 16, 1, 1, 8, 1, 1, 9.0])  # fmt: skip
        rows = []
        for shape in args.shapes:
            n, c, h, w = (int(v) for v in shape.split("x"))
            params = Conv2dGw8Params.make(n, c, h, w, r=args.r, s=args.s, padding=args.padding)
            for pass_name in args.passes:
                rows += contender_rows(params, pass_name, "default", 9.0, 20.0, copy_gbs=4000.0,
                                       gpu="G", torch_version="t", cudnn_version="c",
                                       launches=20, repetitions=9, spio_launch="pdl")  # fmt: skip
        write_csv(rows, out / bench.CSV_NAME)
        (out / bench.JSON_NAME).write_text("[]")

    return main


def test_collect_groups_layers_by_filter_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(bench, "main", _fake_bench(calls))
    monkeypatch.setattr(spio.jit, "device_info", lambda index=0: None)  # (as if on a GPU)
    layers = campaign_layers(12, seed=1)
    timed = collect(tmp_path, layers, 5, passes=("wgrad",))
    assert timed == layers
    filters = {(layer.r, layer.padding, layer.dtype) for layer in layers}
    assert len(calls) == len(filters)
    for argv in calls:
        assert argv[argv.index("--sample-configs") + 1] == "5"
        assert "--cuda-graph" in argv
        assert "--all-configs" in argv
        assert "--no-plots" in argv  # a campaign keeps its tables, not a PNG per layer
    assert layers_done(tmp_path, ["wgrad"]) == set(layers)
    # Every run's table is kept, one after another, and the runs' own files go.
    table = read_csv(tmp_path / CAMPAIGN_TABLE)
    assert sorted({(row.shape, row.r) for row in table}) == sorted(
        {(f"{p.n}x{p.c}x{p.h}x{p.w}", p.r) for p in layers}
    )
    assert [row.contender for row in table] == ["spio", "cudnn"] * len(layers)
    assert not (tmp_path / bench.CSV_NAME).exists()
    assert not (tmp_path / bench.JSON_NAME).exists()
    # A second run finds every layer done and runs nothing.
    calls.clear()
    assert collect(tmp_path, layers, 5, passes=("wgrad",)) == []
    assert calls == []
    # A pass with no file yet means no layer is done for it.
    assert layers_done(tmp_path, ["wgrad", "fprop"]) == set()


def test_the_command_line_collects_and_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from spio.perfmodel._cli import main

    calls: list[list[str]] = []
    monkeypatch.setattr(bench, "main", _fake_bench(calls))
    monkeypatch.setattr(spio.jit, "device_info", lambda index=0: None)  # (as if on a GPU)
    main(["layers", "--layers", "7", "--seed", "2"])
    listed = capsys.readouterr().out.split("\n")
    assert listed[0] == "128x64x64x64"
    assert len([line for line in listed if line]) == 7
    out = tmp_path / "data"
    main(["collect", "--out", str(out), "--layers", "7", "--seed", "2", "--configs", "3",
          "--passes", "wgrad", "--loop"])  # fmt: skip
    assert "timed 7 of 7 layers" in capsys.readouterr().out
    assert all("--cuda-graph" not in argv for argv in calls)
    main(["collect", "--out", str(out), "--layers", "7", "--seed", "2", "--passes", "wgrad"])
    assert "timed 0 of 7 layers" in capsys.readouterr().out
    assert all("--as-launched" not in argv for argv in calls)
    main(["collect", "--out", str(tmp_path / "launched"), "--layers", "2", "--passes", "wgrad",
          "--as-launched"])  # fmt: skip
    assert "--as-launched" in calls[-1]


def test_values_that_admit_too_few_layers_fail_at_once_with_the_reason() -> None:
    """Regression (P5): every draw of a layer past MAX_ACTIVATION_BYTES was thrown away
    until 1000 draws per layer had gone (87 s), then "could not sample N distinct layers"."""
    with pytest.raises(ValueError, match=r"no layer of these batches, channels and sides fits "
                       r"within 256 MiB of activations: the smallest, 512x1024x112x112, has "
                       r"12544 MiB"):  # fmt: skip
        campaign_layers(100_000, batches=(512,), channels=(1024,), sides=(112,))
    # One batch, width and side of 1 x 1: a 1 x 1 filter in two dtypes, beside the standard six.
    with pytest.raises(ValueError, match=r"only 8 distinct layers, the 6 standard ones among "
                       r"them, can come from .*; asked for 20"):  # fmt: skip
        campaign_layers(20, batches=(1,), channels=(8,), sides=(1,))
    # As many as there are: every one of them is drawn.
    assert len(campaign_layers(8, batches=(1,), channels=(8,), sides=(1,))) == 8
    # A standard layer the draws can give too counts once: 128 x 64 x 64 x 64 in 4 filters
    # and 2 dtypes, one of them the standard 128x64x64x64, and the other 5 standard ones.
    assert len(campaign_layers(13, batches=(128,), channels=(64,), sides=(64,))) == 13
    with pytest.raises(ValueError, match="only 13 distinct layers"):
        campaign_layers(14, batches=(128,), channels=(64,), sides=(64,))


def test_collect_times_a_layer_cut_off_between_passes_for_the_passes_it_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (N8): a layer with some passes' rows written was timed again for every
    pass, appending rows of the finished ones that training then counted twice."""
    calls: list[list[str]] = []
    monkeypatch.setattr(bench, "main", _fake_bench(calls))
    monkeypatch.setattr(spio.jit, "device_info", lambda index=0: None)  # (as if on a GPU)
    layers = campaign_layers(3, seed=1)
    collect(tmp_path, layers[:1], 5, passes=("wgrad",))  # cut off after the first's wgrad
    calls.clear()
    assert collect(tmp_path, layers, 5, passes=("wgrad", "fprop")) == layers
    runs = {tuple(argv[argv.index("--passes") + 1 : argv.index("--all-configs")]):
            argv[argv.index("--shapes") + 1 : argv.index("--r")] for argv in calls}  # fmt: skip
    shape = "{0.n}x{0.c}x{0.h}x{0.w}".format
    assert runs == {
        ("fprop",): [shape(layers[0])],
        ("wgrad", "fprop"): [shape(p) for p in layers[1:]],
    }
    for pass_name in ("wgrad", "fprop"):
        path = tmp_path / f"conv2d_gw8_configs_{pass_name}.csv"
        rows = read_config_times(path).rows
        assert len(rows) == len({row.params for row in rows}) == 3  # one row a layer, none twice
    assert collect(tmp_path, layers, 5, passes=("wgrad", "fprop")) == []


def test_collect_narrows_each_run_to_the_conditions_and_checks_them_before_the_gpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from spio.perfmodel._cli import main

    calls: list[list[str]] = []
    monkeypatch.setattr(bench, "main", _fake_bench(calls))
    layers = campaign_layers(3, seed=1)
    # Checked on the layers' config spaces before anything asks for a GPU (there is none).
    with pytest.raises(ValueError, match="wgrad's configs \\(WgradConfig\\) have no field 'mma_k'"):
        collect(tmp_path, layers, 5, passes=("fprop", "wgrad"), where=["mma_k=8"])
    with pytest.raises(ValueError, match="FIELD=VALUE"):
        collect(tmp_path, layers, 5, passes=("fprop",), where=["block_p"])
    assert calls == []
    monkeypatch.setattr(spio.jit, "device_info", lambda index=0: None)  # (as if on a GPU)
    collect(tmp_path, layers, 5, passes=("fprop",), where=["block_p=4,8", "prefetch=6"])
    assert calls
    for argv in calls:
        assert argv[argv.index("--where") :][:3] == ["--where", "block_p=4,8", "prefetch=6"]
        assert bench.parse_args(argv).config_where is not None
    calls.clear()
    main(["collect", "--out", str(tmp_path / "cli"), "--layers", "2", "--passes", "fprop",
          "--where", "block_p=4", "--where", "prefetch=6"])  # fmt: skip
    assert calls[-1][calls[-1].index("--where") :][:3] == ["--where", "block_p=4", "prefetch=6"]
    with pytest.raises(SystemExit):
        main(["collect", "--out", str(tmp_path / "bad"), "--layers", "2", "--passes", "wgrad",
              "--where", "mma_k=8"])  # fmt: skip
    assert "have no field 'mma_k'" in capsys.readouterr().err
