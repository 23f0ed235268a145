"""`python -m spio.kernels.bench FAMILY`: dispatch to a family's bench, clear errors (no GPU)."""

import subprocess
import sys

import pytest

from spio.kernels import bench


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[object, str, str]:
    """bench.main(argv), which always exits here: (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as exit_info:
        bench.main(argv)
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


def test_help_lists_the_families(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["--help"], capsys)
    assert code == 0
    assert "conv2d_gw8" in out


def test_missing_family_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run([], capsys)
    assert code == 2
    assert "name a kernel family" in err


def test_unknown_family_names_the_choices(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["conv3d", "--shapes", "1x8x8x8"], capsys)
    assert code == 2
    assert "unknown kernel family 'conv3d'" in err
    assert "conv2d_gw8" in err


def test_family_options_go_to_the_family(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["conv2d_gw8", "--help"], capsys)
    assert code == 0
    assert "usage: python -m spio.kernels.bench conv2d_gw8" in out
    assert "--batch-sweep" in out


def test_family_checks_its_own_options(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["conv2d_gw8", "--launches", "3"], capsys)
    assert code == 2
    assert "--launches >= 20" in err


def test_runs_as_a_module() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "spio.kernels.bench", "conv2d_gw8", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "--shapes" in result.stdout
