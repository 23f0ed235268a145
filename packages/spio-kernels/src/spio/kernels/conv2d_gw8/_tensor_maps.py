"""TMA tensor maps of the conv kernels' NHWC activations (cuda.core's TensorMapDescriptor).

A map describes one array at one address: its N x H x W x C dims and strides, the box a
load moves (one row of pixels x the block's channels of one image) and the shared-memory
swizzle that lays the box out as the rings' rows (conv2d_gw8_ring.cuh). The element type is
given as 16-bit unsigned, whatever the activations' dtype: TMA copies bits, and the zeros it
writes outside the tensor are zeros in fp16 and bf16 alike.

Making a map is host work (tens of microseconds); `TensorMapCache` keeps the maps of the
addresses a launch sees, which in training repeat step after step (PyTorch's caching
allocator hands the same blocks out again).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Bytes of the swizzle span for each number of 16-byte cells per pixel in a box: the one
#: whose pattern equals ring_slot (conv2d_gw8_ring.cuh) on rows padded to 8 pixels.
SWIZZLE_SPAN = {1: 0, 2: 32, 4: 64, 8: 128}
#: Maps a TensorMapCache keeps before it starts again (each is 128 bytes of host memory).
CACHE_ENTRIES = 64


class _Nhwc:
    """The __cuda_array_interface__ of an N x H x W x C array of 16-bit elements at pointer."""

    def __init__(self, pointer: int, shape: tuple[int, int, int, int]) -> None:
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": "<u2",
            "data": (pointer, False),
            "strides": None,
            "version": 3,
        }


def _swizzle(cells: int) -> Any:
    """cuda.core's swizzle enum member for `cells` 16-byte cells per pixel. (cuda.core 1.2
    exports the enum only as the type of its options' default.)"""
    from cuda.core import TensorMapDescriptorOptions

    swizzle = type(TensorMapDescriptorOptions(box_dim=(1,)).swizzle)
    span = SWIZZLE_SPAN[cells]
    return swizzle.NONE if span == 0 else getattr(swizzle, f"SWIZZLE_{span}B")


def nhwc_row_map(
    pointer: int, shape: tuple[int, int, int, int], box_pixels: int, box_groups: int
) -> Any:
    """The tensor map of the N x H x W x C 16-bit array at device address `pointer` whose box
    is box_pixels pixels x box_groups groups of 8 channels of one row of one image, swizzled
    as a ring row of box_groups slots."""
    import numpy as np
    from cuda.core.utils import StridedMemoryView

    if box_groups not in SWIZZLE_SPAN:
        raise ValueError(f"box_groups must be one of {sorted(SWIZZLE_SPAN)}, got {box_groups}")
    view = StridedMemoryView.from_cuda_array_interface(_Nhwc(pointer, shape), stream_ptr=-1)
    return view.as_tensor_map(
        box_dim=(1, 1, box_pixels, 8 * box_groups),
        swizzle=_swizzle(box_groups),
        data_type=np.dtype(np.uint16),
    )


class TensorMapCache:
    """The maps made by `make(pointers)`, kept per tuple of device pointers (at most
    CACHE_ENTRIES; past that it starts again, the simplest policy that bounds it)."""

    __slots__ = ("_make", "_maps")

    def __init__(self, make: Callable[[tuple[int, ...]], tuple[Any, ...]]) -> None:
        self._make = make
        self._maps: dict[tuple[int, ...], tuple[Any, ...]] = {}

    def __call__(self, pointers: tuple[int, ...]) -> tuple[Any, ...]:
        maps = self._maps.get(pointers)
        if maps is None:
            if len(self._maps) >= CACHE_ENTRIES:
                self._maps.clear()
            maps = self._maps[pointers] = self._make(pointers)
        return maps

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
