"""TMA tensor maps of the matmul's row-major matrices (cuda.core's TensorMapDescriptor).

A map describes one matrix at one address, rows x cols of 16-bit elements (given as 16-bit
unsigned: TMA copies bits), and the box one load moves: box_rows rows of 64 elements, one
128-byte swizzle span, laid out as the wgmma kernel's descriptors read them.
"""

from __future__ import annotations

from typing import Any

from .._tma import swizzle_mode

#: Elements of a box's rows: 128 bytes of 16-bit elements, the 128-byte swizzle's span.
BOX_COLS = 64


class _Matrix:
    """The __cuda_array_interface__ of a rows x cols 16-bit matrix at pointer."""

    def __init__(self, pointer: int, rows: int, cols: int) -> None:
        self.__cuda_array_interface__ = {
            "shape": (rows, cols),
            "typestr": "<u2",
            "data": (pointer, False),
            "strides": None,
            "version": 3,
        }


def matrix_map(pointer: int, rows: int, cols: int, box_rows: int) -> Any:
    """The tensor map of the rows x cols 16-bit matrix at device address `pointer` whose box is
    box_rows rows x 64 columns, 128-byte swizzled."""
    import numpy as np
    from cuda.core.utils import StridedMemoryView

    view = StridedMemoryView.from_cuda_array_interface(_Matrix(pointer, rows, cols), stream_ptr=-1)
    return view.as_tensor_map(
        box_dim=(box_rows, BOX_COLS),
        swizzle=swizzle_mode(128),
        data_type=np.dtype(np.uint16),
    )
