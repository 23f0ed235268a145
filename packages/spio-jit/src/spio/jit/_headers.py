"""Finding CUDA's own headers (cuda_fp16.h, cuda_bf16.h, cuda_pipeline.h) without a toolkit.

Search order, first hit wins:

1. SPIO_JIT_CUDA_INCLUDE, when set.
2. The include/ beside the loaded libnvrtc (a CUDA 13 wheel keeps both under nvidia/cu13,
   a toolkit under CUDA_HOME), so headers and compiler come from one installation.
3. NVIDIA's runtime wheels for NVRTC's major version: nvidia/cu13/include (nvidia-cuda-runtime,
   CUDA 13) or nvidia/cuda_runtime/include (nvidia-cuda-runtime-cu12, CUDA 12), plus CCCL
   where installed.
4. NVRTC's bundled headers (NVRTC >= 13.3), extracted once into the cache directory.
5. CUDA_HOME / CUDA_PATH, then /usr/local/cuda.

The result is computed once per process for each setting of the environment variables the
search reads (_SEARCH_VARS), so that a change to one reaches the next compile, as
docs/jit/environment.md promises. Reading the five costs about 5 us a compile (a disk-cache
hit takes about 50), a search about 150 us (two cores).
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from spio.jit import _env, _nvidia_wheels, _nvrtc

# A directory counts as CUDA's include directory when it has this header.
_PROBE = "cuda_fp16.h"
_CUDART_VERSION = re.compile(rb"#define\s+CUDART_VERSION\s+(\d+)")
#: The variables the search reads: the override, the toolkit, and the cache directory that
#: NVRTC's bundled headers are extracted into (a search kept from another directory would
#: name headers that may have been deleted with it).
_SEARCH_VARS = (
    _env.CUDA_INCLUDE,
    _env.CUDA_HOME,
    _env.CUDA_PATH,
    _env.CACHE_DIR,
    _env.DISABLE_CACHE,
)


@dataclass(frozen=True)
class CudaHeaders:
    """Where CUDA's headers were found.

    Attributes:
        include_dirs: the directories passed to NVRTC with -I (empty when none was found).
        origin: how they were found, in words.
        fingerprint: identifies the header version; part of the compile cache key.
    """

    include_dirs: tuple[str, ...]
    origin: str
    fingerprint: str

    @property
    def found(self) -> bool:
        """Return True when CUDA's include directory was found."""
        return bool(self.include_dirs)


def _is_include_dir(path: Path) -> bool:
    return (path / _PROBE).is_file()


def _with_cccl(include: Path, *cccl_candidates: Path) -> tuple[str, ...]:
    dirs = [str(include)]
    dirs.extend(str(c) for c in cccl_candidates if (c / "cuda" / "std").is_dir())
    return tuple(dict.fromkeys(dirs))


def _fingerprint(include: Path) -> str:
    """Return the CUDA runtime version and header sizes: stable across copies of one release."""
    parts = []
    try:
        match = _CUDART_VERSION.search((include / "cuda_runtime_api.h").read_bytes())
        parts.append(match.group(1).decode() if match else "?")
    except OSError:
        parts.append("?")
    for name in ("cuda_fp16.hpp", "cuda_bf16.hpp", "cuda_pipeline_primitives.h"):
        try:
            parts.append(str((include / name).stat().st_size))
        except OSError:
            parts.append("-")
    return "cudart-" + "-".join(parts)


def _from_env() -> CudaHeaders | None:
    dirs = _env.cuda_include_dirs()
    if dirs is None:
        return None
    missing = [str(d) for d in dirs if not d.is_dir()]
    if missing:
        raise ValueError(f"{_env.CUDA_INCLUDE.name} names missing directories: {missing}")
    resolved = tuple(str(d.resolve()) for d in dirs)
    return CudaHeaders(resolved, _env.CUDA_INCLUDE.name, _fingerprint(Path(resolved[0])))


def _beside_nvrtc(info: _nvrtc.NvrtcInfo) -> CudaHeaders | None:
    if info.library is None:
        return None
    root = Path(info.library).resolve().parent.parent
    include = root / "include"
    if not _is_include_dir(include):
        return None
    return CudaHeaders(
        _with_cccl(include, include / "cccl"),
        f"{include} (beside the loaded NVRTC)",
        _fingerprint(include),
    )


def _from_wheels(major: int) -> CudaHeaders | None:
    for nvidia in _nvidia_wheels.nvidia_dirs():
        include = _nvidia_wheels.component_dir(nvidia, major, "cuda_runtime") / "include"
        if major >= 13:
            cccl = (include / "cccl",)
            wheel = "nvidia-cuda-runtime"
        else:
            cccl = (nvidia / "cuda_cccl" / "include",)
            wheel = "nvidia-cuda-runtime-cu12"
        if _is_include_dir(include):
            return CudaHeaders(
                _with_cccl(include, *cccl), f"pip wheel {wheel} ({include})", _fingerprint(include)
            )
    return None


def _bundled(info: _nvrtc.NvrtcInfo, directory: Path) -> CudaHeaders | None:
    target = directory / f"nvrtc-{info.version_string}-{info.build or 'unknown'}"
    if not _nvrtc.install_bundled_headers(target):
        return None
    if not _is_include_dir(target):
        return None
    return CudaHeaders(
        _with_cccl(target, target / "cccl"),
        f"NVRTC {info.version_string} bundled headers ({target})",
        f"nvrtc-bundled-{info.version_string}-{info.build}",
    )


def _from_toolkit() -> CudaHeaders | None:
    candidates = []
    home = _env.cuda_home()
    if home is not None:
        candidates.append((home, "CUDA_HOME"))
    candidates.append((Path("/usr/local/cuda"), "/usr/local/cuda"))
    for root, label in candidates:
        include = root / "include"
        if _is_include_dir(include):
            return CudaHeaders(
                _with_cccl(include, include / "cccl"), f"{label} ({include})", _fingerprint(include)
            )
    return None


def override_problem(headers: CudaHeaders) -> str | None:
    """Say what is wrong when SPIO_JIT_CUDA_INCLUDE gave the headers but none of its
    directories has CUDA's; None otherwise."""
    if headers.origin != _env.CUDA_INCLUDE.name:
        return None
    if any(_is_include_dir(Path(directory)) for directory in headers.include_dirs):
        return None
    return (
        f"{_env.CUDA_INCLUDE.name}={os.pathsep.join(headers.include_dirs)} has no {_PROBE}: "
        f"point it at CUDA's include directory (the one that holds {_PROBE}), or unset it to "
        "have CUDA's headers searched for"
    )


def cuda_headers() -> CudaHeaders:
    """Return where CUDA's headers are, searching once per process for each setting of the
    variables the search reads (see the module doc)."""
    return _search(tuple(var.raw() for var in _SEARCH_VARS))


@functools.cache
def _search(settings: tuple[str | None, ...]) -> CudaHeaders:
    """The search (the module doc's order), memoised per settings: the values of
    _SEARCH_VARS it runs under, which it reads again through _env."""
    explicit = _from_env()
    if explicit is not None:
        return explicit
    info = _nvrtc.info()
    found = _beside_nvrtc(info) or _from_wheels(info.version[0])
    if found is not None:
        return found
    if _env.cache_enabled():
        found = _bundled(info, _env.cache_dir() / "cuda-headers")
        if found is not None:
            return found
    found = _from_toolkit()
    if found is not None:
        return found
    if info.version >= (13, 3):
        # Last resort: NVRTC's headers in a directory that lives as long as the process.
        scratch = Path(tempfile.mkdtemp(prefix="spio-jit-headers-"))
        atexit.register(shutil.rmtree, scratch, ignore_errors=True)
        found = _bundled(info, scratch)
        if found is not None:
            return found
    return CudaHeaders((), "not found", "none")


MISSING_HEADERS_HINT = (
    "CUDA's headers were not found. Install the CUDA runtime wheel that matches NVRTC "
    "(CUDA 13: pip install nvidia-cuda-runtime; CUDA 12: pip install nvidia-cuda-runtime-cu12), "
    f"set {_env.CUDA_INCLUDE.name}, or set CUDA_HOME to a CUDA toolkit."
)
