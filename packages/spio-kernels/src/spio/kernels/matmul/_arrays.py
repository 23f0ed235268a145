"""Checks of the matrices given to `matmul`, where they describe themselves.

The kernel reads A and B and writes C through their data pointers as dense row-major
matrices of 16-byte rows, with 16-byte cp.async copies and vector stores. A matrix of
another shape, element type or memory order would be misread, and one whose data pointer is
not 16-byte aligned (a view that starts mid-row, say) would fault, so every array is checked
before anything is compiled or launched: torch tensors and __cuda_array_interface__ objects
by what they say of themselves, bare device pointers (ints) by their alignment alone.
"""

from __future__ import annotations

from typing import Any

from .._array_info import check_dtype, dense_strides, describe, is_tensor, matches

#: The alignment of every matrix's first element: one 16-byte vector.
ALIGNMENT = 16


def data_pointer(array: Any) -> int | None:
    """The device address an array starts at: a torch tensor's data_ptr(), a
    __cuda_array_interface__ object's data, an int as it is; None for anything else."""
    if is_tensor(array):
        return int(array.data_ptr())
    interface = getattr(array, "__cuda_array_interface__", None)
    if isinstance(interface, dict):
        return int(interface["data"][0])
    if isinstance(array, int) and not isinstance(array, bool):
        return array
    return None


def check_matrix(name: str, array: Any, shape: tuple[int, int], dtype: str) -> None:
    """Raise ValueError unless array is a dense row-major matrix of shape holding dtype
    elements (when it describes itself) that starts on a 16-byte boundary."""
    described = describe(name, array)
    if described is not None:
        if not matches(described, shape, dense_strides(shape)):
            raise ValueError(
                f"{name} must be a dense row-major {shape[0]} x {shape[1]} matrix (shape "
                f"{shape}, strides {dense_strides(shape)}); got shape {described.shape} with "
                f"strides {described.strides}"
            )
        check_dtype(name, described, dtype)
    pointer = data_pointer(array)
    if pointer is not None and pointer % ALIGNMENT != 0:
        raise ValueError(
            f"{name} must start on a {ALIGNMENT}-byte boundary (the kernel moves 16-byte "
            f"vectors), got address {pointer:#x}"
        )
