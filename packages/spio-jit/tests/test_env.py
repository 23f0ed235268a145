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
