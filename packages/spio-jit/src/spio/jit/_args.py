"""Kernel arguments: the C scalar types and the conversion of Python objects to parameters.

A kernel parameter is a device pointer or a scalar of one C type. Pointers come from torch
tensors, CuPy arrays, objects with __cuda_array_interface__ or DLPack, cuda.core Buffers,
or plain Python ints (taken as 64-bit values). A TMA tensor map is a cuda.core
TensorMapDescriptor, passed by value. Scalars must say their C type: numpy
scalars, ctypes scalars, or this module's vocabulary (`int32(5)`, `float32(0.5)`, ...).
A Python float or a Python int for a parameter narrower than 8 bytes is refused, because
its C type would be a guess.

Conversion is dispatched on type(arg) through a table filled on first sight of each type.
The launch path (_launcher) writes out one function per list of argument types, with
torch tensors (the common case) converted inline.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from spio.jit._cuda_core import cuda_core

# DLPack device types that a CUDA kernel can dereference.
_DLPACK_CUDA = 2
_DLPACK_CUDA_HOST = 3
_DLPACK_CUDA_MANAGED = 13
#: Bytes of a CUtensorMap (TMA descriptor) parameter.
TENSOR_MAP_BYTES = 128
_INT64_MIN = -(1 << 63)
_UINT64_END = 1 << 64


class CType:
    """A C scalar type of kernel arguments; calling it makes a typed scalar.

    `spio.jit.int32(5)` returns a numpy.int32 that a launch passes as a 4-byte int.
    `bfloat16(x)` returns the bfloat16 bit pattern (round to nearest even) as a
    numpy.uint16, which is what a `__nv_bfloat16` parameter receives.
    """

    __slots__ = ("cname", "kind", "name", "size")

    def __init__(self, name: str, cname: str, kind: str, size: int) -> None:
        self.name = name
        self.cname = cname
        self.kind = kind
        self.size = size

    def __repr__(self) -> str:
        return f"spio.jit.{self.name}"

    def __call__(self, value: Any) -> Any:
        """Return value as a numpy scalar of this C type; raise if it does not fit."""
        import numpy as np

        if self.kind in ("int", "uint"):
            try:
                integer = operator.index(value)
            except TypeError:
                raise TypeError(f"{self.name} takes an integer, got {value!r}") from None
            try:
                return getattr(np, self.name)(integer)
            except OverflowError:
                raise ValueError(f"{integer} does not fit in {self.name}") from None
        if self.kind == "bool":
            return np.bool_(bool(value))
        if self.kind == "bfloat16":
            return _bfloat16_bits(float(value))
        return getattr(np, self.name)(float(value))


def _bfloat16_bits(value: float) -> Any:
    import numpy as np

    bits = int(np.float32(value).view(np.uint32))
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x007FFFFF:
        return np.uint16(0x7FC0 | ((bits >> 16) & 0x8000))  # quiet NaN, sign kept
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return np.uint16(rounded & 0xFFFF)


int8 = CType("int8", "int8_t", "int", 1)
int16 = CType("int16", "int16_t", "int", 2)
int32 = CType("int32", "int32_t", "int", 4)
int64 = CType("int64", "int64_t", "int", 8)
uint8 = CType("uint8", "uint8_t", "uint", 1)
uint16 = CType("uint16", "uint16_t", "uint", 2)
uint32 = CType("uint32", "uint32_t", "uint", 4)
uint64 = CType("uint64", "uint64_t", "uint", 8)
float16 = CType("float16", "__half", "float", 2)
bfloat16 = CType("bfloat16", "__nv_bfloat16", "bfloat16", 2)
float32 = CType("float32", "float", "float", 4)
float64 = CType("float64", "double", "float", 8)
bool_ = CType("bool_", "bool", "bool", 1)

C_TYPES: tuple[CType, ...] = (
    int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float16, bfloat16, float32, float64, bool_,
)  # fmt: skip


class ArgError(Exception):
    """An argument cannot be passed; the packer adds which argument and kernel."""

    def __init__(self, message: str, error: type[Exception] = TypeError) -> None:
        super().__init__(message)
        self.error = error


# A converter maps an argument to (value for cuda.core, device index or -1 for host/any).
Converter = Callable[[Any], tuple[Any, int]]


@dataclass(frozen=True)
class ArgKind:
    """How one Python type is passed: its converter (None: as is), size and framework."""

    convert: Converter | None
    size: int
    framework: str | None
    description: str


def torch_pointer(tensor: Any) -> tuple[Any, int]:
    """Return a torch tensor's (data pointer, device index); _launcher inlines it."""
    device = tensor.get_device()
    if device < 0:
        raise ArgError(
            f"a tensor on {tensor.device}; kernels take CUDA tensors (move it with .cuda())"
        )
    return tensor.data_ptr(), device


def _cupy_pointer(array: Any) -> tuple[Any, int]:
    memory = array.data
    return memory.ptr, memory.device_id


def _pointer_device(pointer: int) -> int:
    """Return the device that owns a device pointer, or -1 if the driver cannot tell."""
    if pointer == 0:
        return -1
    from spio.jit import _driver

    driver = _driver.bindings()
    attribute = driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
    try:
        result, value = driver.cuPointerGetAttribute(attribute, pointer)
    except Exception:
        return -1
    return int(value) if int(result) == 0 else -1


def _cai_pointer(array: Any) -> tuple[Any, int]:
    pointer = int(array.__cuda_array_interface__["data"][0])
    return pointer, _pointer_device(pointer)


def _instance_protocols(cls: type) -> Converter:
    """Return a converter for a type with no array protocol of its own.

    Numba's device arrays and other wrappers set __cuda_array_interface__ on the instance,
    so whether an object of such a type is an array is decided per object.
    """
    refusal = (
        f"a {cls.__module__}.{cls.__qualname__}, which is neither device memory "
        "(tensor, array, pointer int) nor a C scalar (spio.jit.int32(...), numpy scalar)"
    )

    def convert(value: Any) -> tuple[Any, int]:
        interface = getattr(value, "__cuda_array_interface__", None)
        if interface is not None:
            pointer = int(interface["data"][0])
            return pointer, _pointer_device(pointer)
        if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
            return _dlpack_pointer(value)
        raise ArgError(refusal)

    return convert


def _dlpack_pointer(array: Any) -> tuple[Any, int]:
    device_type, device_id = array.__dlpack_device__()
    if device_type not in (_DLPACK_CUDA, _DLPACK_CUDA_HOST, _DLPACK_CUDA_MANAGED):
        raise ArgError(
            f"a DLPack array on device type {int(device_type)}; kernels take CUDA memory"
        )
    cuda_core()  # (cuda.core whole before its submodule: see _cuda_core)
    from cuda.core.utils import StridedMemoryView

    # stream_ptr=-1: the caller orders the producer's work before the launch.
    view = StridedMemoryView.from_dlpack(array, stream_ptr=-1)
    device = int(device_id) if device_type == _DLPACK_CUDA else -1
    return int(view.ptr), device


def _buffer_pointer(buffer: Any) -> tuple[Any, int]:
    return int(buffer.handle), int(buffer.device_id)


def _python_int(value: int) -> tuple[Any, int]:
    if not _INT64_MIN <= value < _UINT64_END:
        raise ArgError(f"{value} does not fit in 64 bits", ValueError)
    if value >= 1 << 63:
        value -= _UINT64_END  # cuda.core takes a signed 64-bit value; the bits are the same
    return value, -1


def _python_bool(value: bool) -> tuple[Any, int]:
    import numpy as np

    return np.bool_(value), -1


def _refuse(message: str, error: type[Exception] = TypeError) -> Converter:
    def convert(_: Any) -> tuple[Any, int]:
        raise ArgError(message, error)

    return convert


def _canonical_numpy(numpy_type: type) -> Converter:
    """Return a converter to the numpy type of the same kind and size that cuda.core knows."""
    import numpy as np

    dtype = np.dtype(numpy_type)
    target = np.dtype(f"{dtype.kind}{dtype.itemsize}").type

    def convert(value: Any) -> tuple[Any, int]:
        return target(value), -1

    return convert


def _numpy_kind(cls: type) -> ArgKind | None:
    numpy = sys.modules.get("numpy")
    if numpy is None or not issubclass(cls, numpy.generic):
        return None
    dtype = numpy.dtype(cls)
    exact = {
        numpy.bool_, numpy.int8, numpy.int16, numpy.int32, numpy.int64,
        numpy.uint8, numpy.uint16, numpy.uint32, numpy.uint64,
        numpy.float16, numpy.float32, numpy.float64, numpy.complex64, numpy.complex128,
    }  # fmt: skip
    if cls in exact:
        return ArgKind(None, dtype.itemsize, None, f"numpy.{dtype.name}")
    if dtype.kind in "iuf" and dtype.itemsize in (1, 2, 4, 8):
        return ArgKind(_canonical_numpy(cls), dtype.itemsize, None, f"numpy.{dtype.name}")
    return ArgKind(
        _refuse(f"a numpy {dtype.name} scalar, which no kernel parameter type matches"),
        dtype.itemsize,
        None,
        f"numpy.{dtype.name}",
    )


def _ctypes_kind(cls: type) -> ArgKind | None:
    import ctypes

    simple = (
        ctypes.c_bool, ctypes.c_int8, ctypes.c_int16, ctypes.c_int32, ctypes.c_int64,
        ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint64,
        ctypes.c_float, ctypes.c_double,
    )  # fmt: skip
    if cls in simple:
        return ArgKind(None, ctypes.sizeof(cls), None, f"ctypes.{cls.__name__}")
    return None


def _module_root(cls: type) -> str:
    return (getattr(cls, "__module__", "") or "").split(".", 1)[0]


def classify(cls: type) -> ArgKind:
    """Return how arguments of type cls are passed; the result is cached per type."""
    kind = _ARG_KINDS.get(cls)
    if kind is not None:
        return kind
    kind = _classify(cls)
    _ARG_KINDS[cls] = kind
    return kind


def _classify(cls: type) -> ArgKind:
    # numpy scalars first: numpy.float64 subclasses float (and numpy.complex128 complex),
    # yet says its C type, so the Python float rule below must not catch it.
    numpy_kind = _numpy_kind(cls)
    if numpy_kind is not None:
        return numpy_kind
    ctypes_kind = _ctypes_kind(cls)
    if ctypes_kind is not None:
        return ctypes_kind
    if cls is bool:
        return ArgKind(_python_bool, 1, None, "a Python bool (C bool)")
    if issubclass(cls, int) and not issubclass(cls, bool):
        return ArgKind(_python_int, 8, None, "a Python int (64-bit value or pointer)")
    if issubclass(cls, float):
        return ArgKind(
            _refuse(
                "a Python float, which has no C type; pass spio.jit.float32(x) or "
                "spio.jit.float64(x) (or a numpy scalar)"
            ),
            0,
            None,
            "a Python float",
        )
    root = _module_root(cls)
    from_torch = any(_module_root(base) == "torch" for base in cls.__mro__)  # subclasses too
    if from_torch and hasattr(cls, "data_ptr") and hasattr(cls, "get_device"):
        return ArgKind(torch_pointer, 8, "torch", "a torch tensor (device pointer)")
    if root == "cupy" and hasattr(cls, "__cuda_array_interface__") and hasattr(cls, "data"):
        return ArgKind(_cupy_pointer, 8, "cupy", "a CuPy array (device pointer)")
    if root == "numpy":
        return ArgKind(
            _refuse(f"a host {cls.__name__}; kernels take device memory or C scalars"),
            0,
            None,
            f"a host {cls.__name__}",
        )
    if hasattr(cls, "__cuda_array_interface__"):
        return ArgKind(_cai_pointer, 8, None, f"a {cls.__name__} (CUDA array interface)")
    if hasattr(cls, "__dlpack__") and hasattr(cls, "__dlpack_device__"):
        return ArgKind(_dlpack_pointer, 8, None, f"a {cls.__name__} (DLPack)")
    if root == "cuda" and cls.__name__ == "Buffer" and hasattr(cls, "handle"):
        return ArgKind(_buffer_pointer, 8, None, "a cuda.core Buffer (device pointer)")
    if root == "cuda" and cls.__name__ == "TensorMapDescriptor":
        # cuda.core passes its 128 bytes by value (a `const __grid_constant__ CUtensorMap`).
        return ArgKind(None, TENSOR_MAP_BYTES, None, "a cuda.core TensorMapDescriptor")
    return ArgKind(
        _instance_protocols(cls), 8, None, f"a {cls.__name__} (CUDA array interface or DLPack)"
    )


_ARG_KINDS: dict[type, ArgKind] = {}
# The same, flattened to (convert, size, framework) tuples for the launch path.
_ENTRIES: dict[type, tuple[Converter | None, int, str | None]] = {}


def _entry(cls: type) -> tuple[Converter | None, int, str | None]:
    kind = classify(cls)
    entry = (kind.convert, kind.size, kind.framework)
    _ENTRIES[cls] = entry
    return entry


class ArgPacker:
    """Checks and converts one kernel's arguments; built once per kernel.

    param_sizes are the kernel's parameter sizes in bytes from the driver, or None when the
    driver cannot report them (then only each argument's own type is checked).
    """

    __slots__ = ("_device", "_kernel", "_sizes")

    def __init__(self, kernel: str, device: int, param_sizes: Sequence[int] | None) -> None:
        self._kernel = kernel
        self._device = device
        self._sizes = tuple(param_sizes) if param_sizes is not None else None

    @property
    def param_sizes(self) -> tuple[int, ...] | None:
        """Return the parameter sizes in bytes, or None when unknown."""
        return self._sizes

    def steps(self, args: Sequence[Any]) -> tuple[Converter | None, ...]:
        """Return each argument's converter (None: passed as is), for _launcher.

        Call it after pack() accepted args.
        """
        return tuple(_ENTRIES[type(arg)][0] for arg in args)

    def pack(self, args: Sequence[Any]) -> tuple[list[Any], str | None]:
        """Return (values for cuda.core's launch, the array framework seen first or None).

        Raises TypeError or ValueError, naming the argument and the kernel, for anything
        that cannot be passed.
        """
        if type(args) is not tuple and type(args) is not list:
            raise TypeError(
                f"args of kernel {self._kernel!r} must be a tuple or list of arguments, "
                f"got {type(args).__name__}"
            )
        sizes = self._sizes
        if sizes is not None and len(args) != len(sizes):
            raise TypeError(self._count_message(len(args)))
        device = self._device
        entries = _ENTRIES
        values = []
        framework = None
        index = 0
        try:
            # The launch hot path: one dict lookup and at most one call per argument.
            for arg in args:
                entry = entries.get(type(arg))
                if entry is None:
                    entry = _entry(type(arg))
                convert, size, arg_framework = entry
                if convert is None:
                    values.append(arg)
                else:
                    value, arg_device = convert(arg)
                    if arg_device != device and arg_device >= 0:
                        raise ArgError(
                            f"on cuda:{arg_device}, but the kernel was loaded for cuda:{device}",
                            ValueError,
                        )
                    values.append(value)
                if sizes is not None and size != sizes[index]:
                    raise ArgError(self._size_message(classify(type(arg)), sizes[index]))
                if framework is None:
                    framework = arg_framework
                index += 1
        except ArgError as problem:
            raise problem.error(f"argument {index} of kernel {self._kernel!r}: {problem}") from None
        return values, framework

    def _count_message(self, given: int) -> str:
        sizes = self._sizes or ()
        listed = ", ".join(str(s) for s in sizes) or "none"
        return (
            f"kernel {self._kernel!r} takes {len(sizes)} argument"
            f"{'s' if len(sizes) != 1 else ''} (parameter sizes in bytes: {listed}) "
            f"but {given} {'were' if given != 1 else 'was'} given"
        )

    @staticmethod
    def _size_message(kind: ArgKind, param_size: int) -> str:
        if kind.size == 8 and kind.convert is _python_int:
            types = _types_of_size(param_size)
            return (
                f"the parameter is {param_size} bytes, so a Python int would be a guess; "
                f"pass an explicit C type such as {types}"
            )
        types = _types_of_size(param_size)
        return (
            f"the parameter is {param_size} bytes but {kind.description} is {kind.size} "
            f"bytes; pass a value of a {param_size}-byte type such as {types}"
        )


def _types_of_size(size: int) -> str:
    names = [f"spio.jit.{t.name}(...)" for t in C_TYPES if t.size == size]
    if size == 8:
        names.append("a device pointer")
    if size == TENSOR_MAP_BYTES:
        names.append("a cuda.core TensorMapDescriptor (a CUtensorMap parameter)")
    return " or ".join(names) if names else f"a {size}-byte struct (not supported)"
