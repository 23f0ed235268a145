"""`python -m spio.kernels.bench FAMILY`: dispatch to a family's bench, clear errors (no GPU)."""

import subprocess
import sys

import pytest

from spio.kernels import bench


def test_help_lists_the_families(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--help"])
    assert exit_info.value.code == 0
    assert "conv2d_gw8" in capsys.readouterr().out


def test_missing_family_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        bench.main([])
    assert exit_info.value.code == 2
    assert "name a kernel family" in capsys.readouterr().err


def test_unknown_family_names_the_choices(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["conv3d", "--shapes", "1x8x8x8"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "unknown kernel family 'conv3d'" in err
    assert "conv2d_gw8" in err


def test_family_options_go_to_the_family(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["conv2d_gw8", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "usage: python -m spio.kernels.bench conv2d_gw8" in out
    assert "--batch-sweep" in out


def test_family_checks_its_own_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["conv2d_gw8", "--launches", "3"])
    assert exit_info.value.code == 2
    assert "--launches >= 20" in capsys.readouterr().err


def test_runs_as_a_module() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "spio.kernels.bench", "conv2d_gw8", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "--shapes" in result.stdout
