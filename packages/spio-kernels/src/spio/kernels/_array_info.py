"""What a device array says of itself, for the kernel entries' checks of their arguments.

The entries of every kernel family take torch tensors, objects with
__cuda_array_interface__, or bare device pointers (ints). The first two describe their
shape, strides and element type; `describe` reads that description the same way for both,
so that each family checks its arrays (dense, in its memory order, of its dtype) before
anything is compiled or launched. Bare pointers describe nothing and are taken as they are
(any nonzero 64-bit address).

Anything else is refused here, before any compile: a host array, None or a number would
otherwise reach the launch, which names only the kernel's argument position. So is an
interface that cannot be read as it claims: one missing a key, with strides that split an
element, a null or misaligned data pointer, big-endian elements, a mask, or (for an array
the kernel writes) marked read-only.
"""

from __future__ import annotations

import math
import numbers
import operator
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Element types by __cuda_array_interface__ kind and width: float16 and float32 are named;
#: bfloat16 has no typestr of its own (containers of 2-byte elements carry it).
_FLOAT_NAMES = {2: "float16", 4: "float32"}
#: str() of the torch dtype of each element type.
TORCH_NAMES = {name: f"torch.{name}" for name in ("float16", "bfloat16", "float32")}
#: A typestr: byte order (little-endian, not applicable or native; the GPU hosts Spio runs
#: on are all little-endian), kind letter, element size in bytes.
_TYPESTR = re.compile(r"^(?P<order>[<|=>])(?P<kind>[a-zA-Z])(?P<size>[1-9][0-9]*)$")
#: DLPack's device types of memory a kernel reads: kDLCUDA and kDLCUDAManaged.
_DLPACK_CUDA_DEVICES = (2, 13)
#: What the entries take, for the TypeError naming anything else.
_ALLOWED = (
    "a device array (a torch tensor or an object with __cuda_array_interface__) or a device "
    "pointer (an int)"
)


@dataclass(frozen=True)
class Described:
    """What an array says of itself: its shape, strides in elements, and element type (a
    dtype name, or for a 2-byte non-float container, None)."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: str | None
    itemsize: int


def describe(name: str, array: Any, written: bool = False) -> Described | None:
    """The description of a torch tensor or __cuda_array_interface__ object; None for a
    device pointer (an int, which the launch takes as it is). written: the kernel writes the
    array, so an interface marking it read-only is refused.

    Raises:
        TypeError: array is none of these (a host array, None, a bool, a str, a float, ...).
        ValueError: a torch tensor off the GPU; a pointer of 0 or out of 64 bits; an interface
            that is malformed or that the kernel cannot read as it says (see the module doc).
        Each names the array.
    """
    if is_tensor(array):
        if not on_cuda(array):
            raise ValueError(f"{name} must be on a CUDA device, got a tensor on {array.device}")
        dtype = str(array.dtype).removeprefix("torch.")
        return Described(tuple(array.shape), tuple(array.stride()), dtype, array.element_size())
    interface = getattr(array, "__cuda_array_interface__", None)
    if interface is None:
        if _launch_takes_undescribed(array):
            return None
        check_pointer(name, array)
        return None
    return _read_interface(name, interface, written)


def _launch_takes_undescribed(array: Any) -> bool:
    """Whether array is a device array spio.jit's launch takes although it describes no
    shape here: a DLPack array, or a cuda.core Buffer (a device allocation)."""
    kind = type(array)
    if hasattr(kind, "__dlpack__") and hasattr(kind, "__dlpack_device__"):
        # NumPy's arrays speak DLPack too: only memory on a CUDA device (or managed) passes.
        return int(array.__dlpack_device__()[0]) in _DLPACK_CUDA_DEVICES
    return kind.__module__.startswith("cuda.") and kind.__name__ == "Buffer"


def check_pointer(name: str, array: Any) -> None:
    """Raise TypeError unless array is an int (a device pointer; not a bool), ValueError
    unless it is an address: above 0 and below 2**64."""
    if isinstance(array, bool) or not isinstance(array, int):
        raise TypeError(f"{name} must be {_ALLOWED}, got {_what(array)}")
    if not 0 < array < 1 << 64:
        raise ValueError(f"{name} must be a nonzero 64-bit device address, got {array}")


def _what(value: Any) -> str:
    """value's kind, for a TypeError: None, a bool or str with its value, an integer of
    another type (NumPy's) or a host array named as one, else its type."""
    if value is None:
        return "None"
    kind = type(value)
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return f"a {kind.__module__}.{kind.__qualname__} (pass a pointer as int(...))"
    if hasattr(value, "__array_interface__"):
        return f"a {kind.__module__}.{kind.__qualname__} in host memory (copy it to the GPU)"
    if isinstance(value, bool | str | float):
        return f"a {kind.__name__} ({value!r})"
    return f"a {kind.__name__}"


def _read_interface(name: str, interface: Any, written: bool) -> Described:
    """The description an __cuda_array_interface__ dict gives, checked (describe)."""
    malformed = f"{name}'s __cuda_array_interface__"
    if not isinstance(interface, Mapping):
        raise ValueError(f"{malformed} must be a dict, got a {type(interface).__name__}")
    missing = [key for key in ("shape", "typestr", "data") if key not in interface]
    if missing:
        raise ValueError(f"{malformed} has no {', '.join(map(repr, missing))}")
    shape = _ints(f"{malformed} shape", interface["shape"])
    if any(size < 0 for size in shape):
        raise ValueError(f"{malformed} shape must hold sizes >= 0, got {shape}")
    typestr = interface["typestr"]
    match = _TYPESTR.match(typestr) if isinstance(typestr, str) else None
    if match is None:
        raise ValueError(
            f"{malformed} typestr must be a byte order, a kind and a size in bytes, like "
            f"'<f2'; got {typestr!r}"
        )
    if match["order"] == ">":
        raise ValueError(f"{name} must hold little-endian elements, got typestr {typestr!r}")
    itemsize = int(match["size"])
    float_name = _FLOAT_NAMES.get(itemsize) if match["kind"] == "f" else None
    strides = interface.get("strides")
    if strides is None:
        elements = dense_strides(shape)
    else:
        elements = _element_strides(name, shape, _ints(f"{malformed} strides", strides), itemsize)
    _check_data(name, interface["data"], math.prod(shape), itemsize, written)
    if interface.get("mask") is not None:
        raise ValueError(f"{name} has a mask: masked arrays are not taken")
    return Described(shape, elements, float_name, itemsize)


def _ints(what: str, values: Any) -> tuple[int, ...]:
    """values (a shape or strides) as a tuple of ints; ValueError naming `what` otherwise."""
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise ValueError(f"{what} must be a tuple of ints, got {values!r}") from None


def _element_strides(
    name: str, shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int
) -> tuple[int, ...]:
    """Byte strides in elements. ValueError where their count is not the shape's, or where
    a dimension of more than one element steps by part of an element (a misaligned array,
    which dividing would pass as dense); a size-1 dimension's stride is never stepped."""
    if len(strides) != len(shape):
        raise ValueError(
            f"{name}'s __cuda_array_interface__ has {len(strides)} strides for its "
            f"{len(shape)} dimensions (shape {shape}, strides {strides})"
        )
    if any(size > 1 and stride % itemsize for size, stride in zip(shape, strides, strict=True)):
        raise ValueError(
            f"{name} must have byte strides that are multiples of its element size "
            f"({itemsize} bytes), got strides {strides} for shape {shape}"
        )
    return tuple(stride // itemsize for stride in strides)


def _check_data(name: str, data: Any, elements: int, itemsize: int, written: bool) -> None:
    """Raise ValueError unless data is (pointer, read-only flag) with a 64-bit pointer on an
    element boundary, nonzero where there are elements, and, for an array the kernel
    writes, no read-only flag."""
    try:
        if not isinstance(data, tuple | list) or len(data) != 2 or isinstance(data[0], bool):
            raise TypeError
        # (Any integer: some producers give the pointer as a NumPy integer.)
        pointer, read_only = operator.index(data[0]), data[1]
    except TypeError:
        raise ValueError(
            f"{name}'s __cuda_array_interface__ data must be (pointer int, read-only bool), "
            f"got {data!r}"
        ) from None
    if not 0 <= pointer < 1 << 64:
        raise ValueError(f"{name}'s data pointer must be a 64-bit address, got {pointer}")
    if pointer == 0 and elements > 0:
        raise ValueError(f"{name} has a null data pointer for its {elements} elements")
    if pointer % itemsize:
        raise ValueError(
            f"{name} must start on a boundary of its {itemsize}-byte elements, got address "
            f"{pointer:#x}"
        )
    if written and read_only:
        raise ValueError(
            f"{name} is written by the kernel, but its __cuda_array_interface__ marks it "
            "read-only (data=(pointer, True))"
        )


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
