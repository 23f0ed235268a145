"""Fixtures shared by the spio-dims tests.

pytest's importlib import mode does not put tests/ on sys.path; this file does, so test modules
import the helpers `_cxx` (host C++) and `_nvrtc` (NVRTC) by name.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

import _cxx  # noqa: E402  (needs the sys.path entry above)


@pytest.fixture(scope="session", params=_cxx.COMPILERS)
def cxx(request: pytest.FixtureRequest) -> str:
    """Each host C++ compiler in turn (g++, clang++); a compiler that is absent is skipped."""
    name: str = request.param
    path = _cxx.find_compiler(name)
    if path is None:
        pytest.skip(f"{name} is not installed")
    return path


@pytest.fixture(scope="session")
def include_dir() -> Path:
    """The spio-dims include directory (holds spio/spio.h)."""
    return _cxx.INCLUDE_DIR


@pytest.fixture(scope="session")
def harness_dir() -> Path:
    """The directory of spio_test.h, the C++ test harness."""
    return _cxx.HARNESS_DIR
