"""NVRTC of cuda-bindings' own major: found in NVIDIA's wheels, loaded first, and a mismatch
reported.

The nox session cu12 installs CUDA 13's NVRTC wheel beside CUDA 12's, the environment where
cuda.pathfinder alone would hand cuda-bindings 12 NVRTC 13; its test_stack.py then proves the
process loaded NVRTC 12. These tests cover the pieces on any stack.
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

import spio.jit as jit
from spio.jit import _nvidia_wheels, _nvrtc
from spio.jit._cli import doctor


def _wheel_tree(root: Path, relative: str) -> Path:
    library = root / "nvidia" / relative
    library.parent.mkdir(parents=True)
    library.write_bytes(b"not a shared library")
    return library


@pytest.mark.parametrize(
    ("major", "relative"),
    [(12, "cuda_nvrtc/lib/libnvrtc.so.12"), (13, "cu13/lib/libnvrtc.so.13")],
)
def test_each_major_is_found_in_its_wheel_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, major: int, relative: str
) -> None:
    library = _wheel_tree(tmp_path / "site", relative)
    monkeypatch.setattr(_nvidia_wheels, "nvidia_dirs", lambda: [tmp_path / "site" / "nvidia"])
    monkeypatch.setattr(_nvidia_wheels.sys, "platform", "linux")
    assert _nvidia_wheels.nvrtc_library(major) == library
    other = 13 if major == 12 else 12
    assert _nvidia_wheels.nvrtc_library(other) is None


def test_the_first_site_directory_with_the_major_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _wheel_tree(tmp_path / "first", "cu13/lib/libnvrtc.so.13")
    second = _wheel_tree(tmp_path / "second", "cuda_nvrtc/lib/libnvrtc.so.12")
    _wheel_tree(tmp_path / "third", "cuda_nvrtc/lib/libnvrtc.so.12")
    dirs = [tmp_path / name / "nvidia" for name in ("first", "second", "third")]
    monkeypatch.setattr(_nvidia_wheels, "nvidia_dirs", lambda: dirs)
    monkeypatch.setattr(_nvidia_wheels.sys, "platform", "linux")
    assert _nvidia_wheels.nvrtc_library(12) == second


def test_nothing_is_loaded_when_an_nvrtc_is_loaded_already(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def must_not_search(major: int) -> Path:
        raise AssertionError(f"searched the wheels for NVRTC {major}")

    monkeypatch.setattr(_nvrtc, "_path_by_maps", lambda: "/somewhere/libnvrtc.so.13")
    monkeypatch.setattr(_nvidia_wheels, "nvrtc_library", must_not_search)
    _nvrtc._load_wheel_of_major(12)


def test_a_wheel_library_that_does_not_load_is_left_to_the_bindings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    library = _wheel_tree(tmp_path, "cuda_nvrtc/lib/libnvrtc.so.12")
    (library.parent / "libnvrtc-builtins.so.12.4").write_bytes(b"not a shared library")
    monkeypatch.setattr(_nvrtc, "_path_by_maps", lambda: None)
    monkeypatch.setattr(_nvidia_wheels, "nvrtc_library", lambda major: library)
    _nvrtc._load_wheel_of_major(12)  # the OSError of the failed load is not raised


def test_the_same_major_is_no_mismatch() -> None:
    assert _nvrtc.major_mismatch((12, 4), "12.9.10") is None
    assert _nvrtc.major_mismatch((13, 0), "13.3.0") is None
    assert _nvrtc.major_mismatch((13, 0), "unknown") is None


def test_a_mismatch_names_both_versions_the_reason_and_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_nvidia_wheels, "nvrtc_library", lambda major: None)
    message = _nvrtc.major_mismatch((13, 2), "12.9.10")
    assert message is not None
    assert "cuda-bindings 12.9.10 is for CUDA 12, but NVRTC 13.2 was loaded" in message
    assert "no NVRTC 12 wheel is installed" in message
    assert "pip install 'spio-jit[cu12]'" in message

    monkeypatch.setattr(_nvidia_wheels, "nvrtc_library", lambda major: Path("libnvrtc.so.12"))
    message = _nvrtc.major_mismatch((13, 2), "12.9.10")
    assert message is not None
    assert "another library loaded NVRTC 13 before spio-jit could load NVRTC 12" in message


def test_doctor_warns_of_a_mismatch(monkeypatch: pytest.MonkeyPatch) -> None:
    real = jit.nvrtc_info()
    other_major = 12 if real.version[0] >= 13 else 13
    mismatched = dataclasses.replace(real, bindings_version=f"{other_major}.9.0")
    monkeypatch.setattr(_nvrtc, "info", lambda: mismatched)
    out = io.StringIO()
    doctor(out)
    warning = f"  WARNING:      cuda-bindings {other_major}.9.0 is for CUDA {other_major}"
    assert warning in out.getvalue()


def test_this_process_loaded_the_bindings_major() -> None:
    import cuda.bindings

    info = jit.nvrtc_info()
    assert str(info.version[0]) == cuda.bindings.__version__.split(".")[0]
    assert _nvrtc.major_mismatch(info.version, info.bindings_version) is None
