"""TMA tensor maps as the kernels' launches make them (cuda.core's TensorMapDescriptor).

Making a map is host work (tens of microseconds); `TensorMapCache` keeps the maps of the
addresses a launch sees, which in training repeat step after step (PyTorch's caching
allocator hands the same blocks out again). `swizzle_mode` names cuda.core's swizzle for a
span of 16-byte cells; `device_pointer` reads the address of any array an entry takes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Maps a TensorMapCache keeps before it starts again (each is 128 bytes of host memory).
CACHE_ENTRIES = 64


def swizzle_mode(span_bytes: int) -> Any:
    """cuda.core's swizzle enum member for a swizzle span of 0 (none), 32, 64 or 128 bytes.
    (cuda.core 1.2 exports the enum only as the type of its options' default.)"""
    from cuda.core import TensorMapDescriptorOptions

    swizzle = type(TensorMapDescriptorOptions(box_dim=(1,)).swizzle)
    return swizzle.NONE if span_bytes == 0 else getattr(swizzle, f"SWIZZLE_{span_bytes}B")


class TensorMapCache:
    """The maps made by `make(pointers)`, kept per tuple of device pointers (at most
    CACHE_ENTRIES; past that it starts again, the simplest policy that bounds it).

    Making a map needs a current CUDA context on the calling thread. A launch may come from a
    thread that has none: PyTorch's autograd engine runs backward passes on threads of its
    own, where nothing else may have touched the GPU yet. With `device` given, each map is
    made in that device's primary context (`spio.jit.using_device`), whatever the thread.
    """

    __slots__ = ("_device", "_make", "_maps")

    def __init__(
        self, make: Callable[[tuple[int, ...]], tuple[Any, ...]], device: int | None = None
    ) -> None:
        self._make = make
        self._device = device
        self._maps: dict[tuple[int, ...], tuple[Any, ...]] = {}

    def __call__(self, pointers: tuple[int, ...]) -> tuple[Any, ...]:
        maps = self._maps.get(pointers)
        if maps is None:
            if len(self._maps) >= CACHE_ENTRIES:
                self._maps.clear()
            maps = self._maps[pointers] = self._made(pointers)
        return maps

    def _made(self, pointers: tuple[int, ...]) -> tuple[Any, ...]:
        if self._device is None:
            return self._make(pointers)
        import spio.jit

        with spio.jit.using_device(self._device):
            return self._make(pointers)

    def __len__(self) -> int:
        return len(self._maps)


def device_pointer(array: Any) -> int:
    """The device address of an array the kernel entries take: a torch tensor, an object
    with __cuda_array_interface__ (CuPy, Numba, ...) or a pointer int."""
    if isinstance(array, int):
        return array
    data_ptr = getattr(array, "data_ptr", None)
    if callable(data_ptr):
        return int(data_ptr())
    interface = getattr(array, "__cuda_array_interface__", None)
    if interface is not None:
        return int(interface["data"][0])
    raise TypeError(
        f"a {type(array).__name__} has no device address here: pass a torch tensor, an object "
        "with __cuda_array_interface__ or a pointer int"
    )


def has_tma(arch: str) -> bool:
    """Whether an sm_XX architecture has TMA (sm_90 and newer)."""
    return int(arch.removeprefix("sm_").rstrip("af")) >= 90
