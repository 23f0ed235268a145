"""The spio-perfmodel command: evaluate, train, pick."""

from __future__ import annotations

import csv
import dataclasses
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from synthetic import LAYERS, synthetic_rows

import spio.perfmodel
from spio.kernels.conv2d_gw8 import Conv2dGw8Params
from spio.perfmodel import _cli as cli
from spio.perfmodel._cli import main


def _write_times(
    path: Path, pass_name: str, layers: Sequence[Conv2dGw8Params] = LAYERS[:4]
) -> None:
    rows = synthetic_rows(pass_name, layers, per_layer=40)
    fields = [f.name for f in dataclasses.fields(rows[0].config)]
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["gpu", "shape", "n", "c", "h", "w", "r", "s", "padding", "dtype",
                         "timing", "pass_name", *fields, "median_us"])  # fmt: skip
        for row in rows:
            p = row.params
            writer.writerow([
                row.gpu, f"{p.n}x{p.c}x{p.h}x{p.w}", p.n, p.c, p.h, p.w, p.r, p.s,
                " ".join(map(str, p.padding)), p.dtype, "graph", pass_name,
                *dataclasses.astuple(row.config), row.median_us,
            ])  # fmt: skip


def _write_two_kinds(
    path: Path,
    pass_name: str,
    first: Callable[[str], str],
    second: Callable[[str], str],
    header: Callable[[str], str] = str,
) -> None:
    """_write_times's rows twice: each line edited by `first`, then by `second` (another
    launch, another GPU), under the header edited by `header`."""
    _write_times(path, pass_name)
    text = path.read_text().splitlines()
    rows = text[1:]
    path.write_text("\n".join([header(text[0]), *map(first, rows), *map(second, rows)]) + "\n")


def test_train_then_pick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    times = tmp_path / "times.csv"
    _write_times(times, "wgrad")
    model = tmp_path / "wgrad.json"
    main(["train", str(times), "--pass", "wgrad", "--out", str(model)])
    assert "trained a wgrad model for Synthetic GPU on 160 configs of 4 layers" in (
        capsys.readouterr().out
    )
    main(["pick", str(model), "64x64x32x32"])
    out = capsys.readouterr().out
    assert out.startswith("WgradConfig(")
    assert "predicted" in out


def test_evaluate_prints_the_regret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    times = tmp_path / "times.csv"
    _write_times(times, "fprop")
    main(["evaluate", str(times), "--pass", "fprop", "--folds", "2"])
    out = capsys.readouterr().out
    assert "fprop: 4 held-out layers" in out
    assert "model regret: median" in out


def test_evaluate_shows_how_the_summary_moves_with_the_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    times = tmp_path / "times.csv"
    _write_times(times, "fprop")
    main(["evaluate", str(times), "--pass", "fprop", "--folds", "2", "--seeds", "0", "7"])
    out = capsys.readouterr().out
    assert "fprop: 4 held-out layers" in out  # the first seed's table
    assert "fprop: the same folds, trained with seeds [0, 7]" in out
    assert "\nseed 0: model median" in out
    assert "\nseed 7: model median" in out
    assert "across seeds: model median" in out
    # Without --seeds: one evaluation, the default seed, and no spread.
    main(["evaluate", str(times), "--pass", "fprop", "--folds", "2"])
    assert "across seeds" not in capsys.readouterr().out


def test_evaluate_scores_the_held_out_files_layers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    train, held_out = tmp_path / "train.csv", tmp_path / "held_out.csv"
    _write_times(train, "fprop", LAYERS[:6])
    _write_times(held_out, "fprop", LAYERS[6:8])
    main(["evaluate", str(train), "--held-out", str(held_out), "--pass", "fprop"])
    out = capsys.readouterr().out
    assert "fprop: 2 held-out layers" in out
    assert "model regret: median" in out
    with pytest.raises(SystemExit, match="--folds splits the rows into folds; --held-out"):
        main(["evaluate", str(train), "--held-out", str(held_out), "--pass", "fprop",
              "--folds", "2"])  # fmt: skip
    with pytest.raises(SystemExit, match="no wgrad rows"):
        main(["evaluate", str(train), "--held-out", str(held_out), "--pass", "wgrad"])


def test_errors_exit_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["pick", str(tmp_path / "none.json"), "8x64x8x8"])
    assert exit_info.value.code == 2
    assert "no latency model at" in capsys.readouterr().err
    times = tmp_path / "times.csv"
    _write_times(times, "fprop")
    with pytest.raises(SystemExit, match="no wgrad rows"):
        main(["evaluate", str(times), "--pass", "wgrad"])
    # Rows of two versions of the kernels: the command asks which.
    text = times.read_text().splitlines()
    header = text[0].replace("timing,", "timing,kernel,")
    rows = [line.replace(",graph,", ",graph,aaaaaaaaaaaa,", 1) for line in text[1:]]
    rows[0] = rows[0].replace("aaaaaaaaaaaa", "bbbbbbbbbbbb")
    times.write_text("\n".join([header, *rows]) + "\n")
    with pytest.raises(SystemExit, match=r"several versions of the kernels.*--kernel"):
        main(["train", str(times), "--pass", "fprop", "--out", str(tmp_path / "m.json")])
    main(["evaluate", str(times), "--pass", "fprop", "--kernel", "aaaaaaaaaaaa", "--folds", "2"])
    assert "model regret" in capsys.readouterr().out


def test_rows_timed_two_ways_train_one_model_or_are_chosen_between(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    times = tmp_path / "times.csv"
    _write_two_kinds(
        times,
        "wgrad",
        lambda line: line.replace(",graph,", ",graph,tile,", 1),
        lambda line: line.replace(",graph,", ",graph,launcher,", 1),
        lambda header: header.replace("timing,", "timing,launch,"),
    )
    model = tmp_path / "wgrad.ubj"
    from spio.perfmodel import LatencyModel

    main(["train", str(times), "--pass", "wgrad", "--out", str(model)])
    out = capsys.readouterr().out
    assert "rows of both launches, tile (160 rows), launcher (160 rows)" in out
    assert "on 320 configs of 4 layers" in out
    both = LatencyModel.load(model)
    assert (both.launch, both.flags) == ("launcher", ("launched",))
    main(["train", str(times), "--pass", "wgrad", "--launch", "launcher", "--out", str(model)])
    assert "on 160 configs of 4 layers" in capsys.readouterr().out
    one = LatencyModel.load(model)
    assert (one.launch, one.flags) == ("launcher", ())
    main(["evaluate", str(times), "--pass", "wgrad", "--folds", "2", "--no-tma"])
    assert "wgrad: 4 held-out layers" in capsys.readouterr().out


def test_shipped_lists_the_models(capsys: pytest.CaptureFixture[str]) -> None:
    main(["shipped"])
    out = capsys.readouterr().out
    for pass_name in ("fprop", "dgrad", "wgrad"):
        assert f"NVIDIA H200 {pass_name} kernels" in out


def test_compare_refuses_a_campaign_whose_layers_are_all_excluded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from spio.perfmodel._campaign import campaign_layers

    times = tmp_path / "times.csv"
    _write_times(times, "fprop", [*LAYERS[:2], campaign_layers(1, 1)[0]])
    with pytest.raises(SystemExit):
        main(["compare", "--layers", "1", "--seed", "1", "--exclude", str(times)])
    assert "every one of the 1 layers is in the --exclude files" in capsys.readouterr().err


def test_layers_lists_a_campaign_on_chosen_widths_and_sides(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from spio.perfmodel._campaign import STANDARD_LAYERS

    main(["layers", "--layers", "20", "--seed", "2", "--channels", "96", "160", "--sides", "12"])
    sampled = capsys.readouterr().out.splitlines()[len(STANDARD_LAYERS) :]
    assert len(sampled) == 20 - len(STANDARD_LAYERS)
    assert all(line.split()[0].split("x")[1] in ("96", "160") for line in sampled)
    assert all(line.split()[0].endswith("x12x12") for line in sampled)
    with pytest.raises(SystemExit):
        main(["layers", "--channels", "100"])
    err = capsys.readouterr().err
    assert "--channels: must be a multiple of 8 (the group width), got 100" in err


def test_compare_takes_layers_by_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Layers named on the command line (here all excluded, so nothing reaches the GPU).
    times = tmp_path / "times.csv"
    wide = Conv2dGw8Params.make(8, 256, 8, 8, r=5, s=5, padding=2, dtype="bfloat16")
    _write_times(times, "fprop", [LAYERS[0], wide])
    argv = ["compare", "--shapes", "8x256x8x8", "--r", "5", "--s", "5", "--pad", "2"]
    with pytest.raises(SystemExit):
        main([*argv, "--dtype", "bfloat16", "--exclude", str(times)])
    assert "every one of the 1 layers is in the --exclude files" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["compare", "--shapes", "8x256x8"])
    assert "a layer is N x C x H x W, e.g. 128x64x64x64; got '8x256x8'" in capsys.readouterr().err


def test_compare_lets_a_model_of_your_own_choose(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import spio.perfmodel._cli as cli

    times, model = tmp_path / "times.csv", tmp_path / "wgrad.ubj"
    _write_times(times, "wgrad")
    main(["train", str(times), "--pass", "wgrad", "--out", str(model)])
    seen: dict[str, object] = {}

    def timed(layers: object, passes: object, graph: bool, models: object) -> list[object]:
        seen.update(layers=layers, models=models)
        return []

    monkeypatch.setattr(cli, "compare", timed)
    main(["compare", "--shapes", "8x256x8x8", "--passes", "wgrad", "--model", str(model)])
    models = seen["models"]
    assert isinstance(models, dict)
    assert list(models) == ["wgrad"]
    assert models["wgrad"].pass_name == "wgrad"
    main(["compare", "--shapes", "8x256x8x8"])
    assert seen["models"] == {}
    with pytest.raises(SystemExit):
        main(["compare", "--shapes", "8x256x8x8", "--selection", "fastest"])
    assert "invalid choice: 'fastest'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["compare", "--shapes", "8x256x8x8", "--model", str(model), str(model)])
    assert "--model has two wgrad models; give one per pass" in capsys.readouterr().err


def test_pool_trains_one_gpus_model_on_every_gpus_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from spio.perfmodel import LatencyModel

    times = tmp_path / "times.csv"
    _write_two_kinds(times, "fprop", str, lambda line: line.replace("Synthetic GPU", "Other GPU"))
    model = tmp_path / "fprop.ubj"
    with pytest.raises(SystemExit, match="several GPUs"):
        main(["train", str(times), "--pass", "fprop", "--pool", "--out", str(model)])
    main(["train", str(times), "--pass", "fprop", "--gpu", "Other GPU", "--out", str(model)])
    assert "on 160 configs of 4 layers" in capsys.readouterr().out
    assert LatencyModel.load(model).flags == ()
    argv = ["--pass", "fprop", "--gpu", "Other GPU", "--pool"]
    main(["train", str(times), *argv, "--out", str(model)])
    assert "on 320 configs of 4 layers" in capsys.readouterr().out
    pooled = LatencyModel.load(model)
    assert (pooled.gpu, pooled.flags) == ("Other GPU", ("other_gpu",))
    main(["evaluate", str(times), *argv, "--folds", "2"])
    assert "fprop: 4 held-out layers" in capsys.readouterr().out


def test_compare_from_earlier_runs_times_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from spio.perfmodel import _compare

    layer = Conv2dGw8Params.make(8, 64, 16, 16, r=5, s=5, padding=2)
    row = _compare.Comparison(layer, "dgrad", "h", "c", "model", 6.0, 5.0, 20.0, "s", 5.5)
    path = _compare.write_csv([row], tmp_path / "k5.csv")
    main(["compare", "--from", str(path), str(path)])
    out = capsys.readouterr().out
    assert "8x64x16x16 5x5 pad 2 2 2 2 dgrad" in out
    assert "dgrad: chosen over the shipped model's choice 1.100x (geometric mean of 2 layers" in out


def test_compare_picks_by_the_selection_it_is_given_for_its_run_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import spio.perfmodel._cli as cli
    from spio.perfmodel import selection_mode, set_selection_mode

    modes: list[str] = []

    def timed(layers: object, passes: object, graph: bool, models: object) -> list[object]:
        modes.append(selection_mode())
        return []

    monkeypatch.setattr(cli, "compare", timed)
    monkeypatch.delenv("SPIO_CONFIG_SELECTION", raising=False)
    main(["compare", "--shapes", "8x256x8x8", "--selection", "autotune"])
    main(["compare", "--shapes", "8x256x8x8"])
    set_selection_mode("heuristic")
    try:
        main(["compare", "--shapes", "8x256x8x8", "--selection", "model"])
        assert selection_mode() == "heuristic"  # the mode set before comes back
    finally:
        set_selection_mode(None)
    assert modes == ["autotune", "model", "model"]


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--version"])
    assert caught.value.code == 0
    assert capsys.readouterr().out == f"spio-perfmodel {spio.perfmodel.__version__}\n"


@pytest.mark.parametrize(("module", "extra"), [("torch", "collect"), ("sklearn", "train")])
def test_a_missing_optional_dependency_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    module: str,
    extra: str,
) -> None:
    def layers(_args: object) -> None:
        raise ModuleNotFoundError(f"No module named '{module}'", name=module)

    monkeypatch.setattr(cli, "_layers", layers)
    with pytest.raises(SystemExit) as caught:
        main(["layers"])
    assert caught.value.code == 2
    assert capsys.readouterr().err == (
        f'spio-perfmodel: error: layers needs {module}: pip install "spio-perfmodel[{extra}]"\n'
    )


def test_another_missing_module_is_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def layers(_args: object) -> None:
        raise ModuleNotFoundError("No module named 'spio.nothing'", name="spio.nothing")

    monkeypatch.setattr(cli, "_layers", layers)
    with pytest.raises(ModuleNotFoundError, match=r"spio\.nothing"):
        main(["layers"])


def test_a_reader_that_goes_away_ends_the_output_quietly(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    def layers(_args: object) -> None:
        raise BrokenPipeError  # as a write does once `| head -1` has read its line

    monkeypatch.setattr(cli, "_layers", layers)
    with pytest.raises(SystemExit) as caught:
        main(["layers"])
    assert caught.value.code == 1
    print("after the pipe broke")  # standard output now goes nowhere, without an error
    sys.stdout.flush()
    assert capfd.readouterr() == ("", "")
