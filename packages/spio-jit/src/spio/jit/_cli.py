"""The spio-jit command: `doctor` reports the setup, `cache info|clear` manages the cache."""

from __future__ import annotations

import argparse
import importlib.metadata
import platform
import sys
from collections.abc import Sequence
from typing import TextIO

from spio.jit import _cache, _env


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _size(nbytes: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if nbytes < 1024 or unit == "TiB":
            return f"{nbytes:.0f} {unit}" if unit == "B" else f"{nbytes:.1f} {unit}"
        nbytes /= 1024
    return f"{nbytes:.1f} TiB"


def _doctor_nvrtc(out: TextIO) -> bool:
    from spio.jit import _headers, _nvrtc
    from spio.jit._errors import NvrtcNotFoundError

    try:
        info = _nvrtc.info()
    except NvrtcNotFoundError as error:
        out.write(f"NVRTC:          NOT USABLE\n{error}\n")
        return False
    except ValueError as error:  # a malformed CUDA_HOME, read to say where NVRTC is from
        out.write(f"NVRTC:          ERROR: {error}\n")
        return False
    out.write(f"NVRTC:          {info.version_string} ({info.origin})\n")
    out.write(f"  library:      {info.library or 'unknown'}\n")
    mismatch = info.bindings_mismatch
    if mismatch is not None:
        out.write(f"  WARNING:      {mismatch.splitlines()[0]}\n")
    archs = " ".join(f"sm_{a}" for a in info.supported_archs)
    out.write(f"  targets:      {archs}\n")
    try:
        headers = _headers.cuda_headers()
    except ValueError as error:
        out.write(f"CUDA headers:   ERROR: {error}\n")
        return False
    if headers.found:
        out.write(f"CUDA headers:   {headers.origin}\n")
        for directory in headers.include_dirs:
            out.write(f"  -I            {directory}\n")
        problem = _headers.override_problem(headers)
        if problem is not None:
            out.write(f"  WARNING:      {problem}\n")
    else:
        out.write(f"CUDA headers:   not found. {_headers.MISSING_HEADERS_HINT}\n")
    return True


def _doctor_gpus(out: TextIO) -> None:
    from spio.jit import _driver
    from spio.jit._errors import CudaError

    try:
        major, minor = _driver.driver_version()
    except CudaError as error:
        out.write(f"Driver:         none found ({error.detail}); compiling needs arch=...\n")
        out.write("GPUs:           none\n")
        return
    release = _driver.driver_release()
    label = f"{release}, " if release else ""
    out.write(f"Driver:         {label}supports CUDA {major}.{minor}\n")
    count = _driver.device_count()
    if count == 0:
        out.write("GPUs:           none\n")
        return
    out.write(f"GPUs:           {count}\n")
    for index in range(count):
        info = _driver.device_info(index)
        out.write(
            f"  [{index}] {info.name}: {info.arch}, {info.sm_count} SMs, "
            f"L2 {_size(info.l2_bytes)}, memory {_size(info.memory_bytes)}, "
            f"shared/block {_size(info.max_shared_per_block_optin)} (opt-in)\n"
        )


def _doctor_cache(out: TextIO) -> bool:
    try:
        info = _cache.cache_info()
    except ValueError as error:
        out.write(f"Cache:          ERROR: {error}\n")
        return False
    state = "enabled" if info.enabled else f"disabled by {_env.DISABLE_CACHE.name}"
    out.write(
        f"Cache:          {info.directory} ({state}): {info.entries} kernels, "
        f"{_size(info.size_bytes)}\n"
    )
    return True


def _doctor_environment(out: TextIO) -> bool:
    problems = _env.problems()
    out.write("Environment:\n")
    for var in _env.ENV_VARS:
        value = var.raw()
        out.write(f"  {var.name}={value if value is not None else '(unset)'}\n")
        if var.name in problems:
            out.write(f"    ERROR: {problems[var.name]}\n")
    return not problems


def doctor(out: TextIO = sys.stdout) -> int:
    """Print what spio-jit would use on this machine; return 0, or 1 when something is
    unusable (NVRTC, CUDA's headers, the cache, an environment variable's value)."""
    out.write(f"spio-jit:       {_version('spio-jit')}\n")
    out.write(f"Python:         {platform.python_version()} ({sys.executable})\n")
    out.write(
        f"cuda-bindings:  {_version('cuda-bindings')}, cuda-core {_version('cuda-core')}, "
        f"cuda-pathfinder {_version('cuda-pathfinder')}\n"
    )
    ok = _doctor_nvrtc(out)
    _doctor_gpus(out)
    ok = _doctor_cache(out) and ok
    ok = _doctor_environment(out) and ok
    return 0 if ok else 1


def _cache_command(action: str, out: TextIO) -> int:
    if action == "clear":
        removed = _cache.clear_cache()
        out.write(f"removed {removed} cached kernels from {_env.cache_dir()}\n")
        return 0
    info = _cache.cache_info()
    out.write(f"directory: {info.directory}\n")
    out.write(f"enabled:   {'yes' if info.enabled else 'no'}\n")
    out.write(f"kernels:   {info.entries}\n")
    out.write(f"size:      {_size(info.size_bytes)}\n")
    if info.temp_files:
        out.write(
            f"temporary: {info.temp_files} files, {_size(info.temp_bytes)} (writes in progress, "
            "or left by killed ones: removed when an hour old by later writes, or by clear)\n"
        )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the spio-jit command line."""
    parser = argparse.ArgumentParser(
        prog="spio-jit", description="Run-time CUDA compilation with NVRTC: setup and cache."
    )
    parser.add_argument("--version", action="version", version=_version("spio-jit"))
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("doctor", help="report NVRTC, CUDA headers, driver, GPUs and the cache")
    cache = commands.add_parser("cache", help="show or clear the compiled-kernel cache")
    cache.add_argument("action", choices=("info", "clear"), help="what to do")
    args = parser.parse_args(argv)
    if args.command == "doctor":
        return doctor(sys.stdout)
    try:
        return _cache_command(args.action, sys.stdout)
    except ValueError as error:  # a malformed SPIO_JIT_CACHE_DIR or SPIO_JIT_DISABLE_CACHE
        sys.stderr.write(f"spio-jit: error: {error}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
