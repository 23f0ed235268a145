"""The command lines' padding, paths and early checks, and whole-file writes (no GPU, no
matplotlib): regressions of an audit of the benchmark and run_once as a user meets them."""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path

import pytest

from spio.kernels.conv2d_gw8 import FpropConfig, WgradConfig, run_once
from spio.kernels.conv2d_gw8.bench import parse_args
from spio.kernels.conv2d_gw8.bench_results import (
    config_times_header,
    padding_option,
    replacing,
    same_padding,
    upgrade_config_times,
)


@pytest.mark.parametrize(
    ("r", "s", "padding"),
    [(1, 1, (0, 0, 0, 0)), (3, 3, (1, 1, 1, 1)), (7, 5, (3, 3, 2, 2)), (2, 4, (0, 1, 1, 2))],
)
def test_without_padding_the_output_is_as_large_as_the_input(
    r: int, s: int, padding: tuple[int, int, int, int]
) -> None:
    """Regression (P4 of the audit): the default padding 1 refused every 1 x 1 layer
    ("padding top must be 0 to 0, got 1", naming neither --pad nor --r and --s) and ran
    5 x 5 and 7 x 7 layers with padding 1 unasked."""
    assert same_padding(r, s) == padding
    argv = ["--r", str(r), "--s", str(s)]
    assert parse_args(["--shapes", "2x64x9x9", *argv]).padding == padding
    params = run_once.layer(run_once.build_parser().parse_args(["fprop", "2x64x9x9", *argv]))
    assert params.padding == padding
    assert (params.p, params.q) == (params.h, params.w)


def test_given_padding_takes_one_two_or_four_ints_in_every_command() -> None:
    assert padding_option([2], 5, 5) == (2, 2, 2, 2)
    assert padding_option([2, 1], 5, 3) == (2, 2, 1, 1)
    assert padding_option([0, 1, 2, 0], 3, 3) == (0, 1, 2, 0)
    with pytest.raises(ValueError, match="--padding takes 1, 2 or 4 ints, got 3"):
        padding_option([1, 1, 1], 3, 3, "--padding")
    # run_once takes the benchmark's spelling too, and its shapes in capitals.
    argv = ["fprop", "2X64X9X9", "--pad", "0", "1", "--r", "1", "--s", "3"]
    assert run_once.layer(run_once.build_parser().parse_args(argv)).padding == (0, 0, 1, 1)


def test_an_out_that_is_a_file_is_refused_by_argparse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (B4): `--out FILE` gave FileExistsError's traceback from mkdir."""
    afile = tmp_path / "afile"
    afile.write_text("")
    with pytest.raises(SystemExit) as caught:
        parse_args(["--out", str(afile)])
    assert caught.value.code == 2
    assert f"--out {afile} is a file; give a directory" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("block_q", r"--config takes FIELD=VALUE with FIELD one of \[.*'block_q'.*\], got "
                    r"'block_q'"),
        ("nosuch=2", "--config takes FIELD=VALUE .* got 'nosuch=2'"),
        ("block_q=abc", "block_q is an int, got 'abc'"),
    ],
)  # fmt: skip
def test_run_once_checks_the_config_fields_before_looking_for_a_gpu(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], config: str, message: str
) -> None:
    """Regression (P9): a malformed --config was reported as `device=0 does not exist`, the
    device's default (which the fields change) being looked for first."""

    def no_gpu_here(args: object) -> str:
        raise AssertionError("run_once looked for a GPU before checking --config")

    monkeypatch.setattr(run_once, "run", no_gpu_here)
    with pytest.raises(SystemExit) as caught:
        run_once.main(["fprop", "128x64x64x64", "--config", config])
    assert caught.value.code == 2
    assert re.search(message, capsys.readouterr().err)


def test_field_values_leave_the_fields_together_to_the_config() -> None:
    # The fields alone are checked early: segments on the type's default block_q would be
    # refused by the config, but the device's default may allow it.
    assert run_once.field_values(FpropConfig, ["segments=2", "block_q=8"]) == {
        "segments": 2,
        "block_q": 8,
    }
    assert run_once.field_values(WgradConfig, ["image_sync=true"]) == {"image_sync": True}


def test_replacing_leaves_the_old_file_whole_when_the_write_fails(tmp_path: Path) -> None:
    """Regression (N7): files rewritten in place (a campaign's table of every layer) were
    lost to a run stopped while writing them, and the upgrade of a config-times file wrote
    through a fixed temporary name that two processes shared."""
    table = tmp_path / "table.csv"
    table.write_text("old\n")
    seen: list[Path] = []

    def write_a_part(temporary: Path) -> None:
        seen.append(temporary)
        temporary.write_text("a part of the new")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"), replacing(table) as temporary:
        write_a_part(temporary)
    assert [(p.parent, p.suffix) for p in seen] == [(table.parent, ".csv")]
    assert table.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["table.csv"]
    with replacing(table) as temporary:
        temporary.write_text("new\n")
    assert table.read_text() == "new\n"
    assert os.listdir(tmp_path) == ["table.csv"]


def test_an_older_config_times_file_is_upgraded_through_a_temporary_file_of_its_own(
    tmp_path: Path,
) -> None:
    path = tmp_path / "conv2d_gw8_configs_fprop.csv"
    header = config_times_header(FpropConfig())
    older = [column for column in header if column != "segments"]
    with path.open("w", newline="") as f:
        csv.writer(f).writerow(older)
    (tmp_path / (path.name + ".upgrading")).write_text("another process's")
    upgrade_config_times(path, FpropConfig())
    assert path.read_text().splitlines()[0] == ",".join(header)
    assert sorted(os.listdir(tmp_path)) == [path.name, path.name + ".upgrading"]
