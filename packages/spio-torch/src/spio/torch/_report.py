"""The environment part of `spio demo`: package versions, Python, NVRTC and GPUs."""

from __future__ import annotations

import importlib.metadata
import platform
import sys
from typing import TextIO

import spio.jit as jit

DISTRIBUTIONS = (
    "spio-dims",
    "spio-jit",
    "spio-kernels",
    "spio-perfmodel",
    "spio-torch",
    "torch",
    "cuda-bindings",
    "cuda-core",
)


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def write_packages(out: TextIO) -> None:
    """Write the versions of Python, the platform and the packages Spio runs on."""
    out.write(f"Python            {platform.python_version()} ({sys.executable})\n")
    out.write(f"Platform          {platform.platform()}\n")
    for name in DISTRIBUTIONS:
        out.write(f"{name:<18}{_version(name)}\n")


def write_nvrtc(out: TextIO) -> bool:
    """Write which NVRTC and CUDA headers spio.jit uses; return whether NVRTC is usable."""
    try:
        info = jit.nvrtc_info()
    except jit.NvrtcNotFoundError as error:
        out.write(f"NVRTC             not usable: {error}\n")
        return False
    out.write(f"NVRTC             {info.version_string} ({info.origin})\n")
    out.write(f"  library         {info.library or 'unknown'}\n")
    if info.bindings_mismatch is not None:
        out.write(f"  WARNING         {info.bindings_mismatch.splitlines()[0]}\n")
    headers = jit.cuda_headers()
    out.write(f"CUDA headers      {headers.origin if headers.found else 'not found'}\n")
    return True


def write_gpus(out: TextIO) -> int:
    """Write each GPU the driver shows; return how many there are."""
    count = jit.device_count()
    if count == 0:
        out.write("GPUs              none (no NVIDIA driver or no device)\n")
        return 0
    for index in range(count):
        info = jit.device_info(index)
        out.write(
            f"GPU {index:<14}{info.name}: {info.arch}, {info.sm_count} SMs, "
            f"L2 {info.l2_bytes / 2**20:.0f} MiB, memory {info.memory_bytes / 2**30:.0f} GiB\n"
        )
    return count
