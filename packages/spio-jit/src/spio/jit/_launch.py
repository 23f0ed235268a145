"""Streams for launches, and the module-level launch function.

A launch needs a cuda.core Stream. Wrapping a raw handle costs tens of microseconds, so the
wrappers are cached per handle, with the device the stream belongs to (checked against the
kernel's device on every launch, for free).

Without an explicit stream a launch goes where the arrays' framework would put its own
work: PyTorch's current stream for the kernel's device when a torch tensor is an argument
(or torch has initialized CUDA), CuPy's current stream when a CuPy array is, and the legacy
default stream otherwise. torch and cupy are never imported here; they are used only when
already imported by the caller.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from spio.jit import _driver
from spio.jit._cuda_core import cuda_core

if TYPE_CHECKING:
    from spio.jit._module import Kernel

# Handles of the streams with no context of their own: NULL, CU_STREAM_LEGACY and
# CU_STREAM_PER_THREAD. A launch on them runs in the calling thread's current context.
_CONTEXTLESS = (0, 1, 2)
_MAX_CACHED_STREAMS = 1024

# handle -> (cuda.core Stream, runs in the current context, device index or None)
_streams: dict[int, tuple[Any, bool, int | None]] = {}
_streams_lock = threading.Lock()
# torch's getters, looked up once: (device) -> current stream handle, () -> current device.
_torch_raw_stream: Callable[[int], int] | None = None
_torch_current_device: Callable[[], int] | None = None


def _torch_stream_portable(device: int) -> int:
    return int(sys.modules["torch"].cuda.current_stream(device).cuda_stream)


def torch_stream_getter() -> Callable[[int], int]:
    """Return a function of a device index giving torch's current stream handle there."""
    global _torch_raw_stream
    getter = _torch_raw_stream
    if getter is None:
        # The private getter returns the raw handle without building a torch Stream (~1 us);
        # the public API is the fallback.
        raw = getattr(sys.modules["torch"]._C, "_cuda_getCurrentRawStream", None)
        getter = raw if raw is not None else _torch_stream_portable
        _torch_raw_stream = getter
    return getter


def torch_device_getter() -> Callable[[], int]:
    """Return a function giving torch's current CUDA device (cudaGetDevice, ~0.1 us)."""
    global _torch_current_device
    getter = _torch_current_device
    if getter is None:
        torch = sys.modules["torch"]
        raw = getattr(torch._C, "_cuda_getDevice", None)
        getter = raw if raw is not None else torch.cuda.current_device
        _torch_current_device = getter
    return getter


def _torch_stream(device: int) -> int:
    return int(torch_stream_getter()(device))


def _cupy_stream(device: int) -> int:
    cupy = sys.modules["cupy"]
    try:
        stream = cupy.cuda.get_current_stream(device)
    except TypeError:  # CuPy before 13 takes no device
        stream = cupy.cuda.get_current_stream()
    return int(stream.ptr)


def default_stream_source(framework: str | None) -> str | None:
    """Return whose current stream a launch without a stream uses: "torch", "cupy" or None."""
    if framework is not None:
        return framework
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return "torch"
    if "cupy" in sys.modules:
        return "cupy"
    return None


def default_stream_handle(framework: str | None, device: int) -> int:
    """Return the stream a launch without an explicit stream uses (see the module doc)."""
    source = default_stream_source(framework)
    if source == "torch":
        return _torch_stream(device)
    if source == "cupy":
        return _cupy_stream(device)
    return 0


def stream_handle(stream: Any) -> int:
    """Return the raw CUstream of a stream object (cuda.core, torch, CuPy, or an int)."""
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        _, handle = protocol()
        return int(handle)
    for attribute in ("cuda_stream", "ptr"):
        handle = getattr(stream, attribute, None)
        if isinstance(handle, int):
            return handle
    raise TypeError(
        "stream must be None, a raw CUstream int, or a stream object (cuda.core Stream, "
        f"torch.cuda.Stream, cupy.cuda.Stream, __cuda_stream__), got {type(stream).__name__}"
    )


def _stream_device(handle: int) -> int | None:
    """Return the device of a stream's context, or None if the driver cannot say."""
    driver = _driver.bindings()
    try:
        context = _driver.check(driver.cuStreamGetCtx(driver.CUstream(handle)), "cuStreamGetCtx")
        _driver.check(driver.cuCtxPushCurrent(context), "cuCtxPushCurrent")
        try:
            return int(_driver.check(driver.cuCtxGetDevice(), "cuCtxGetDevice"))
        finally:
            _driver.check(driver.cuCtxPopCurrent(), "cuCtxPopCurrent")
    except Exception:
        return None


def _wrap(handle: int) -> tuple[Any, bool, int | None]:
    core = cuda_core()
    if handle in _CONTEXTLESS:
        stream = core.PER_THREAD_DEFAULT_STREAM if handle == 2 else core.LEGACY_DEFAULT_STREAM
        entry: tuple[Any, bool, int | None] = (stream, True, None)
    else:
        entry = (core.Stream.from_handle(handle), False, _stream_device(handle))
    with _streams_lock:
        if len(_streams) >= _MAX_CACHED_STREAMS:
            _streams.clear()
        _streams[handle] = entry
    return entry


def stream_entry(handle: int) -> tuple[Any, bool, int | None]:
    """Return (cuda.core Stream, runs in the current context, device or None) of a handle."""
    entry = _streams.get(handle)
    return entry if entry is not None else _wrap(handle)


def resolve_stream(stream: Any, framework: str | None, device: int) -> tuple[Any, bool]:
    """Return (cuda.core Stream, whether it runs in the current context) for a launch."""
    if stream is None:
        handle = default_stream_handle(framework, device)
    elif type(stream) is int:
        handle = stream
    else:
        handle = stream_handle(stream)
    core, contextless, stream_device = stream_entry(handle)
    if stream_device is not None and stream_device != device:
        raise ValueError(
            f"the stream (handle {handle:#x}) belongs to cuda:{stream_device}, but the "
            f"kernel was loaded for cuda:{device}"
        )
    return core, contextless


def forget_streams() -> None:
    """Drop the cached stream wrappers (after destroying streams whose handles may recur)."""
    with _streams_lock:
        _streams.clear()


def launch(
    kernel: Kernel,
    grid: int | Sequence[int],
    block: int | Sequence[int],
    args: Sequence[Any],
    shared_mem: int = 0,
    stream: Any = None,
    pdl: bool = False,
    cooperative: bool = False,
) -> None:
    """Launch kernel on a grid of blocks with the given arguments.

    Args:
        kernel: a Kernel from Module.get_kernel.
        grid: blocks per grid: an int or 1 to 3 ints (x, y, z).
        block: threads per block: an int or 1 to 3 ints (x, y, z).
        args: the kernel's arguments, in order, as a tuple or list: torch tensors, CuPy
            arrays and other CUDA arrays (passed as device pointers), Python ints (64-bit
            values or pointers), and scalars with a C type (spio.jit.int32(5), numpy
            scalars).
        shared_mem: bytes of dynamic shared memory per block. More than 48 KiB opts the
            kernel in automatically, up to the device's limit.
        stream: where to launch: None for the framework's current stream (see the module
            doc), a cuda.core / torch / CuPy stream, or a raw CUstream int.
        pdl: programmatic dependent launch (sm_90 and newer; ignored before): the kernel
            may start while the previous kernel in the stream finishes, so the launch gap
            overlaps that kernel's tail. Only for kernels that wait for the previous grid
            before touching global memory (spio/arch/grid_dependency.cuh:
            wait_for_previous_grids) and that may let the next one start early
            (allow_next_grid_launch).
        cooperative: a cooperative launch: the driver places every block of the grid at
            once or refuses the launch, so the blocks may wait for each other (a grid-wide
            barrier, spio/arch/grid_barrier.cuh). The grid must fit on the device at the
            kernel's occupancy; combines with pdl.

    Raises:
        TypeError: kernel is not a Kernel; wrong argument count or types (checked against
            the kernel's parameter sizes when the driver reports them).
        ValueError: an argument or stream on another device, a launch too large for the
            device or the kernel, or a cooperative grid larger than fits at once.
        CudaError: the driver refused the launch.
    """
    # Looked up, not imported: _module imports this module, and an import statement here
    # would cost 0.8 us a launch against 0.07 (spio.jit's __init__ has imported _module).
    if not isinstance(kernel, sys.modules["spio.jit._module"].Kernel):
        raise TypeError(
            f"kernel must be a spio.jit.Kernel (Module.get_kernel), got {_kind(kernel)}"
        )
    kernel.launch(grid, block, args, shared_mem, stream, pdl, cooperative)


def _kind(value: Any) -> str:
    """value's type, with the value where it is short to show (None, a str, a number)."""
    if value is None or isinstance(value, str | int | float):
        return f"{type(value).__name__} {value!r}"
    return type(value).__name__
