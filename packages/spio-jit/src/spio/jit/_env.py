"""Every environment variable spio-jit reads, in one place.

Each variable is read when it is needed, not at import, so a process (or a test) can change
it between calls. `ENV_VARS` lists them for `spio-jit doctor` and the documentation.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True)
class EnvVar:
    """One environment variable: its name, what it does, and what unset means."""

    name: str
    doc: str
    default: str

    def raw(self) -> str | None:
        """Return the value as set, or None when unset or empty."""
        value = os.environ.get(self.name, "").strip()
        return value or None


CACHE_DIR = EnvVar(
    "SPIO_JIT_CACHE_DIR",
    "Directory of the compiled-kernel cache (and of NVRTC's extracted headers).",
    "the user cache directory from platformdirs, e.g. ~/.cache/spio-jit on Linux",
)
DISABLE_CACHE = EnvVar(
    "SPIO_JIT_DISABLE_CACHE",
    "Set to 1 to compile every time: the cache is neither read nor written.",
    "0 (cache enabled)",
)
WORKERS = EnvVar(
    "SPIO_JIT_WORKERS",
    "Number of worker processes of compile_many and compile_in_workers (1 compiles in the "
    "calling process).",
    "the number of CPUs this process may use",
)
PROGRESS = EnvVar(
    "SPIO_JIT_PROGRESS",
    "Progress bar of compile_many: 1 forces it on, 0 off.",
    "on when stderr is a terminal",
)
CUDA_INCLUDE = EnvVar(
    "SPIO_JIT_CUDA_INCLUDE",
    "CUDA include directories (os.pathsep-separated) to use instead of searching for them.",
    "searched: NVRTC's own installation, the nvidia-cuda-runtime wheels, NVRTC's bundled "
    "headers (NVRTC >= 13.3), CUDA_HOME",
)
CUDA_HOME = EnvVar(
    "CUDA_HOME",
    "A CUDA toolkit whose include/ is searched for CUDA's headers (after the wheels); "
    "cuda.pathfinder also searches it for libnvrtc.",
    "unset",
)
CUDA_PATH = EnvVar(
    "CUDA_PATH", "Same as CUDA_HOME (the Windows spelling); CUDA_HOME wins.", "unset"
)

CONDA_PREFIX = EnvVar(
    "CONDA_PREFIX",
    "Read only to tell, in spio-jit doctor, that NVRTC came from the active conda environment.",
    "unset",
)

ENV_VARS: tuple[EnvVar, ...] = (
    CACHE_DIR,
    DISABLE_CACHE,
    WORKERS,
    PROGRESS,
    CUDA_INCLUDE,
    CUDA_HOME,
    CUDA_PATH,
    CONDA_PREFIX,
)


def _flag(var: EnvVar) -> bool | None:
    value = var.raw()
    if value is None:
        return None
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ValueError(f"{var.name}={value!r} is not a boolean; use 1 or 0")


def _path(var: EnvVar, value: str) -> Path:
    """value (var's, or one part of it) as an absolute path, ~ and ~user expanded; ValueError
    naming the variable where that home directory is unknown (pathlib's RuntimeError names
    none). A relative path is taken from the current directory when the variable is read, so
    that what is reported (cache_info().directory) is where the files are."""
    try:
        return Path(value).expanduser().absolute()
    except RuntimeError as error:
        part = "" if value == var.raw() else f" (its part {value!r})"
        raise ValueError(
            f"{var.name}={var.raw()!r}{part} starts with ~, and that home directory is "
            f"unknown: {error}"
        ) from None


def cache_dir() -> Path:
    """Return the cache directory: SPIO_JIT_CACHE_DIR or the platform's user cache dir."""
    value = CACHE_DIR.raw()
    if value is not None:
        return _path(CACHE_DIR, value)
    import platformdirs

    return Path(platformdirs.user_cache_dir("spio-jit", appauthor=False))


def cache_enabled() -> bool:
    """Return False when SPIO_JIT_DISABLE_CACHE turns the disk cache off."""
    return not _flag(DISABLE_CACHE)


def workers() -> int | None:
    """Return SPIO_JIT_WORKERS as a positive int, or None when unset."""
    value = WORKERS.raw()
    if value is None:
        return None
    # Digits only: int() would also take "1_0" (as 10), "+3" and non-ASCII digits.
    count = int(value) if value.isascii() and value.isdigit() else 0
    if count < 1:
        raise ValueError(f"{WORKERS.name}={value!r} must be a positive integer, such as 4")
    return count


def progress() -> bool | None:
    """Return SPIO_JIT_PROGRESS as a bool, or None for 'decide from the terminal'."""
    return _flag(PROGRESS)


def cuda_include_dirs() -> tuple[Path, ...] | None:
    """Return SPIO_JIT_CUDA_INCLUDE split into directories, or None when unset."""
    value = CUDA_INCLUDE.raw()
    if value is None:
        return None
    parts = [part.strip() for part in value.split(os.pathsep) if part.strip()]
    if not parts:  # e.g. "$A:$B" with both unset
        raise ValueError(
            f"{CUDA_INCLUDE.name}={value!r} names no directory; list CUDA include directories "
            f"separated by {os.pathsep!r}, or unset it to have them searched for"
        )
    return tuple(_path(CUDA_INCLUDE, part) for part in parts)


def conda_prefix() -> Path | None:
    """Return the active conda environment's prefix, or None."""
    value = CONDA_PREFIX.raw()
    return Path(value) if value else None


def _optional_path(var: EnvVar) -> Path | None:
    value = var.raw()
    return None if value is None else _path(var, value)


def cuda_home() -> Path | None:
    """Return CUDA_HOME (or CUDA_PATH) as a path, or None when neither is set."""
    for var in (CUDA_HOME, CUDA_PATH):
        path = _optional_path(var)
        if path is not None:
            return path
    return None


# How each variable is read; reading one raises the ValueError that says what is wrong.
_READERS: tuple[tuple[EnvVar, Callable[[], object]], ...] = (
    (CACHE_DIR, cache_dir),
    (DISABLE_CACHE, cache_enabled),
    (WORKERS, workers),
    (PROGRESS, progress),
    (CUDA_INCLUDE, cuda_include_dirs),
    (CUDA_HOME, lambda: _optional_path(CUDA_HOME)),
    (CUDA_PATH, lambda: _optional_path(CUDA_PATH)),
)


def problems() -> dict[str, str]:
    """Return, for each variable whose value cannot be used, why (its ValueError's message)."""
    found = {}
    for var, read in _READERS:
        try:
            read()
        except ValueError as error:
            found[var.name] = str(error)
    return found
