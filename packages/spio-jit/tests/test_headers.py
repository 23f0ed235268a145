"""Finding CUDA's headers: the search order, the override, and a clear failure."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import spio.jit as jit
from spio.jit import _headers, _nvrtc

_FP16_SOURCE = '#include <cuda_fp16.h>\nextern "C" __global__ void k(__half* x) { x[0] = x[1]; }\n'


@pytest.fixture
def fresh_search() -> Iterator[None]:
    _headers._search.cache_clear()
    yield
    _headers._search.cache_clear()


def _fake_include(root: Path) -> Path:
    include = root / "include"
    include.mkdir(parents=True)
    (include / "cuda_fp16.h").write_text("#define SPIO_FAKE_FP16 1\n")
    (include / "cuda_runtime_api.h").write_text("#define CUDART_VERSION 99010\n")
    return include


def _no_wheels(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_headers, "_beside_nvrtc", lambda info: None)
    monkeypatch.setattr(_headers, "_from_wheels", lambda major: None)


def test_the_override_wins(
    fresh_search: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    include = _fake_include(tmp_path)
    monkeypatch.setenv("SPIO_JIT_CUDA_INCLUDE", str(include))
    found = jit.cuda_headers()
    assert found.include_dirs == (str(include.resolve()),)
    assert found.origin == "SPIO_JIT_CUDA_INCLUDE"
    assert found.fingerprint.startswith("cudart-99010")


def test_a_changed_variable_reaches_the_next_search(
    fresh_search: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Regression: the first search was kept for the process, so SPIO_JIT_CUDA_INCLUDE,
    CUDA_HOME or CUDA_PATH set after the first compile went unread (docs/jit/environment.md:
    each variable is read when it is used)."""
    _no_wheels(monkeypatch)
    monkeypatch.setattr(_nvrtc, "install_bundled_headers", lambda directory: False)
    first, second = _fake_include(tmp_path / "a"), _fake_include(tmp_path / "b")
    monkeypatch.setenv("SPIO_JIT_CUDA_INCLUDE", str(first))
    assert jit.cuda_headers().include_dirs == (str(first.resolve()),)
    monkeypatch.setenv("SPIO_JIT_CUDA_INCLUDE", str(second))
    assert jit.cuda_headers().include_dirs == (str(second.resolve()),)
    monkeypatch.delenv("SPIO_JIT_CUDA_INCLUDE")
    for name, root in (("CUDA_HOME", tmp_path / "a"), ("CUDA_PATH", tmp_path / "b")):
        monkeypatch.delenv("CUDA_HOME", raising=False)
        monkeypatch.setenv(name, str(root))
        assert jit.cuda_headers().include_dirs[0] == str(root / "include")
    # The same settings again: the search kept for them, not a new one.
    assert jit.cuda_headers() is jit.cuda_headers()


def test_override_naming_a_missing_directory_is_an_error(
    fresh_search: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SPIO_JIT_CUDA_INCLUDE", str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="SPIO_JIT_CUDA_INCLUDE names missing directories"):
        jit.cuda_headers()


def test_nvrtc_bundled_headers_come_after_the_wheels(
    fresh_search: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_wheels(monkeypatch)
    extracted: list[Path] = []

    def install(directory: Path) -> bool:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "cuda_fp16.h").write_text("")
        extracted.append(directory)
        return True

    monkeypatch.setattr(_nvrtc, "install_bundled_headers", install)
    found = jit.cuda_headers()
    assert "bundled headers" in found.origin
    assert extracted
    assert found.include_dirs[0] == str(extracted[0])
    assert str(extracted[0]).startswith(str(jit.cache_info().directory))


def test_cuda_home_is_the_fallback(
    fresh_search: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_wheels(monkeypatch)
    monkeypatch.setattr(_nvrtc, "install_bundled_headers", lambda directory: False)
    include = _fake_include(tmp_path / "toolkit")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "toolkit"))
    found = jit.cuda_headers()
    assert found.include_dirs[0] == str(include)
    assert found.origin.startswith("CUDA_HOME")


def test_no_headers_anywhere_gives_a_hint_at_compile_time(
    fresh_search: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_wheels(monkeypatch)
    monkeypatch.setattr(_nvrtc, "install_bundled_headers", lambda directory: False)
    monkeypatch.setattr(_headers, "_from_toolkit", lambda: None)
    assert not jit.cuda_headers().found
    with pytest.raises(jit.CompileError) as caught:
        jit.compile(_FP16_SOURCE, arch="sm_80")
    assert "nvidia-cuda-runtime" in str(caught.value)
    assert "SPIO_JIT_CUDA_INCLUDE" in str(caught.value)


def test_an_override_without_cuda_headers_is_named_in_the_hint(
    fresh_search: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Regression: SPIO_JIT_CUDA_INCLUDE naming a directory without cuda_fp16.h gave the hint
    to pass headers= or include_dirs=, which never mentioned the variable."""
    monkeypatch.setenv("SPIO_JIT_CUDA_INCLUDE", str(tmp_path))
    with pytest.raises(jit.CompileError) as caught:
        jit.compile(_FP16_SOURCE, arch="sm_80")
    assert (
        f"Hint: 'cuda_fp16.h' was not found: SPIO_JIT_CUDA_INCLUDE={tmp_path.resolve()} has no "
        "cuda_fp16.h: point it at CUDA's include directory"
    ) in str(caught.value)
