"""Compile and launch the GPU-tier test kernels: the only file here that talks to the driver.

`run(source, kernel, args, defines=...)` compiles for the current device's exact sm_XX and
launches on PyTorch's current stream, in the primary context PyTorch uses, so torch tensors
serve as the kernels' memory; it synchronizes before returning, so a test reads its outputs
straight away. Importing this module skips the importing test module where no kernel can run
(no driver, no device, no CUDA torch).

LAUNCHER picks the path: "spio.jit" (spio.jit.compile / load / launch, the way Spio's kernels
run) or "cuda.core" (tests/_nvrtc.py's compile and cuda.core's launch, with nothing of
spio-jit involved), for telling a header bug from a launcher bug.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import _nvrtc
import pytest

LAUNCHER = "spio.jit"

KERNELS = Path(__file__).resolve().parent / "kernels"

Arg = Any  # a CUDA torch tensor (passed as its device pointer) or an int (a 32-bit int)
Define = str | int


def _no_gpu_reason() -> str | None:
    """Say why no kernel can run here, asking the driver (cheap) before importing torch."""
    from cuda.bindings import driver

    try:
        (status,) = driver.cuInit(0)
    except Exception as error:  # no libcuda at all: cuda.pathfinder's own error type
        return f"no CUDA driver ({error})"
    if status != driver.CUresult.CUDA_SUCCESS:
        return f"cuInit failed: {status.name}"
    status, count = driver.cuDeviceGetCount()
    if status != driver.CUresult.CUDA_SUCCESS or count == 0:
        return "no CUDA device"
    return None


_reason = _no_gpu_reason()
if _reason is not None:
    pytest.skip(_reason, allow_module_level=True)

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("torch sees no CUDA device", allow_module_level=True)


def kernel_source(name: str) -> str:
    """Return the text of tests/gpu/kernels/`name`."""
    return (KERNELS / name).read_text()


def run(
    source: str,
    kernel: str,
    args: Sequence[Arg],
    *,
    defines: Mapping[str, Define] | None = None,
    grid: int | tuple[int, ...] = 1,
    block: int | tuple[int, ...] = 32,
    shared_bytes: int = 0,
    cooperative: bool = False,
) -> None:
    """Compile `source` with `defines` (cached), launch extern "C" `kernel`, and wait for it.

    `args` are CUDA tensors, passed as device pointers, ints, passed as 32-bit ints, and
    cuda.core TensorMapDescriptors (TMA tensor maps), passed by value.
    cooperative: a cooperative launch (the whole grid resident at once, or refused).
    """
    for arg in args:
        if isinstance(arg, torch.Tensor) and not arg.is_cuda:
            raise TypeError("kernel tensor arguments must be CUDA tensors")
        if not isinstance(arg, torch.Tensor | int) and type(arg).__name__ != "TensorMapDescriptor":
            raise TypeError(
                f"kernel arguments are CUDA tensors, ints or tensor maps, got {type(arg).__name__}"
            )
    frozen = tuple(sorted((defines or {}).items()))
    torch.cuda.synchronize()  # inputs written by torch are in place
    if LAUNCHER == "spio.jit":
        _run_spio_jit(source, kernel, args, frozen, grid, block, shared_bytes, cooperative)
    else:
        _run_cuda_core(source, kernel, args, frozen, grid, block, shared_bytes, cooperative)
    torch.cuda.synchronize()  # also surfaces a kernel fault here, in the failing test


# --- spio.jit


@functools.cache
def _spio_jit_module(source: str, defines: tuple[tuple[str, Define], ...]) -> Any:
    import spio.jit

    code = spio.jit.compile(
        source, include_dirs=[_nvrtc.SPIO_INCLUDE_DIR], defines=dict(defines), name="test.cu"
    )
    return code.load(device=torch.cuda.current_device())


def _run_spio_jit(
    source: str,
    kernel: str,
    args: Sequence[Arg],
    defines: tuple[tuple[str, Define], ...],
    grid: int | tuple[int, ...],
    block: int | tuple[int, ...],
    shared_bytes: int,
    cooperative: bool,
) -> None:
    import spio.jit

    handle = _spio_jit_module(source, defines).get_kernel(kernel)
    values = [spio.jit.int32(arg) if isinstance(arg, int) else arg for arg in args]
    spio.jit.launch(handle, grid, block, values, shared_mem=shared_bytes, cooperative=cooperative)


# --- cuda.core


@functools.cache
def _cuda_core_device() -> Any:
    from cuda.core import Device

    device = Device(torch.cuda.current_device())
    device.set_current()
    return device


@functools.cache
def _cuda_core_module(source: str, defines: tuple[tuple[str, Define], ...]) -> Any:
    from cuda.core import ObjectCode

    arch = f"sm_{_cuda_core_device().arch}"
    options = [f"-D{name}={value}" for name, value in defines]
    return ObjectCode.from_cubin(_nvrtc.compile_cuda(source, arch=arch, options=options).cubin)


def _run_cuda_core(
    source: str,
    kernel: str,
    args: Sequence[Arg],
    defines: tuple[tuple[str, Define], ...],
    grid: int | tuple[int, ...],
    block: int | tuple[int, ...],
    shared_bytes: int,
    cooperative: bool,
) -> None:
    from cuda.core import LEGACY_DEFAULT_STREAM, LaunchConfig, Stream, launch

    module = _cuda_core_module(source, defines)
    config = LaunchConfig(
        grid=grid, block=block, shmem_size=shared_bytes, is_cooperative=cooperative
    )
    handle = torch.cuda.current_stream().cuda_stream
    stream = LEGACY_DEFAULT_STREAM if handle == 0 else Stream.from_handle(handle)
    # cuda.core passes a Python int as a pointer-sized integer: tensors go as their address.
    values = [
        ctypes.c_int(arg)
        if isinstance(arg, int)
        else arg.data_ptr()
        if isinstance(arg, torch.Tensor)
        else arg  # a tensor map: cuda.core passes its 128 bytes
        for arg in args
    ]
    launch(stream, config, module.get_kernel(kernel), *values)
