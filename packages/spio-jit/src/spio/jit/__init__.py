"""spio.jit: CUDA C++ source in, launched kernel out, with no CUDA toolkit and no host compiler.

NVRTC comes from NVIDIA's pip wheels, the driver API from cuda-python. The flow is

    code = spio.jit.compile(source, arch="sm_90")      # cubin, cached on disk
    kernel = code.load(device=0).get_kernel("saxpy")   # primary context of cuda:0
    spio.jit.launch(kernel, grid, block, (a, x, y, spio.jit.int32(n)))

Importing this package has no side effects: NVRTC, the driver, torch and process pools are
touched only by the calls that need them.
"""

from importlib.metadata import version as _version

from spio.jit._args import (
    CType,
    bfloat16,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from spio.jit._cache import CacheInfo, cache_info, clear_cache
from spio.jit._compile import CompiledCode, CompileRequest, compile
from spio.jit._compile_many import compile_many
from spio.jit._driver import DeviceInfo, device_count, device_info, using_device
from spio.jit._env import ENV_VARS, EnvVar
from spio.jit._errors import (
    CompileError,
    CompileManyError,
    CudaError,
    NvrtcNotFoundError,
    SpioJitError,
)
from spio.jit._headers import CudaHeaders
from spio.jit._launch import launch
from spio.jit._module import Kernel, KernelAttributes, Module, load
from spio.jit._nvrtc import NvrtcInfo
from spio.jit._occupancy import spread_shared_mem
from spio.jit._options import CompileOptions
from spio.jit._workers import compile_in_workers

__version__ = _version("spio-jit")


def nvrtc_info() -> NvrtcInfo:
    """Return which NVRTC library this process compiles with (loading it on first use)."""
    from spio.jit import _nvrtc

    return _nvrtc.info()


def cuda_headers() -> CudaHeaders:
    """Return where CUDA's headers (cuda_fp16.h, ...) were found for NVRTC."""
    from spio.jit import _headers

    return _headers.cuda_headers()


__all__ = [
    "ENV_VARS",
    "CType",
    "CacheInfo",
    "CompileError",
    "CompileManyError",
    "CompileOptions",
    "CompileRequest",
    "CompiledCode",
    "CudaError",
    "CudaHeaders",
    "DeviceInfo",
    "EnvVar",
    "Kernel",
    "KernelAttributes",
    "Module",
    "NvrtcInfo",
    "NvrtcNotFoundError",
    "SpioJitError",
    "__version__",
    "bfloat16",
    "bool_",
    "cache_info",
    "clear_cache",
    "compile",
    "compile_in_workers",
    "compile_many",
    "cuda_headers",
    "device_count",
    "device_info",
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "launch",
    "load",
    "nvrtc_info",
    "spread_shared_mem",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "using_device",
]
