"""Compile the matmul kernels through spio.jit (disk cache), memoise them loaded, launch them.

Two kernels compute C = A @ B: matmul.cu (mma.sync, every GPU from sm_80; a `MatmulConfig`)
and matmul_wgmma.cu (wgmma with TMA, sm_90a only; a `WgmmaConfig`). The config's type picks
the kernel; a launch without one takes the device's default (`default_config_on`): the wgmma
kernel where it runs.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Any

from .._array_info import resolve_device
from .._tma import TensorMapCache, device_pointer, has_tma
from ._arrays import check_matrix, check_vector
from ._matrix_maps import matrix_map
from .params import MatmulParams
from .spec import KERNEL_NAME, LaunchGeometry, MatmulConfig, check_config
from .spec import default_config as mma_default_config
from .spec import generate_types as mma_types
from .spec import launch_geometry as mma_geometry
from .wgmma_spec import BLOCK_K, BLOCK_M, WgmmaConfig
from .wgmma_spec import KERNEL_NAME as WGMMA_KERNEL_NAME
from .wgmma_spec import check_config as check_wgmma_config
from .wgmma_spec import default_config as wgmma_default_config
from .wgmma_spec import generate_types as wgmma_types
from .wgmma_spec import launch_geometry as wgmma_geometry

#: Either kernel's config.
Config = MatmulConfig | WgmmaConfig

SOURCE_NAME = "matmul.cu"
WGMMA_SOURCE_NAME = "matmul_wgmma.cu"
COMMON_HEADER = "matmul_common.cuh"


@functools.cache
def _package_text(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def kernel_source(config: Config | None = None) -> str:
    """Return the device source of the kernel config runs on (the mma.sync one for None)."""
    name = WGMMA_SOURCE_NAME if isinstance(config, WgmmaConfig) else SOURCE_NAME
    return _package_text(name)


def kernel_arch(config: Config, arch: str) -> str:
    """The architecture to compile config's kernel for on a GPU of `arch`: wgmma needs the
    arch-specific target (sm_90 -> sm_90a)."""
    if isinstance(config, WgmmaConfig) and not arch.endswith("a"):
        return f"{arch}a"
    return arch


def _check(params: MatmulParams, config: Config) -> None:
    if isinstance(config, WgmmaConfig):
        check_wgmma_config(params, config)
    else:
        check_config(params, config)


def compile_request(params: MatmulParams, config: Config, arch: str) -> Any:
    """Return the spio.jit.CompileRequest of config's kernel for params on a GPU of `arch`
    (for spio.jit.compile_many)."""
    import spio.dims
    import spio.jit

    if isinstance(config, WgmmaConfig):
        if not has_tma(arch):
            raise ValueError(f"the wgmma kernel needs sm_90 or newer, got {arch}")
        types_h = wgmma_types(params, config)
    else:
        types_h = mma_types(params, config)
    return spio.jit.CompileRequest(
        kernel_source(config),
        headers={"types.h": types_h, COMMON_HEADER: _package_text(COMMON_HEADER)},
        include_dirs=(spio.dims.include_dir(),),
        arch=kernel_arch(config, arch),
        name=WGMMA_SOURCE_NAME if isinstance(config, WgmmaConfig) else SOURCE_NAME,
    )


def compile_matmul(params: MatmulParams, config: Config, arch: str) -> Any:
    """Compile config's kernel for params to a cubin for a GPU of `arch` (spio.jit cache);
    returns the spio.jit.CompiledCode."""
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
    """One shape's kernel and config, loaded on one device with its launch geometry: calling
    it launches with no look-up (what a framework's per-step call wants). tensor_maps, for
    the wgmma kernel, makes (or finds) the TMA maps of A's and B's addresses."""

    kernel: Any
    geometry: LaunchGeometry
    tensor_maps: TensorMapCache | None = None

    def __call__(
        self, c: Any, a: Any, b: Any, stream: Any = None, pdl: bool = True, bias: Any = None
    ) -> None:
        """Launch C = A @ B (+ bias) on the arrays (as `matmul` takes them, unchecked; bias
        where the params have one)."""
        geometry = self.geometry
        # The kernels take a bias pointer either way, and read it only where they add one.
        bias_arg = 0 if bias is None else bias
        args: tuple[Any, ...]
        if self.tensor_maps is None:
            args = (c, a, b, bias_arg)
        else:
            maps = self.tensor_maps((device_pointer(a), device_pointer(b)))
            args = (c, *maps, bias_arg)
        self.kernel.launch(geometry.grid, geometry.block, args, geometry.shared_mem, stream, pdl)


def _matrix_maps(params: MatmulParams, config: WgmmaConfig, device: int) -> TensorMapCache:
    """The cache of (A, B) tensor maps by (A, B) addresses: boxes of 64 of K by the block's
    rows of A and of B."""

    def make(pointers: tuple[int, ...]) -> tuple[Any, Any]:
        a, b = pointers
        if params.a_layout == "mk":
            a_map = matrix_map(a, params.m, params.k, BLOCK_M)
        else:
            a_map = matrix_map(a, params.k, params.m, BLOCK_K)  # 64 rows of K, 64 columns
        if params.b_layout == "nk":
            b_map = matrix_map(b, params.n, params.k, config.block_n)
        else:
            b_map = matrix_map(b, params.k, params.n, BLOCK_K)
        return (a_map, b_map)

    return TensorMapCache(make, device)


@functools.cache
def matmul_launch(params: MatmulParams, config: Config, device: int = 0) -> MatmulLaunch:
    """Return the MatmulLaunch of params and config on device: checked, compiled (spio.jit
    cache) and loaded once (memoised). ValueError where the config needs more shared memory
    than the device allows a block, or a wgmma config meets a GPU without wgmma."""
    import spio.jit

    _check(params, config)
    info = spio.jit.device_info(device)
    if config.shared_mem > info.max_shared_per_block_optin:
        raise ValueError(
            f"config needs {config.shared_mem} bytes of shared memory; cuda:{device} "
            f"({info.name}, {info.arch}) allows a block {info.max_shared_per_block_optin}"
        )
    if isinstance(config, WgmmaConfig) and info.compute_capability != (9, 0):
        raise ValueError(
            f"the wgmma kernel runs on sm_90 (H100, H200) only; cuda:{device} is {info.arch}: "
            "use a MatmulConfig"
        )
    module = compile_matmul(params, config, info.arch).load(device=device)
    if isinstance(config, WgmmaConfig):
        kernel = module.get_kernel(WGMMA_KERNEL_NAME)
        maps = _matrix_maps(params, config, device)
        return MatmulLaunch(kernel, wgmma_geometry(params, config), maps)
    return MatmulLaunch(module.get_kernel(KERNEL_NAME), mma_geometry(params, config))


def default_config_for(
    params: MatmulParams, compute_capability: tuple[int, int], sm_count: int, shared_mem: int
) -> Config:
    """The default config on a GPU of compute_capability with sm_count SMs that allows a block
    shared_mem bytes: the wgmma kernel's on sm_90, else the mma.sync kernel's."""
    if compute_capability == (9, 0):
        return wgmma_default_config(params, sm_count)
    return mma_default_config(params, sm_count, shared_mem)


@functools.cache
def default_config_on(params: MatmulParams, device: int = 0) -> Config:
    """Return the config a launch without one runs on device (memoised): default_config_for
    the device."""
    import spio.jit

    info = spio.jit.device_info(device)
    return default_config_for(
        params, info.compute_capability, info.sm_count, info.max_shared_per_block_optin
    )


def matmul(
    c: Any,
    a: Any,
    b: Any,
    params: MatmulParams,
    config: Config | None = None,
    stream: Any = None,
    device: int | None = None,
    pdl: bool = True,
    bias: Any = None,
) -> None:
    """Compute C = A @ B (+ bias) on tensor cores, float32 accumulation (asynchronously).

    c (m x n), a (m x k, or k x m when params.a_layout is "km") and b (k x n, or n x k when
    params.b_layout is "nk") are dense row-major device arrays of params.dtype: torch
    tensors, objects with __cuda_array_interface__, or device pointers (ints), each starting
    on a 16-byte boundary.
    Arrays that describe themselves are checked first (ValueError names the array); device
    pointers are checked for alignment only. config: a MatmulConfig (the mma.sync kernel)
    or a WgmmaConfig (the wgmma kernel: sm_90 only); None takes
    default_config_on(params, device). device defaults to a's device (torch tensors) or
    device 0; stream as spio.jit.launch. pdl (sm_90 and newer): launch with programmatic
    dependent launch, so that the kernel's blocks are placed while the previous kernel in
    the stream finishes (they wait for it before touching memory); the result is the same.
    bias: a vector of n elements of params.dtype, on a 4-byte boundary, added to every row
    of C (in float32, before C rounds), given exactly where params.bias is True.
    """
    if not isinstance(params, MatmulParams):
        raise TypeError(f"params must be a MatmulParams, got {type(params).__name__}")
    check_matrix("c", c, params.c_shape, params.dtype)
    check_matrix("a", a, params.a_shape, params.dtype)
    check_matrix("b", b, params.b_shape, params.dtype)
    if params.bias:
        if bias is None:
            raise ValueError("params.bias is True: pass bias, a vector of params.n elements")
        check_vector("bias", bias, params.n, params.dtype)
    elif bias is not None:
        raise ValueError("bias was given, but params.bias is False: set it to add a bias")
    device = resolve_device(device, a)
    if config is None:
        config = default_config_on(params, device)
    matmul_launch(params, config, device)(c, a, b, stream, pdl, bias)
