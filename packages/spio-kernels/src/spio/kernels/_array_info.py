"""What a device array says of itself, for the kernel entries' checks of their arguments.

The entries of every kernel family take torch tensors, objects with
__cuda_array_interface__, or bare device pointers (ints). The first two describe their
shape, strides and element type; `describe` reads that description the same way for both,
so that each family checks its arrays (dense, in its memory order, of its dtype) before
anything is compiled or launched. Bare pointers describe nothing and are taken as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Element types by __cuda_array_interface__ kind and width: float16 and float32 are named;
#: bfloat16 has no typestr of its own (containers of 2-byte elements carry it).
_FLOAT_NAMES = {2: "float16", 4: "float32"}
#: str() of the torch dtype of each element type.
TORCH_NAMES = {name: f"torch.{name}" for name in ("float16", "bfloat16", "float32")}


@dataclass(frozen=True)
class Described:
    """What an array says of itself: its shape, strides in elements, and element type (a
    dtype name, or for a 2-byte non-float container, None)."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: str | None
    itemsize: int


def describe(name: str, array: Any) -> Described | None:
    """The description of a torch tensor or __cuda_array_interface__ object, else None (a
    device pointer or another object, which the launch takes as it is). A torch tensor off
    the GPU is a ValueError naming the array."""
    if is_tensor(array):
        if not on_cuda(array):
            raise ValueError(f"{name} must be on a CUDA device, got a tensor on {array.device}")
        dtype = str(array.dtype).removeprefix("torch.")
        return Described(tuple(array.shape), tuple(array.stride()), dtype, array.element_size())
    interface = getattr(array, "__cuda_array_interface__", None)
    if not isinstance(interface, dict):
        return None
    shape = tuple(int(v) for v in interface["shape"])
    typestr = str(interface["typestr"])
    itemsize = int(typestr[2:])
    float_name = _FLOAT_NAMES.get(itemsize) if typestr[1] == "f" else None
    strides = interface.get("strides")
    if strides is None:
        elements = dense_strides(shape)
    else:
        elements = tuple(int(stride) // itemsize for stride in strides)
    return Described(shape, elements, float_name, itemsize)


def is_tensor(array: Any) -> bool:
    """Whether array is a torch tensor (without importing torch)."""
    return type(array).__module__.startswith("torch") and hasattr(array, "data_ptr")


def on_cuda(tensor: Any) -> bool:
    """Whether a torch tensor is on a CUDA device (a seam for the CPU tests)."""
    return bool(tensor.is_cuda)


def dense_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """The strides, in elements, of a C-contiguous array of shape."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def matches(described: Described, shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether the array has this shape and these strides (sizes of 1 take any stride)."""
    return described.shape == shape and all(
        size == 1 or stride == want
        for size, stride, want in zip(shape, described.strides, strides, strict=True)
    )


def check_dtype(name: str, described: Described, dtype: str) -> None:
    """Raise ValueError unless the array holds dtype elements (a 2-byte container stands for
    either 16-bit float type)."""
    width = 4 if dtype == "float32" else 2
    known = described.dtype
    if described.itemsize != width or (known is not None and known != dtype):
        got = known or f"{described.itemsize}-byte elements"
        raise ValueError(f"{name} must hold {dtype} values, got {got}")


def resolve_device(device: int | None, array: Any) -> int:
    """Return device, else the CUDA device of a torch tensor array, else 0."""
    if device is not None:
        return device
    found = device_of(array)
    return 0 if found is None else found


def device_of(value: Any) -> int | None:
    """The CUDA device index of a torch tensor, else None."""
    device = getattr(value, "device", None)
    index = getattr(device, "index", None)
    return index if isinstance(index, int) else None
