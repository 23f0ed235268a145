"""The CUDA driver through cuda.bindings: initialization, errors, devices, primary contexts.

Nothing here runs at import. The first call that needs the driver calls cuInit; a machine
without a driver raises CudaError("no CUDA driver") from there.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from spio.jit._errors import CudaError
from spio.jit._options import arch_of

_lock = threading.Lock()
_CORE_ERROR_NAME = re.compile(r"\b(CUDA_ERROR_[A-Z0-9_]+)")


def _error_from_result(driver: Any, result: Any, call: str) -> CudaError:
    code = int(result)
    name = getattr(result, "name", None)
    detail = ""
    try:
        err, text = driver.cuGetErrorString(result)
        if int(err) == 0 and text:
            detail = text.decode() if isinstance(text, bytes) else str(text)
    except Exception:
        detail = ""
    return CudaError(name, code, detail or "no description from the driver", call)


def check(returned: Any, call: str) -> Any:
    """Return the value(s) of a cuda.bindings driver call, or raise CudaError."""
    result = returned[0]
    if int(result) != 0:
        raise _error_from_result(bindings(), result, call)
    if len(returned) == 1:
        return None
    if len(returned) == 2:
        return returned[1]
    return returned[1:]


def from_core_error(error: BaseException, call: str) -> CudaError:
    """Turn a cuda.core CUDAError into a CudaError that names the CUresult."""
    text = str(error)
    match = _CORE_ERROR_NAME.search(text)
    name = match.group(1) if match else None
    code = None
    if name is not None:
        with contextlib.suppress(Exception):
            code = int(getattr(bindings().CUresult, name))
    return CudaError(name, code, text, call)


def is_core_error(error: BaseException) -> bool:
    """Return True if error is cuda.core's CUDAError (without importing cuda.core)."""
    return type(error).__name__ == "CUDAError" and type(error).__module__.startswith("cuda.core")


@functools.cache
def bindings() -> Any:
    """Return cuda.bindings.driver after cuInit; raise CudaError if there is no driver."""
    try:
        from cuda.bindings import driver
    except ImportError as error:
        detail = f"cuda-bindings is not importable: {error}"
        raise CudaError(None, None, detail, "cuInit") from error
    try:
        (result,) = driver.cuInit(0)
    except Exception as error:
        raise CudaError(
            None, None, f"no CUDA driver could be loaded ({error})", "cuInit"
        ) from error
    if int(result) != 0:
        raise _error_from_result(driver, result, "cuInit")
    return driver


def driver_version() -> tuple[int, int]:
    """Return the CUDA version the driver supports, e.g. (13, 0)."""
    version = int(check(bindings().cuDriverGetVersion(), "cuDriverGetVersion"))
    return version // 1000, (version % 1000) // 10


def driver_release() -> str | None:
    """Return the display driver's version (e.g. "580.65.06") from NVML, or None."""
    try:
        from cuda.bindings import nvml

        nvml.init_v2()
        try:
            return str(nvml.system_get_driver_version())
        finally:
            nvml.shutdown()
    except Exception:
        return None


def device_count() -> int:
    """Return the number of CUDA devices (0 when there is no driver or no GPU)."""
    try:
        driver = bindings()
    except CudaError:
        return 0
    return int(check(driver.cuDeviceGetCount(), "cuDeviceGetCount"))


def _attribute(device: int, name: str) -> int:
    driver = bindings()
    attribute = getattr(driver.CUdevice_attribute, name)
    value = check(driver.cuDeviceGetAttribute(attribute, device), f"cuDeviceGetAttribute({name})")
    return int(value)


@dataclass(frozen=True)
class DeviceInfo:
    """What spio-jit knows about one GPU.

    Attributes:
        index: the device ordinal (as in torch's cuda:<index>).
        name: the marketing name, e.g. "NVIDIA H100 80GB HBM3".
        arch: the architecture of its compute capability, e.g. "sm_90".
        compute_capability: (major, minor).
        sm_count: streaming multiprocessors.
        l2_bytes: L2 cache size.
        memory_bytes: total device memory.
        max_threads_per_block: the block size limit.
        max_block_dims: the per-dimension block size limits (x, y, z).
        max_grid_dims: the per-dimension grid size limits (x, y, z).
        max_shared_per_block: shared memory a block may use without opting in (48 KiB).
        max_shared_per_block_optin: shared memory a block may use after opting in.
        max_threads_per_sm: resident threads per multiprocessor.
        max_shared_per_sm: shared memory of one multiprocessor, for all its resident blocks.
        reserved_shared_per_block: shared memory the system takes from that for each
            resident block (1 KiB from sm_80 on).
    """

    index: int
    name: str
    arch: str
    compute_capability: tuple[int, int]
    sm_count: int
    l2_bytes: int
    memory_bytes: int
    max_threads_per_block: int
    max_block_dims: tuple[int, int, int]
    max_grid_dims: tuple[int, int, int]
    max_shared_per_block: int
    max_shared_per_block_optin: int
    max_threads_per_sm: int
    max_shared_per_sm: int
    reserved_shared_per_block: int


def check_device_index(device: int) -> int:
    """Return device if it names a visible GPU, else raise ValueError (or TypeError)."""
    if isinstance(device, bool) or not isinstance(device, int):
        raise TypeError(f"device must be an int index, got {device!r}")
    count = device_count()
    if not 0 <= device < count:
        visible = f"devices 0..{count - 1}" if count else "no CUDA device"
        raise ValueError(f"device={device} does not exist; this process sees {visible}")
    return device


@functools.cache
def device_info(device: int) -> DeviceInfo:
    """Return the properties of GPU `device` (queried once per process)."""
    check_device_index(device)
    driver = bindings()
    raw_name = check(driver.cuDeviceGetName(256, device), "cuDeviceGetName")
    name = raw_name.split(b"\0", 1)[0].decode() if isinstance(raw_name, bytes) else str(raw_name)
    major = _attribute(device, "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR")
    minor = _attribute(device, "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR")
    return DeviceInfo(
        index=device,
        name=name,
        arch=arch_of(major, minor),
        compute_capability=(major, minor),
        sm_count=_attribute(device, "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"),
        l2_bytes=_attribute(device, "CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE"),
        memory_bytes=int(check(driver.cuDeviceTotalMem(device), "cuDeviceTotalMem")),
        max_threads_per_block=_attribute(device, "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"),
        max_block_dims=(
            _attribute(device, "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X"),
            _attribute(device, "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y"),
            _attribute(device, "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z"),
        ),
        max_grid_dims=(
            _attribute(device, "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X"),
            _attribute(device, "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y"),
            _attribute(device, "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z"),
        ),
        max_shared_per_block=_attribute(device, "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK"),
        max_shared_per_block_optin=_attribute(
            device, "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"
        ),
        max_threads_per_sm=_attribute(device, "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR"),
        max_shared_per_sm=_attribute(
            device, "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"
        ),
        reserved_shared_per_block=_attribute(
            device, "CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK"
        ),
    )


_primary: dict[int, Any] = {}


def primary_context(device: int) -> Any:
    """Return device's primary context (the one PyTorch and the runtime use), retained once."""
    context = _primary.get(device)
    if context is None:
        with _lock:
            context = _primary.get(device)
            if context is None:
                check_device_index(device)
                driver = bindings()
                # Retained for the life of the process, as the CUDA runtime does.
                context = check(driver.cuDevicePrimaryCtxRetain(device), "cuDevicePrimaryCtxRetain")
                _primary[device] = context
    return context


def current_context_handle() -> int:
    """Return the calling thread's current context as an int (0 when none)."""
    context = check(bindings().cuCtxGetCurrent(), "cuCtxGetCurrent")
    return 0 if context is None else int(context)


@contextlib.contextmanager
def using_device(device: int) -> Iterator[None]:
    """Make device's primary context current for the block, then restore the caller's."""
    context = primary_context(device)
    if current_context_handle() == int(context):
        yield
        return
    driver = bindings()
    check(driver.cuCtxPushCurrent(context), "cuCtxPushCurrent")
    try:
        yield
    finally:
        check(driver.cuCtxPopCurrent(), "cuCtxPopCurrent")


def current_device() -> int:
    """Return the device a call without an explicit device means.

    PyTorch's current device when torch has initialized CUDA, else the device of the calling
    thread's current context, else 0.
    """
    torch = sys.modules.get("torch")
    if torch is not None:
        with contextlib.suppress(Exception):
            if torch.cuda.is_initialized():
                return int(torch.cuda.current_device())
    driver = bindings()
    if current_context_handle() != 0:
        return int(check(driver.cuCtxGetDevice(), "cuCtxGetDevice"))
    if device_count() == 0:
        raise CudaError(None, None, "the driver reports no CUDA device", "current_device")
    return 0


def default_arch() -> str:
    """Return the architecture of the current device; ValueError when there is no GPU."""
    try:
        device = current_device()
    except CudaError as error:
        raise ValueError(
            "arch=None means the current GPU's architecture, but no GPU is usable here "
            f"({error.detail}); pass arch explicitly, e.g. arch='sm_90'"
        ) from error
    return device_info(device).arch
