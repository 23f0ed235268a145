"""Checks of the arrays given to conv2d_gw8_fprop, _dgrad and _wgrad, where they describe
themselves.

The kernels read and write each array through its data pointer as dense memory in one order:
activations N x H x W x C, weights K x R x S x 8. An array of another shape, element type or
memory order would be read out of bounds or misread, so the entries check every array that
says what it is (a torch tensor, or an object with __cuda_array_interface__) before anything
is compiled or launched; bare device pointers (ints) are taken as they are, and anything else
(a host array, None, a number) is a TypeError naming the argument (_array_info.describe). The
launch callables (fprop_launch, ...) skip these checks: their callers (spio-torch) check once
per layer.

Two views of the same memory are accepted: the kernel's own (NHWC activations, K x R x S x 8
weights, C-contiguous) and torch's in channels_last memory (N x C x H x W activations,
K x 8 x R x S weights), which is the same bytes.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

from .. import _array_info
from .._array_info import (
    TORCH_NAMES,
    Described,
    check_dtype,
    dense_strides,
    describe,
    is_tensor,
    matches,
)
from .params import Conv2dGw8Params
from .params import check_params as check_params  # (the entries import it from here)

#: torch's view of an activation (N, C, H, W) and of a weight (K, 8, R, S), as positions in
#: the kernel's memory order (N, H, W, C) and (K, R, S, 8).
_TORCH_VIEW = (0, 3, 1, 2)
#: The arrays the entries write, by the names they check them under (fprop's y, dgrad's
#: grad_x, wgrad's grad_w, grad_bias and workspace): an interface marking one of them
#: read-only is refused. By name, because the entries' calls are part of the kernels' sources
#: digest (sources_digest.SHARED_FILES, PASS_FILES) and each names its arrays as it documents
#: them.
WRITTEN = frozenset({"y", "grad_x", "grad_w", "grad_bias", "workspace"})


def _torch_view(values: Sequence[int]) -> tuple[int, ...]:
    """values (a shape or strides in the kernel's memory order) in torch's view's order."""
    return tuple(values[i] for i in _TORCH_VIEW)


def _dense_in_order(described: Described, memory_shape: tuple[int, ...]) -> bool:
    """Whether the array is dense memory of memory_shape: in that shape, or in torch's view of
    it (dimensions in _TORCH_VIEW's order, strides permuted alike)."""
    dense = dense_strides(memory_shape)
    return matches(described, memory_shape, dense) or matches(
        described, _torch_view(memory_shape), _torch_view(dense)
    )


def check_array(
    name: str, array: Any, memory_shape: tuple[int, ...], dtype: str, view: str
) -> None:
    """Raise ValueError unless array (when it describes itself) is dense memory of
    memory_shape in the kernel's order, or torch's channels_last view of it, holding dtype
    elements; TypeError unless it is an array or a device pointer (describe). view names the
    accepted shapes for the message."""
    if _fits_as_tensor(array, memory_shape, dtype):
        return
    described = describe(name, array, written=name in WRITTEN)
    if described is None:
        return
    if not _dense_in_order(described, memory_shape):
        raise ValueError(
            f"{name} must be {view}: shape {memory_shape}, contiguous, or shape "
            f"{_torch_view(memory_shape)} in channels_last memory; got shape "
            f"{described.shape} with strides {described.strides}"
        )
    check_dtype(name, described, dtype)


def _fits_as_tensor(array: Any, memory_shape: tuple[int, ...], dtype: str) -> bool:
    """Whether array is a CUDA torch tensor that fits, found with few of torch's calls (the
    common case, a few hundred nanoseconds); False sends it through the full description."""
    if not is_tensor(array) or not _array_info.on_cuda(array):
        return False
    if str(array.dtype) != TORCH_NAMES[dtype]:
        return False
    if array.shape == memory_shape:
        return bool(array.is_contiguous())
    torch = sys.modules["torch"]
    return bool(array.dim() == 4 and array.is_contiguous(memory_format=torch.channels_last)) and (
        tuple(array.shape) == _torch_view(memory_shape)
    )


def check_vector(name: str, array: Any, length: int, dtype: str) -> None:
    """Raise ValueError unless array (when it describes itself) is `length` contiguous
    elements of dtype; TypeError unless it is an array or a device pointer (describe)."""
    described = describe(name, array, written=name in WRITTEN)
    if described is None:
        return
    if described.shape != (length,) or (length > 1 and described.strides != (1,)):
        raise ValueError(
            f"{name} must be {length} contiguous values, got shape {described.shape} with "
            f"strides {described.strides}"
        )
    check_dtype(name, described, dtype)


def check_workspace(array: Any, nbytes: int) -> None:
    """Raise ValueError unless the workspace (when it describes itself) is contiguous and
    holds at least nbytes; TypeError unless it is an array or a device pointer (describe)."""
    if nbytes == 0 and type(array) is int and array == 0:
        return  # a null pointer where the config needs no workspace, as the launch takes it
    described = describe("workspace", array, written=True)
    if described is None:
        return
    elements = math.prod(described.shape)
    if described.strides != dense_strides(described.shape) and elements > 1:
        raise ValueError(f"workspace must be contiguous, got strides {described.strides}")
    if elements * described.itemsize < nbytes:
        raise ValueError(
            f"workspace must hold at least {nbytes} bytes (wgrad_workspace_bytes), got "
            f"{elements * described.itemsize}"
        )


def check_activation(name: str, array: Any, shape: tuple[int, ...], dtype: str) -> None:
    """check_array for an activation of NHWC shape `shape`."""
    check_array(name, array, shape, dtype, "an N x H x W x C activation")


def check_weights(name: str, array: Any, params: Conv2dGw8Params, dtype: str) -> None:
    """check_array for the layer's weights (or their gradient) in Spio's K x R x S x 8 layout."""
    view = (
        "the layer's K x R x S x 8 weights (weights_from_torch_layout converts a contiguous "
        "K x 8 x R x S one)"
    )
    check_array(name, array, params.weight_shape, dtype, view)
