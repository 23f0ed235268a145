"""Kernel arguments: the C scalar vocabulary and the checks made before a launch."""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest

import spio.jit as jit
from spio.jit import _args
from spio.jit._args import ArgPacker


def test_c_types_make_numpy_scalars_of_their_size() -> None:
    for ctype in (jit.int8, jit.int16, jit.int32, jit.int64, jit.uint8, jit.uint16):
        value = ctype(5)
        assert isinstance(value, np.generic)
        assert value.itemsize == ctype.size
        assert int(value) == 5
    assert isinstance(jit.float32(0.5), np.float32)
    assert isinstance(jit.float64(0.5), np.float64)
    assert isinstance(jit.float16(0.5), np.float16)
    assert jit.bool_(1) == np.True_
    assert repr(jit.int32) == "spio.jit.int32"


def test_integer_types_refuse_floats_and_overflow() -> None:
    with pytest.raises(TypeError, match="int32 takes an integer"):
        jit.int32(1.5)
    with pytest.raises(ValueError, match="does not fit in int8"):
        jit.int8(300)
    with pytest.raises(ValueError, match="does not fit in uint32"):
        jit.uint32(-1)
    assert int(jit.uint64(2**64 - 1)) == 2**64 - 1


@pytest.mark.parametrize(
    ("value", "bits"),
    [
        (1.0, 0x3F80),
        (-2.0, 0xC000),
        (0.0, 0x0000),
        (1.0 + 2**-8, 0x3F80),  # halfway, rounds to even (down)
        (1.0 + 3 * 2**-8, 0x3F82),  # halfway, rounds to even (up)
        (float("inf"), 0x7F80),
        (float("nan"), 0x7FC0),
    ],
)
def test_bfloat16_is_the_rounded_bit_pattern(value: float, bits: int) -> None:
    result = jit.bfloat16(value)
    assert isinstance(result, np.uint16)
    assert int(result) == bits


def _packer(*sizes: int, device: int = 0) -> ArgPacker:
    return ArgPacker("saxpy", device, sizes)


def test_typed_scalars_and_pointers_pass() -> None:
    values, framework = _packer(4, 8, 8, 4, 2, 1).pack(
        (jit.float32(2.0), 0x7000, 2**64 - 1, np.int32(3), jit.bfloat16(1.0), True)
    )
    assert framework is None
    assert isinstance(values[0], np.float32)
    assert values[1] == 0x7000
    assert values[2] == -1  # same 64 bits, as the signed value cuda.core takes
    assert isinstance(values[3], np.int32)
    assert isinstance(values[5], np.bool_)


def test_ctypes_scalars_pass() -> None:
    values, _ = _packer(4, 8).pack([ctypes.c_int32(1), ctypes.c_double(2.0)])
    assert isinstance(values[0], ctypes.c_int32)


def test_unusual_numpy_types_become_the_canonical_ones() -> None:
    values, _ = _packer(8).pack((np.longlong(7),))
    assert type(values[0]) is np.int64
    assert values[0] == 7


def test_wrong_count_names_the_kernel_and_sizes() -> None:
    with pytest.raises(
        TypeError,
        match=r"takes 4 arguments \(parameter sizes in bytes: 4, 8, 8, 4\) but 3 were given",
    ):
        _packer(4, 8, 8, 4).pack((jit.float32(1), 0, 0))


def test_python_float_is_refused_with_a_hint() -> None:
    with pytest.raises(TypeError, match=r"argument 0 of kernel 'saxpy': a Python float"):
        _packer(4).pack((2.0,))


def test_python_int_for_a_narrow_parameter_is_refused() -> None:
    with pytest.raises(TypeError, match=r"argument 1 .* 4 bytes, so a Python int would be a guess"):
        _packer(8, 4).pack((0, 5))


def test_size_mismatch_says_which_types_fit() -> None:
    with pytest.raises(TypeError, match=r"argument 0 .* parameter is 8 bytes but numpy.int32"):
        _packer(8).pack((np.int32(1),))


def test_tensor_maps_pass_by_value_as_128_bytes() -> None:
    """A cuda.core TensorMapDescriptor goes to cuda.core as it is, for a 128-byte parameter
    (`const __grid_constant__ CUtensorMap`); the GPU tier launches with one (spio-dims'
    test_arch: TMA loads and stores)."""
    tensor_map_type = pytest.importorskip("cuda.core").TensorMapDescriptor
    kind = _args.classify(tensor_map_type)
    assert (kind.convert, kind.size, kind.framework) == (None, 128, None)
    assert "TensorMapDescriptor" in kind.description


def test_a_pointer_for_a_tensor_map_parameter_names_the_tensor_map() -> None:
    with pytest.raises(TypeError, match=r"parameter is 128 bytes .* TensorMapDescriptor"):
        _packer(128).pack((np.int64(0),))


def test_int_out_of_64_bits_is_refused() -> None:
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        _packer(8).pack((2**64,))


def test_host_arrays_and_unknown_objects_are_refused() -> None:
    with pytest.raises(TypeError, match="a host ndarray"):
        _packer(8).pack((np.zeros(3),))
    with pytest.raises(TypeError, match="neither device memory"):
        _packer(8).pack((object(),))


def test_args_must_be_a_tuple_or_list() -> None:
    with pytest.raises(TypeError, match="must be a tuple or list"):
        _packer(8).pack(np.zeros(1))  # type: ignore[arg-type]


def test_cpu_torch_tensor_is_refused() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match=r"argument 0 .* a tensor on cpu; kernels take CUDA"):
        _packer(8).pack((torch.zeros(3),))


def _fake_type(module: str, name: str, **attrs: Any) -> type:
    return type(name, (), {"__module__": module, **attrs})


def test_torch_like_tensors_pass_as_pointers_and_set_the_framework() -> None:
    tensor_type = _fake_type(
        "torch.fake", "FakeTensor", data_ptr=lambda self: 0x1000, get_device=lambda self: 0
    )
    values, framework = _packer(8, 8).pack((tensor_type(), tensor_type()))
    assert values == [0x1000, 0x1000]
    assert framework == "torch"


def test_argument_on_another_device_is_refused_before_launch() -> None:
    tensor_type = _fake_type(
        "torch.fake", "FakeTensor1", data_ptr=lambda self: 0x1000, get_device=lambda self: 1
    )
    with pytest.raises(ValueError, match=r"argument 0 .* on cuda:1, but the kernel .* cuda:0"):
        _packer(8).pack((tensor_type(),))


def test_cuda_array_interface_objects_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_args, "_pointer_device", lambda pointer: 0)
    array_type = _fake_type(
        "numba.fake",
        "DeviceArray",
        __cuda_array_interface__=property(lambda self: {"data": (0x2000, False)}),
    )
    values, framework = _packer(8).pack((array_type(),))
    assert values == [0x2000]
    assert framework is None
    monkeypatch.setattr(_args, "_pointer_device", lambda pointer: 3)
    with pytest.raises(ValueError, match="on cuda:3"):
        _packer(8).pack((array_type(),))


def test_cupy_like_arrays_pass_and_set_the_framework() -> None:
    memory = type("Memory", (), {"ptr": 0x3000, "device_id": 0})()
    array_type = _fake_type(
        "cupy._core.core",
        "ndarray",
        __cuda_array_interface__={},
        data=property(lambda self: memory),
    )
    values, framework = _packer(8).pack((array_type(),))
    assert values == [0x3000]
    assert framework == "cupy"


def test_dlpack_on_the_host_is_refused() -> None:
    array_type = _fake_type(
        "somelib",
        "HostArray",
        __dlpack__=lambda self, **kwargs: None,
        __dlpack_device__=lambda self: (1, 0),
    )
    with pytest.raises(TypeError, match="DLPack array on device type 1"):
        _packer(8).pack((array_type(),))


def test_without_parameter_info_each_argument_is_still_checked() -> None:
    packer = ArgPacker("k", 0, None)
    values, _ = packer.pack((0x10, jit.int32(1), jit.float16(1.0)))
    assert len(values) == 3
    with pytest.raises(TypeError, match="Python float"):
        packer.pack((1.0,))


class _InstanceCudaArray:
    """Like Numba's device arrays: __cuda_array_interface__ is set on the instance."""

    def __init__(self, pointer: int) -> None:
        self.__cuda_array_interface__ = {"data": (pointer, False), "shape": (4,), "version": 3}


def test_cuda_array_interface_set_on_the_instance_is_a_pointer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Regression: the type was classified without looking at the instance, so such arrays
    # were refused as "neither device memory ... nor a C scalar".
    monkeypatch.setattr(_args, "_pointer_device", lambda pointer: 0)
    values, framework = _packer(4, 8, 8).pack(
        (jit.float32(2.0), _InstanceCudaArray(0x4000), _InstanceCudaArray(0x5000))
    )
    assert values[1:] == [0x4000, 0x5000]
    assert framework is None
    monkeypatch.setattr(_args, "_pointer_device", lambda pointer: 2)
    with pytest.raises(ValueError, match=r"argument 0 .* on cuda:2"):
        _packer(8).pack((_InstanceCudaArray(0x4000),))


def test_an_instance_of_the_same_type_without_the_interface_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_args, "_pointer_device", lambda pointer: 0)

    class Wrapper:
        pass

    wrapped = Wrapper()
    wrapped.__cuda_array_interface__ = {"data": (0x4000, False)}  # type: ignore[attr-defined]
    _packer(8).pack((wrapped,))
    with pytest.raises(TypeError, match=r"argument 0 .*Wrapper, which is neither device memory"):
        _packer(8).pack((Wrapper(),))


def test_numpy_float64_is_not_refused_as_a_python_float() -> None:
    # Regression: numpy.float64 subclasses float, and the Python float rule caught it.
    values, _ = _packer(8, 8).pack((jit.float64(0.1), np.float64(0.5)))
    assert type(values[0]) is np.float64
    assert values[0] == np.float64(0.1)
    with pytest.raises(TypeError, match="a Python float"):
        _packer(8).pack((0.1,))


@pytest.mark.parametrize("ctype", _args.C_TYPES, ids=lambda ctype: ctype.name)
def test_every_c_type_passes_for_a_parameter_of_its_size(ctype: jit.CType) -> None:
    value = ctype(1)
    (packed,), _ = _packer(ctype.size).pack((value,))
    assert isinstance(packed, np.generic)
    assert packed.itemsize == ctype.size
    assert packed.tobytes() == value.tobytes()
