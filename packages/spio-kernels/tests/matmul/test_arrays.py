"""matmul's checks of the arrays it is given (CPU: they come before any device is asked for;
__cuda_array_interface__ objects and, for torch's path, host tensors stand in for GPU ones)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from spio.kernels.matmul import MatmulParams, matmul

PARAMS = MatmulParams(4, 16, 8)  # A 4 x 8, B 8 x 16, C 4 x 16


class _Array:
    """A device array as __cuda_array_interface__ describes it (never dereferenced)."""

    def __init__(
        self,
        shape: tuple[int, ...],
        typestr: str = "<f2",
        strides: Any = None,
        address: int = 0x10000,
        read_only: bool = False,
    ) -> None:
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "strides": strides,
            "data": (address, read_only),
            "version": 3,
        }


def _call(**changed: Any) -> None:
    arrays = {
        "c": _Array(PARAMS.c_shape),
        "a": _Array(PARAMS.a_shape),
        "b": _Array(PARAMS.b_shape),
        **changed,
    }
    matmul(arrays["c"], arrays["a"], arrays["b"], changed.get("params", PARAMS))


@pytest.mark.parametrize(
    ("changed", "message"),
    [
        ({"a": _Array((8, 4))}, r"a must be a dense row-major 4 x 8 matrix .* got shape \(8, 4\)"),
        (
            {"b": _Array((8, 16), strides=(2, 16))},
            r"b must be a dense row-major 8 x 16 matrix .* with strides \(1, 8\)",
        ),
        ({"c": _Array((4, 16), "<f4")}, "c must hold float16 values, got float32"),
        ({"a": _Array((4, 8), "<i4")}, "a must hold float16 values, got 4-byte elements"),
        ({"b": _Array((8, 16), address=0x10008)}, "b must start on a 16-byte boundary"),
        ({"c": 0x10004}, r"c must start on a 16-byte boundary .* got address 0x10004"),
        ({"params": (4, 16, 8)}, "params must be a MatmulParams, got tuple"),
    ],
)
def test_each_bad_array_is_named_before_launch(changed: dict[str, Any], message: str) -> None:
    error = TypeError if "params" in changed else ValueError
    with pytest.raises(error, match=message):
        _call(**changed)


def test_an_nk_b_is_n_x_k() -> None:
    params = MatmulParams(4, 16, 8, b_layout="nk")
    with pytest.raises(ValueError, match=r"b must be a dense row-major 16 x 8 matrix"):
        matmul(_Array((4, 16)), _Array((4, 8)), _Array((8, 16)), params)


def test_torch_tensors_off_the_gpu_and_sliced_views_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    torch = pytest.importorskip("torch")
    from spio.kernels import _array_info

    a = torch.zeros(PARAMS.a_shape, dtype=torch.float16)
    with pytest.raises(ValueError, match="a must be on a CUDA device, got a tensor on cpu"):
        _call(a=a)
    monkeypatch.setattr(_array_info, "on_cuda", lambda tensor: True)
    wide = torch.zeros(4, 16, dtype=torch.float16)
    with pytest.raises(ValueError, match=r"got shape \(4, 8\) with strides \(16, 1\)"):
        _call(a=wide[:, :8])
    with pytest.raises(ValueError, match="a must hold float16 values, got bfloat16"):
        _call(a=a.bfloat16())


def test_the_bias_is_checked_and_given_exactly_where_params_ask_for_one() -> None:
    biased = MatmulParams(4, 16, 8, bias=True)
    arrays = (_Array(PARAMS.c_shape), _Array(PARAMS.a_shape), _Array(PARAMS.b_shape))
    with pytest.raises(ValueError, match=r"params\.bias is True: pass bias, a vector of"):
        matmul(*arrays, biased)
    with pytest.raises(ValueError, match=r"bias was given, but params\.bias is False"):
        matmul(*arrays, PARAMS, bias=_Array((16,)))
    for bias, message in (
        (_Array((8,)), r"bias must be a dense vector of 16 elements .* got shape \(8,\)"),
        (_Array((16,), strides=(4,)), r"bias must be a dense vector .* with strides \(2,\)"),
        (_Array((16,), "<f4"), "bias must hold float16 values, got float32"),
        (_Array((16,), address=0x10002), "bias must start on a 4-byte boundary"),
        (0x10006, r"bias must start on a 4-byte boundary .* got address 0x10006"),
    ):
        with pytest.raises(ValueError, match=message):
            matmul(*arrays, biased, bias=bias)


@pytest.mark.parametrize(
    ("changed", "shown"),
    [
        ({"a": None}, "None"),
        ({"b": [[0.0] * 16] * 8}, "a list"),
        ({"c": "c"}, "a str ('c')"),
        ({"a": 65536.0}, "a float (65536.0)"),
        ({"b": False}, "a bool (False)"),
    ],
)
def test_an_argument_that_is_no_array_is_a_type_error_before_any_compile(
    changed: dict[str, Any], shown: str
) -> None:
    """Regression: these passed the checks and failed only at the launch, after compiling, as
    "argument 1 of kernel ..." (a bool even passed the alignment check as no pointer)."""
    (name,) = changed
    with pytest.raises(
        TypeError, match=rf"{name} must be a device array .* got {re.escape(shown)}"
    ):
        _call(**changed)


def test_a_host_array_is_a_type_error_naming_it() -> None:
    np = pytest.importorskip("numpy")
    with pytest.raises(TypeError, match=r"a must be .* got a numpy\.ndarray in host memory"):
        _call(a=np.zeros(PARAMS.a_shape, dtype=np.float16))
    biased = MatmulParams(4, 16, 8, bias=True)
    arrays = (_Array(PARAMS.c_shape), _Array(PARAMS.a_shape), _Array(PARAMS.b_shape))
    with pytest.raises(TypeError, match="bias must be a device array"):
        matmul(*arrays, biased, bias=np.zeros(16, dtype=np.float16))


def test_c_marked_read_only_is_refused_and_inputs_may_be() -> None:
    """Regression: a read-only C (data=(ptr, True)) was written anyway."""
    import spio.jit

    with pytest.raises(ValueError, match=r"c is written by the kernel, but .* marks it read-only"):
        _call(c=_Array(PARAMS.c_shape, read_only=True))
    if spio.jit.device_count() > 0:
        return  # the stand-in arrays point nowhere: only where no GPU would launch them
    with pytest.raises(ValueError, match="does not exist; this process sees no CUDA device"):
        _call(a=_Array(PARAMS.a_shape, read_only=True), b=_Array(PARAMS.b_shape, read_only=True))


def test_strides_that_split_an_element_are_refused() -> None:
    """Regression: byte strides (17, 2) of a 2-byte matrix were read as the dense (8, 1)."""
    with pytest.raises(ValueError, match=r"a must have byte strides that are multiples"):
        _call(a=_Array(PARAMS.a_shape, strides=(17, 2)))
