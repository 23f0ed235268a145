"""The spio-perfmodel command: evaluate, train, pick."""

from __future__ import annotations

import csv
import dataclasses
import re
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


def _refused(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> str:
    """main(argv)'s error line, which must match message, after exiting with status 2 as
    argparse does for what it was given."""
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("spio-perfmodel: error: "), err
    assert len(err.splitlines()) == 1, err
    assert re.search(message, err), err
    return err


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
    assert out.startswith("64x64x32x32: WgradConfig(")  # the layer it chose for, then the config
    assert "predicted" in out
    assert "the process's first choice in" in out


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
    _refused(["evaluate", str(train), "--held-out", str(held_out), "--pass", "fprop", "--folds",
              "2"], "--folds splits the rows into folds; --held-out", capsys)  # fmt: skip
    _refused(["evaluate", str(train), "--held-out", str(held_out), "--pass", "wgrad"],
             "no wgrad rows", capsys)  # fmt: skip


def test_errors_exit_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["pick", str(tmp_path / "none.json"), "8x64x8x8"])
    assert exit_info.value.code == 2
    assert "no latency model at" in capsys.readouterr().err
    times = tmp_path / "times.csv"
    _write_times(times, "fprop")
    _refused(["evaluate", str(times), "--pass", "wgrad"], "no wgrad rows", capsys)
    # Rows of two versions of the kernels: the command asks which.
    text = times.read_text().splitlines()
    header = text[0].replace("timing,", "timing,kernel,")
    rows = [line.replace(",graph,", ",graph,aaaaaaaaaaaa,", 1) for line in text[1:]]
    rows[0] = rows[0].replace("aaaaaaaaaaaa", "bbbbbbbbbbbb")
    times.write_text("\n".join([header, *rows]) + "\n")
    _refused(["train", str(times), "--pass", "fprop", "--out", str(tmp_path / "m.json")],
             r"several versions of the kernels.*--kernel", capsys)  # fmt: skip
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
    _refused(["train", str(times), "--pass", "fprop", "--pool", "--out", str(model)],
             "several GPUs", capsys)  # fmt: skip
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


def test_sm_count_below_one_is_refused_as_argparse_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (B2): --sm-count 0 crashed in XGBoost with its native backtrace after
    NumPy's warnings of a division by zero, and -5 trained a model of -5 SMs."""
    times = tmp_path / "times.csv"
    _write_times(times, "wgrad")
    for count, argv in (("0", ["evaluate"]), ("-5", ["train", "--out", str(tmp_path / "m.ubj")])):
        with pytest.raises(SystemExit) as caught:
            main([*argv, str(times), "--pass", "wgrad", "--sm-count", count])
        assert caught.value.code == 2
        assert (
            f"argument --sm-count: must be a positive int, got {count}" in capsys.readouterr().err
        )
    assert not (tmp_path / "m.ubj").exists()


def test_a_path_that_cannot_be_read_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regressions (B4, P10): a directory given for a CSV gave IsADirectoryError's traceback
    (status 1), and `pick` on one said there was no model there."""
    folder = tmp_path / "dir.csv"
    folder.mkdir()
    times = tmp_path / "times.csv"
    _write_times(times, "wgrad")
    model = str(tmp_path / "m.ubj")
    for argv in (
        ["train", str(folder), "--pass", "wgrad", "--out", model],
        ["evaluate", str(folder), "--pass", "wgrad"],
        ["evaluate", str(times), "--pass", "wgrad", "--held-out", str(folder)],
        ["compare", "--from", str(folder)],
        ["compare", "--shapes", "8x64x8x8", "--exclude", str(folder)],
    ):
        _refused(argv, rf"^spio-perfmodel: error: {folder}: Is a directory$", capsys)
    missing = tmp_path / "missing.csv"
    _refused(["evaluate", str(missing), "--pass", "wgrad"],
             f"{missing}: No such file or directory", capsys)  # fmt: skip
    _refused(["pick", str(folder), "8x64x8x8"], f"{folder} is a directory, not a latency model",
             capsys)  # fmt: skip


def test_train_refuses_an_out_it_cannot_write_before_reading_any_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regressions (B5, N1): --out in a missing directory failed after the training (minutes
    on the whole data) with XGBoost's native backtrace; any suffix but .json and .ubj wrote
    UBJSON with a warning. The times file here does not exist: --out is refused first."""
    unread = str(tmp_path / "not_read.csv")
    (tmp_path / "dir.ubj").mkdir()
    for out, message in (
        (tmp_path / "nodir" / "x.json", f"--out {tmp_path}/nodir/x.json: directory "
                                          f"{tmp_path}/nodir does not exist"),
        (tmp_path / "dir.ubj", f"--out {tmp_path}/dir.ubj: is a directory"),
        (tmp_path / "x.txt", r"--out .*x\.txt: a model file's name ends in \.json .* got '\.txt'"),
    ):  # fmt: skip
        _refused(["train", unread, "--pass", "wgrad", "--out", str(out)], message, capsys)


def test_an_empty_selection_names_the_option_and_what_the_files_hold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (P1): every empty selection said "no fprop rows for GPU [] in [...]", a
    header-only file and a wrong --kernel alike."""
    times = tmp_path / "times.csv"
    _write_times(times, "wgrad")
    argv = ["evaluate", str(times), "--pass", "wgrad"]
    _refused(["evaluate", str(times), "--pass", "fprop"],
             rf"no fprop rows in {times}; the rows there are of the passes wgrad \(160 rows\)$",
             capsys)  # fmt: skip
    _refused([*argv, "--gpu", "H200"], r"no wgrad rows of --gpu H200 in .*; the wgrad rows "
             r"there are of the GPUs Synthetic GPU \(160 rows\)$", capsys)  # fmt: skip
    _refused([*argv, "--kernel", "deadbeef"], r"no wgrad rows of --kernel deadbeef in .*; the "
             r"wgrad rows there are of the kernels \(unknown\) \(160 rows\)$", capsys)  # fmt: skip
    _refused([*argv, "--launch", "launcher"], r"no wgrad rows of --launch launcher in .*; the "
             r"wgrad rows there are of the launches tile \(160 rows\)$", capsys)  # fmt: skip
    header_only = tmp_path / "header.csv"
    header_only.write_text(times.read_text().splitlines()[0] + "\n")
    _refused(["evaluate", str(header_only), "--pass", "wgrad"], rf"no rows in {header_only}$",
             capsys)  # fmt: skip


def test_rows_left_out_are_counted_by_reason_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (P3): malformed rows were called rows "the kernel no longer accepts", three
    examples went to standard output, and how many of each kind was not said."""
    times = tmp_path / "times.csv"
    _write_times(times, "wgrad")
    lines = times.read_text().splitlines()
    bad = [line.rsplit(",", 1)[0] + ",abc" for line in lines[1:4]]
    times.write_text("\n".join([*lines, *bad, lines[1].rsplit(",", 1)[0] + ",-1"]) + "\n")
    main(["train", str(times), "--pass", "wgrad", "--out", str(tmp_path / "m.ubj")])
    out, err = capsys.readouterr()
    assert "left out" not in out
    assert err.splitlines() == [
        "left out 4 rows (malformed, or configs the kernel no longer accepts):",
        f"  3 x ValueError: could not convert string to float: 'abc' (first at {times}:162)",
        "  1 x ValueError: median_us must be a positive finite number, got -1.0 (first at "
        f"{times}:165)",
    ]


def test_a_layer_without_pad_keeps_its_output_size_and_is_named_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Regressions (P4, N3, N5): --r 1 --s 1 failed with the default --pad 1 ("padding top
    must be 0 to 0, got 1", naming no option), --r 5 --s 5 silently chose for padding 1, the
    choice did not say which layer it was for, and shapes in capitals were refused."""
    from spio.perfmodel._shipped import shipped_model_path

    model = str(shipped_model_path("fprop", "NVIDIA H200"))
    for argv, layer in (
        (["128X64X64X64", "--r", "1", "--s", "1"], "128x64x64x64 1x1 pad 0 0 0 0: "),
        (["8x64x16x16", "--r", "5", "--s", "5"], "8x64x16x16 5x5 pad 2 2 2 2: "),
        (["8x64x16x16"], "8x64x16x16: "),
        (["8x64x16x16", "--r", "5", "--s", "3", "--pad", "2", "1"], "8x64x16x16 5x3 pad 2 2 1 1: "),
    ):
        main(["pick", model, *argv])
        assert capsys.readouterr().out.startswith(f"{layer}FpropConfig(")
    _refused(["pick", model, "128x64x64x64", "--r", "1", "--s", "1", "--pad", "1"],
             "layer 128x64x64x64 with --r 1 --s 1 --pad 1: padding top must be 0 to 0, got 1",
             capsys)  # fmt: skip
    _refused(["pick", model, "8x64x16x16", "--pad", "1", "1", "1"],
             "--pad takes 1, 2 or 4 ints, got 3", capsys)  # fmt: skip
    _refused(["pick", model, "0x64x16x16"], "layer 0x64x16x16 with --r 3 --s 3: n must be",
             capsys)  # fmt: skip


def test_compare_refuses_options_it_would_leave_unused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (P6): a --model of a pass --passes left out was loaded and never used (the
    run timed the shipped choice), and campaign options beside --shapes, or timing options
    beside --from, were ignored."""
    times, model = tmp_path / "times.csv", tmp_path / "wgrad.ubj"
    _write_times(times, "wgrad", LAYERS[:2])
    main(["train", str(times), "--pass", "wgrad", "--out", str(model)])
    monkeypatch.setattr(cli, "compare", _no_timing)
    _refused(["compare", "--shapes", "8x64x8x8", "--passes", "fprop", "--model", str(model)],
             "--model gives a wgrad model, but --passes fprop times no wgrad: add wgrad to "
             "--passes", capsys)  # fmt: skip
    _refused(["compare", "--shapes", "8x64x8x8", "--layers", "4", "--seed", "0"],
             "--shapes names the layers; --layers, --seed sample a campaign's", capsys)  # fmt: skip
    _refused(["compare", "--r", "5", "--pad", "2"],
             "--r, --pad shape the layers of --shapes; a campaign samples its own",
             capsys)  # fmt: skip
    _refused(["compare", "--from", str(times), "--out", "x.csv", "--loop"],
             "--from reports on earlier runs and times nothing; --loop, --out would time",
             capsys)  # fmt: skip


def _no_timing(*args: object, **kwargs: object) -> list[object]:
    raise AssertionError("compare timed layers with options it should have refused")


def test_tunings_says_when_its_directory_cannot_be_kept_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (N10): with SPIO_JIT_CACHE_DIR naming a file, `tunings` said "0 tunings
    kept" while every tuning failed to be stored, silently."""
    cache = tmp_path / "cache"
    cache.write_text("a file, not a directory")
    monkeypatch.setenv("SPIO_JIT_CACHE_DIR", str(cache))
    monkeypatch.delenv("SPIO_JIT_DISABLE_CACHE", raising=False)
    with pytest.raises(SystemExit) as caught:
        main(["tunings"])
    assert caught.value.code == 2
    out, err = capsys.readouterr()
    assert out == f"0 tunings kept in {cache}/autotune-v2\n"
    assert err.startswith(f"spio-perfmodel: error: {cache} is a file, not a directory: autotuning")
    monkeypatch.setenv("SPIO_JIT_CACHE_DIR", str(tmp_path / "new" / "cache"))
    main(["tunings"])  # a directory to be made is fine
    assert capsys.readouterr().out.startswith("0 tunings kept in ")


def test_folds_beside_held_out_are_refused_before_the_files_are_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (N11): every file was read first (seconds on a campaign's)."""
    unread = str(tmp_path / "not_read.csv")
    _refused(["evaluate", unread, "--pass", "fprop", "--held-out", unread, "--folds", "3"],
             "--folds splits the rows into folds; --held-out names", capsys)  # fmt: skip
