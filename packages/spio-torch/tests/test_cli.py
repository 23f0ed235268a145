"""The `spio` command: `spio demo` reports the environment and runs the typed-kernel path."""

from __future__ import annotations

import dataclasses
import io
import subprocess
import sys
from pathlib import Path

import pytest

import spio.jit as jit
from spio.torch import _cli, _demo, _report


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPIO_JIT_CACHE_DIR", str(tmp_path / "cache"))


def test_demo_reports_environment_and_compiles(capsys: pytest.CaptureFixture[str]) -> None:
    status = _cli.main(["demo", "--size", "64"])
    out = capsys.readouterr().out
    assert status == 0
    for line in ("spio-dims", "spio-torch", "NVRTC", "CUDA headers", "NVRTC -> cubin"):
        assert line in out
    assert "(disk cache)" in out


def test_demo_warns_when_nvrtc_and_cuda_bindings_differ_in_major(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = jit.nvrtc_info()
    other = 12 if real.version[0] >= 13 else 13
    mismatched = dataclasses.replace(real, bindings_version=f"{other}.9.0")
    monkeypatch.setattr(_report.jit, "nvrtc_info", lambda: mismatched)
    out = io.StringIO()
    assert _report.write_nvrtc(out)
    assert f"  WARNING         cuda-bindings {other}.9.0 is for CUDA {other}" in out.getvalue()
    matched = io.StringIO()
    monkeypatch.setattr(_report.jit, "nvrtc_info", lambda: real)
    _report.write_nvrtc(matched)
    assert "WARNING" not in matched.getvalue()


def test_demo_compiles_for_the_exact_arch_and_hits_the_cache() -> None:
    out = io.StringIO()
    result = _demo.run_demo(out, size=64)
    assert result.arch.startswith("sm_")
    assert result.cached_compile_ms < result.compile_ms


@pytest.mark.parametrize("size", [0, -32, 33])
def test_bad_size_is_a_clear_usage_error(size: int, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        _cli.main(["demo", "--size", str(size)])
    assert exit_info.value.code == 2
    assert f"size must be a positive multiple of 32, got {size}" in capsys.readouterr().err


def test_entry_point_is_installed() -> None:
    spio = Path(sys.executable).with_name("spio")
    result = subprocess.run([str(spio), "--version"], capture_output=True, text=True)
    assert result.returncode == 0
    assert result.stdout.startswith("spio-torch ")


def test_import_initialises_no_cuda() -> None:
    # spio.torch (the command's package) does not even import torch; spio.functional
    # registers the operators with torch, and initializes no CUDA doing so.
    code = (
        "import sys, spio.torch; print('torch' in sys.modules); "
        "import spio.functional, torch; print(torch.cuda.is_initialized())"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False"]


@pytest.mark.gpu
def test_demo_runs_and_checks_on_the_gpu() -> None:
    out = io.StringIO()
    result = _demo.run_demo(out, size=1024)
    assert result.checked, out.getvalue()
    assert result.registers is not None


def test_demo_without_nvrtc_names_both_cuda_stacks(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(_report, "write_nvrtc", lambda _out: False)
    assert _cli.main(["demo"]) == 1
    out = capsys.readouterr().out
    assert '"spio-jit[cu13]" (CUDA 13), or "spio-jit[cu12]" (CUDA 12)' in out


def test_the_package_lists_its_lazy_names() -> None:
    import spio.torch

    names = dir(spio.torch)
    assert {"Conv2dGw8", "Linear", "convert", "ineligible_because"} <= set(names)
    assert "Any" not in names
