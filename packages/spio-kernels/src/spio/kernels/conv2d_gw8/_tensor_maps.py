"""TMA tensor maps of the conv kernels' NHWC activations (cuda.core's TensorMapDescriptor).

A map describes one array at one address: its N x H x W x C dims and strides, the box a
load moves (one row of pixels x the block's channels of one image) and the shared-memory
swizzle that lays the box out as the rings' rows (conv2d_gw8_ring.cuh). The element type is
given as 16-bit unsigned, whatever the activations' dtype: TMA copies bits, and the zeros it
writes outside the tensor are zeros in fp16 and bf16 alike.

The cache of maps, the swizzle names and device pointers are spio.kernels._tma's (re-exported
here).
"""

from __future__ import annotations

from typing import Any

from .._tma import CACHE_ENTRIES, TensorMapCache, device_pointer, has_tma, swizzle_mode

__all__ = [
    "CACHE_ENTRIES",
    "SWIZZLE_SPAN",
    "TensorMapCache",
    "device_pointer",
    "has_tma",
    "nhwc_row_map",
]

#: Bytes of the swizzle span for each number of 16-byte cells per pixel in a box: the one
#: whose pattern equals ring_slot (conv2d_gw8_ring.cuh) on rows padded to 8 pixels.
SWIZZLE_SPAN = {1: 0, 2: 32, 4: 64, 8: 128}


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
    """cuda.core's swizzle enum member for `cells` 16-byte cells per pixel."""
    return swizzle_mode(SWIZZLE_SPAN[cells])


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
