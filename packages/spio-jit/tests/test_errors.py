"""Error types: what they carry and how they read."""

from __future__ import annotations

import pickle

import pytest

import spio.jit as jit
from spio.jit import _nvrtc
from spio.jit._errors import parse_diagnostics

_LOG = (
    'k.cu(3): error: expected a ";"\n    y[i] = 1;\n    ^\n\n'
    'k.cu(2): warning #177-D: variable "i" was declared but never referenced\n'
    'types.h(1): catastrophic error: cannot open source file "x.h"\n'
)


def test_diagnostics_are_parsed_with_file_line_and_severity() -> None:
    diagnostics = parse_diagnostics(_LOG)
    assert [(d.file, d.line, d.severity) for d in diagnostics] == [
        ("k.cu", 3, "error"),
        ("k.cu", 2, "warning"),
        ("types.h", 1, "catastrophic error"),
    ]
    assert [d.is_error for d in diagnostics] == [True, False, True]


def test_compile_error_without_located_diagnostics_shows_the_log() -> None:
    error = jit.CompileError(
        name="k.cu",
        arch="sm_90",
        log="nvrtc: error: unrecognized option --x found\n",
        options=("--x",),
        result="NVRTC_ERROR_INVALID_OPTION",
    )
    message = str(error)
    assert "(NVRTC_ERROR_INVALID_OPTION)" in message
    assert "unrecognized option --x" in message
    assert "NVRTC options: --x" in message


def test_cuda_error_names_the_driver_error() -> None:
    error = jit.CudaError("CUDA_ERROR_INVALID_VALUE", 1, "invalid argument", "cuLaunchKernel")
    assert str(error) == "cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE: invalid argument"
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.name, copy.code, copy.detail) == (error.name, error.code, error.detail)
    assert isinstance(error, RuntimeError)


def test_missing_nvrtc_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from cuda.bindings import nvrtc

    def unavailable() -> None:
        raise RuntimeError("libnvrtc.so.13: cannot open shared object file")

    _nvrtc._loaded.cache_clear()
    _nvrtc.info.cache_clear()
    monkeypatch.setattr(nvrtc, "nvrtcVersion", unavailable)
    try:
        with pytest.raises(jit.NvrtcNotFoundError) as caught:
            jit.compile('extern "C" __global__ void k() {}\n', arch="sm_80")
        message = str(caught.value)
        assert "could not load libnvrtc" in message
        assert "pip install 'spio-jit[cu13]'" in message
        assert "nvidia-cuda-nvrtc-cu12" in message
        assert "CUDA_HOME" in message
    finally:
        monkeypatch.undo()
        _nvrtc._loaded.cache_clear()
        _nvrtc.info.cache_clear()
    assert jit.nvrtc_info().version[0] in (12, 13)


def test_compile_many_error_lists_the_first_failures_and_counts_the_rest() -> None:
    """Regression: 200 failed variants made a message of 1601 lines (110 KB)."""
    errors = {index: ValueError(f"bad {index}\n" + "detail\n" * 20) for index in range(200)}
    error = jit.CompileManyError({"ok": object()}, errors)
    message = str(error)
    assert message.startswith("200 of 201 variants failed to compile:")
    assert "variant 19: ValueError: bad 19" in message
    assert "variant 20:" not in message
    assert message.endswith("  ... and 180 more failed variants (see .errors)")
    assert len(message.splitlines()) < 200
    assert len(error.errors) == 200
