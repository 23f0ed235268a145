"""Shared setup of spio-jit's tests: an isolated cache per test and the GPU-tier gate.

Tests never touch the user's cache: each one gets its own SPIO_JIT_CACHE_DIR. Tests marked
`gpu` are skipped with a reason where the CUDA driver reports no device.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest

# tests/ holds jit_testkit.py; pytest's importlib mode does not put it on sys.path.
_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)


@functools.cache
def no_gpu_reason() -> str | None:
    """Return why the GPU tier cannot run here, or None when a CUDA device is visible."""
    try:
        from cuda.bindings import driver

        (result,) = driver.cuInit(0)
        if int(result) != 0:
            return f"cuInit failed: {result!r}"
        result, count = driver.cuDeviceGetCount()
    except Exception as error:
        return f"no CUDA driver ({type(error).__name__})"
    if int(result) != 0 or count == 0:
        return "the CUDA driver reports no device"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # This hook sees every collected item of the session; it gates only this package's.
    jit_gpu_items = [
        item
        for item in items
        if item.get_closest_marker("gpu") is not None and str(item.path).startswith(_TESTS)
    ]
    if not jit_gpu_items:
        return
    reason = no_gpu_reason()
    if reason is not None:
        skip = pytest.mark.skip(reason=f"GPU tier: {reason}")
        for item in jit_gpu_items:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the compile cache at a fresh directory and clear the cache-related env vars."""
    directory = tmp_path / "spio-jit-cache"
    monkeypatch.setenv("SPIO_JIT_CACHE_DIR", str(directory))
    for name in ("SPIO_JIT_DISABLE_CACHE", "SPIO_JIT_WORKERS", "SPIO_JIT_PROGRESS"):
        monkeypatch.delenv(name, raising=False)
    return directory
