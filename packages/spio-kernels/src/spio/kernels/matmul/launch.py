"""Compile the matmul kernel through spio.jit (disk cache), memoise it loaded, launch it."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Any

from .._array_info import resolve_device
from ._arrays import check_matrix
from .params import MatmulParams
from .spec import (
    KERNEL_NAME,
    LaunchGeometry,
    MatmulConfig,
    check_config,
    default_config,
    generate_types,
    launch_geometry,
)

SOURCE_NAME = "matmul.cu"


@functools.cache
def kernel_source() -> str:
    """Return the device source of the matmul kernel."""
    return resources.files(__package__).joinpath(SOURCE_NAME).read_text(encoding="utf-8")


def compile_request(params: MatmulParams, config: MatmulConfig, arch: str) -> Any:
    """Return the spio.jit.CompileRequest of the kernel for params and config (for
    spio.jit.compile_many)."""
    import spio.dims
    import spio.jit

    return spio.jit.CompileRequest(
        kernel_source(),
        headers={"types.h": generate_types(params, config)},
        include_dirs=(spio.dims.include_dir(),),
        arch=arch,
        name=SOURCE_NAME,
    )


def compile_matmul(params: MatmulParams, config: MatmulConfig, arch: str) -> Any:
    """Compile the kernel for params and config to a cubin for arch (spio.jit cache); returns
    the spio.jit.CompiledCode."""
    import spio.jit

    request = compile_request(params, config, arch)
    return spio.jit.compile(
        request.source,
        headers=request.headers,
        include_dirs=request.include_dirs,
        arch=request.arch,
        name=request.name,
    )


@dataclass(frozen=True)
class MatmulLaunch:
    """The kernel of one shape and config, loaded on one device with its launch geometry:
    calling it launches with no look-up (what a framework's per-step call wants)."""

    kernel: Any
    geometry: LaunchGeometry

    def __call__(self, c: Any, a: Any, b: Any, stream: Any = None, pdl: bool = True) -> None:
        """Launch C = A @ B on the arrays (as `matmul` takes them, unchecked)."""
        geometry = self.geometry
        self.kernel.launch(
            geometry.grid, geometry.block, (c, a, b), geometry.shared_mem, stream, pdl
        )


@functools.cache
def matmul_launch(params: MatmulParams, config: MatmulConfig, device: int = 0) -> MatmulLaunch:
    """Return the MatmulLaunch of params and config on device: checked, compiled (spio.jit
    cache) and loaded once (memoised). ValueError where the config needs more shared memory
    than the device allows a block."""
    import spio.jit

    check_config(params, config)
    info = spio.jit.device_info(device)
    if config.shared_mem > info.max_shared_per_block_optin:
        raise ValueError(
            f"config needs {config.shared_mem} bytes of shared memory; cuda:{device} "
            f"({info.name}, {info.arch}) allows a block {info.max_shared_per_block_optin}"
        )
    kernel = compile_matmul(params, config, info.arch).load(device=device).get_kernel(KERNEL_NAME)
    return MatmulLaunch(kernel, launch_geometry(params, config))


@functools.cache
def default_config_on(params: MatmulParams, device: int = 0) -> MatmulConfig:
    """Return the config a launch without one runs on device (memoised): default_config for
    the device's SM count and shared memory."""
    import spio.jit

    info = spio.jit.device_info(device)
    return default_config(params, info.sm_count, info.max_shared_per_block_optin)


def matmul(
    c: Any,
    a: Any,
    b: Any,
    params: MatmulParams,
    config: MatmulConfig | None = None,
    stream: Any = None,
    device: int | None = None,
    pdl: bool = True,
) -> None:
    """Compute C = A @ B on tensor cores, float32 accumulation (asynchronously).

    c (m x n), a (m x k) and b (k x n, or n x k when params.b_layout is "nk") are dense
    row-major device arrays of params.dtype: torch tensors, objects with
    __cuda_array_interface__, or device pointers (ints), each starting on a 16-byte boundary.
    Arrays that describe themselves are checked first (ValueError names the array); device
    pointers are checked for alignment only. config None takes default_config_on(params,
    device). device defaults to a's device (torch tensors) or device 0; stream as
    spio.jit.launch. pdl (sm_90 and newer): launch with programmatic dependent launch, so
    that the kernel's blocks are placed while the previous kernel in the stream finishes
    (they wait for it before touching memory); the result is the same.
    """
    if not isinstance(params, MatmulParams):
        raise TypeError(f"params must be a MatmulParams, got {type(params).__name__}")
    check_matrix("c", c, params.c_shape, params.dtype)
    check_matrix("a", a, params.a_shape, params.dtype)
    check_matrix("b", b, params.b_shape, params.dtype)
    device = resolve_device(device, a)
    if config is None:
        config = default_config_on(params, device)
    matmul_launch(params, config, device)(c, a, b, stream, pdl)
