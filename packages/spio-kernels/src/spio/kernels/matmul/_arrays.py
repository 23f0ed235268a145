"""Checks of the matrices (and the bias vector) given to `matmul`, where they describe
themselves.

The kernel reads A and B and writes C through their data pointers as dense row-major
matrices of 16-byte rows, with 16-byte cp.async copies and vector stores. A matrix of
another shape, element type or memory order would be misread, and one whose data pointer is
not 16-byte aligned (a view that starts mid-row, say) would fault, so every array is checked
before anything is compiled or launched: torch tensors and __cuda_array_interface__ objects
by what they say of themselves, bare device pointers (ints) by their alignment alone, and
anything else (a host array, None, a number) is a TypeError naming the argument
(_array_info.describe).
"""

from __future__ import annotations

from typing import Any

from .._array_info import check_dtype, dense_strides, describe, matches
from .._tma import device_pointer

#: The alignment of every matrix's first element: one 16-byte vector.
ALIGNMENT = 16
#: The bias's: the epilogue reads it as pairs of 16-bit elements.
BIAS_ALIGNMENT = 4
#: The arrays matmul writes: an interface marking one read-only is refused.
WRITTEN = frozenset({"c"})


def check_matrix(name: str, array: Any, shape: tuple[int, int], dtype: str) -> None:
    """Raise ValueError unless array is a dense row-major matrix of shape holding dtype
    elements (when it describes itself) that starts on a 16-byte boundary; TypeError unless
    it is an array or a device pointer (describe)."""
    described = describe(name, array, written=name in WRITTEN)
    if described is not None:
        if not matches(described, shape, dense_strides(shape)):
            raise ValueError(
                f"{name} must be a dense row-major {shape[0]} x {shape[1]} matrix (shape "
                f"{shape}, strides {dense_strides(shape)}); got shape {described.shape} with "
                f"strides {described.strides}"
            )
        check_dtype(name, described, dtype)
    _check_alignment(name, array, ALIGNMENT, "the kernel moves 16-byte vectors")


def check_vector(name: str, array: Any, size: int, dtype: str) -> None:
    """Raise ValueError unless array is a dense vector of size dtype elements (when it
    describes itself) that starts on a BIAS_ALIGNMENT-byte boundary; TypeError unless it is
    an array or a device pointer (describe)."""
    described = describe(name, array, written=name in WRITTEN)
    if described is not None:
        if not matches(described, (size,), (1,)):
            raise ValueError(
                f"{name} must be a dense vector of {size} elements (shape ({size},), stride "
                f"(1,)); got shape {described.shape} with strides {described.strides}"
            )
        check_dtype(name, described, dtype)
    _check_alignment(name, array, BIAS_ALIGNMENT, "the kernel reads pairs of elements")


def _check_alignment(name: str, array: Any, alignment: int, why: str) -> None:
    """Raise ValueError unless array (one describe took) starts on an alignment-byte
    boundary."""
    pointer = device_pointer(array)
    if pointer % alignment != 0:
        raise ValueError(
            f"{name} must start on a {alignment}-byte boundary ({why}), got address {pointer:#x}"
        )
