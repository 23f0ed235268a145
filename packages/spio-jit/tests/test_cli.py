"""The spio-jit command: doctor, cache info, cache clear."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from jit_testkit import SAXPY_SOURCE

import spio.jit as jit
from spio.jit._cli import doctor, main


def test_doctor_reports_nvrtc_headers_driver_and_cache(isolated_cache: Path) -> None:
    out = io.StringIO()
    assert doctor(out) == 0
    report = out.getvalue()
    info = jit.nvrtc_info()
    assert f"NVRTC:          {info.version_string}" in report
    assert str(info.library) in report
    assert "CUDA headers:" in report
    assert "cuda-bindings:" in report
    assert str(isolated_cache) in report
    assert "SPIO_JIT_CACHE_DIR=" in report
    if jit.device_count() == 0:
        assert "Driver:" in report
        assert "GPUs:           none" in report


def test_cache_info_and_clear_commands(
    isolated_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jit.compile(SAXPY_SOURCE, arch="sm_80")
    assert main(["cache", "info"]) == 0
    assert "kernels:   1" in capsys.readouterr().out
    assert main(["cache", "clear"]) == 0
    assert "removed 1 cached kernels" in capsys.readouterr().out
    assert jit.cache_info().entries == 0


def test_console_entry_point_runs_as_a_module() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "spio.jit", "doctor"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "NVRTC:" in result.stdout


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SPIO_JIT_DISABLE_CACHE", "maybe"),
        ("SPIO_JIT_CACHE_DIR", "~nosuchuser_spio/cache"),
        ("SPIO_JIT_CUDA_INCLUDE", ":"),
        ("SPIO_JIT_WORKERS", "abc"),
        ("SPIO_JIT_PROGRESS", "2"),
    ],
)
def test_doctor_reports_a_malformed_variable_instead_of_crashing(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    """Regression: doctor crashed with a traceback on the malformed values it exists to
    diagnose, or (SPIO_JIT_WORKERS, SPIO_JIT_PROGRESS) did not flag them."""
    from spio.jit import _headers

    _headers._search.cache_clear()
    monkeypatch.setenv(name, value)
    out = io.StringIO()
    try:
        assert doctor(out) == 1
    finally:
        _headers._search.cache_clear()
    report = out.getvalue()
    assert f"{name}={value}\n    ERROR: {name}=" in report
    assert "Environment:" in report


@pytest.mark.parametrize("action", ["info", "clear"])
def test_cache_commands_report_a_malformed_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], action: str
) -> None:
    """Regression: `spio-jit cache info|clear` crashed with a traceback."""
    monkeypatch.setenv("SPIO_JIT_CACHE_DIR", "~nosuchuser_spio/cache")
    assert main(["cache", action]) == 2
    error = capsys.readouterr().err
    assert error.startswith("spio-jit: error: SPIO_JIT_CACHE_DIR='~nosuchuser_spio/cache'")


def test_cache_info_counts_temporary_files(
    isolated_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shard = isolated_cache / "v1" / "ab"
    shard.mkdir(parents=True)
    (shard / ".abcd.x.tmp").write_bytes(b"x" * 2048)
    assert main(["cache", "info"]) == 0
    assert "temporary: 1 files, 2.0 KiB" in capsys.readouterr().out
