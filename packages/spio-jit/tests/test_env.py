"""All environment variables live in _env.py, and each parses or says what is wrong."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

import spio.jit as jit
from spio.jit import _env

_SOURCE = Path(jit.__file__).parent


def test_every_variable_read_is_registered_in_env() -> None:
    registered = {var.name for var in jit.ENV_VARS}
    for module in sorted(_SOURCE.glob("*.py")):
        text = module.read_text()
        if module.name != "_env.py":
            reads = re.search(r"os\.environ|getenv", text)
            assert reads is None, f"{module.name} reads the environment; use _env.py"
        for name in re.findall(r"\bSPIO_JIT_[A-Z_]+\b", text):
            if name.startswith("SPIO_JIT_TEST"):
                continue
            assert name in registered, f"{module.name} mentions unregistered {name}"


def test_every_variable_is_documented() -> None:
    docs = _SOURCE.parents[4] / "docs" / "jit" / "environment.md"
    if not docs.is_file():
        pytest.skip("documentation is not part of this installation")
    text = docs.read_text()
    for var in jit.ENV_VARS:
        assert var.name in text, var.name


def test_cache_dir_default_and_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SPIO_JIT_CACHE_DIR", str(tmp_path))
    assert _env.cache_dir() == tmp_path
    monkeypatch.delenv("SPIO_JIT_CACHE_DIR")
    assert "spio-jit" in str(_env.cache_dir())


@pytest.mark.parametrize(("value", "enabled"), [("1", False), ("true", False), ("0", True)])
def test_disable_cache_values(monkeypatch: pytest.MonkeyPatch, value: str, enabled: bool) -> None:
    monkeypatch.setenv("SPIO_JIT_DISABLE_CACHE", value)
    assert _env.cache_enabled() is enabled


def test_workers_and_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _env.workers() is None
    monkeypatch.setenv("SPIO_JIT_WORKERS", "3")
    assert _env.workers() == 3
    monkeypatch.setenv("SPIO_JIT_WORKERS", "-1")
    with pytest.raises(ValueError, match="SPIO_JIT_WORKERS='-1' must be a positive integer"):
        _env.workers()
    assert _env.progress() is None
    monkeypatch.setenv("SPIO_JIT_PROGRESS", "off")
    assert _env.progress() is False


def test_cuda_include_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SPIO_JIT_CUDA_INCLUDE", f"{tmp_path}:/elsewhere")
    assert _env.cuda_include_dirs() == (tmp_path, Path("/elsewhere"))
    monkeypatch.setenv("CUDA_PATH", "/opt/cuda")
    monkeypatch.delenv("CUDA_HOME", raising=False)
    assert _env.cuda_home() == Path("/opt/cuda")


@pytest.mark.parametrize(
    ("name", "read"),
    [
        ("SPIO_JIT_CACHE_DIR", _env.cache_dir),
        ("SPIO_JIT_CUDA_INCLUDE", _env.cuda_include_dirs),
        ("CUDA_HOME", _env.cuda_home),
    ],
)
def test_a_path_of_an_unknown_users_home_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, read: Callable[[], object]
) -> None:
    """Regression: pathlib's RuntimeError "Could not determine home directory." named no
    variable."""
    monkeypatch.setenv(name, "~nosuchuser_spio/x")
    message = f"{name}='~nosuchuser_spio/x' starts with ~, and that home directory is unknown"
    with pytest.raises(ValueError, match=message):
        read()


def test_cuda_path_is_named_where_it_is_the_one_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.setenv("CUDA_PATH", "~nosuchuser_spio")
    with pytest.raises(ValueError, match="CUDA_PATH='~nosuchuser_spio'"):
        _env.cuda_home()


@pytest.mark.parametrize("value", ["1_0", "+3", "٣", " 4 2 "])
def test_workers_must_be_plain_digits(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    """Regression: int() took "1_0" as 10, and "+3" and other scripts' digits too."""
    monkeypatch.setenv("SPIO_JIT_WORKERS", value)
    with pytest.raises(ValueError, match=r"SPIO_JIT_WORKERS=.* must be a positive integer"):
        _env.workers()


def test_a_relative_cache_dir_is_made_absolute(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Regression: a relative SPIO_JIT_CACHE_DIR stayed relative, so cache_info() reported a
    directory that named no place once the process changed directory."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPIO_JIT_CACHE_DIR", "relative/cache")
    assert jit.cache_info().directory == tmp_path / "relative" / "cache"


@pytest.mark.parametrize("value", [":", " : ", "::"])
def test_a_cuda_include_that_names_no_directory_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """Regression: SPIO_JIT_CUDA_INCLUDE=":" (as "$A:$B" with both unset gives) raised a bare
    IndexError from compile, cuda_headers() and spio-jit doctor."""
    from spio.jit import _headers

    _headers._search.cache_clear()
    monkeypatch.setenv("SPIO_JIT_CUDA_INCLUDE", value)
    message = f"SPIO_JIT_CUDA_INCLUDE={value.strip()!r} names no directory"
    with pytest.raises(ValueError, match=message):
        jit.cuda_headers()
    with pytest.raises(ValueError, match=message):
        jit.compile('extern "C" __global__ void k() {}\n', arch="sm_80")


def test_problems_names_each_unusable_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPIO_JIT_WORKERS", "abc")
    monkeypatch.setenv("SPIO_JIT_PROGRESS", "maybe")
    monkeypatch.setenv("CUDA_PATH", "~nosuchuser_spio")
    assert set(_env.problems()) == {"SPIO_JIT_WORKERS", "SPIO_JIT_PROGRESS", "CUDA_PATH"}
    assert _env.problems()["SPIO_JIT_WORKERS"].startswith("SPIO_JIT_WORKERS='abc'")
