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
