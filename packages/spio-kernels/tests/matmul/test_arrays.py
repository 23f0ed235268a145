"""matmul's checks of the arrays it is given (CPU: they come before any device is asked for;
__cuda_array_interface__ objects and, for torch's path, host tensors stand in for GPU ones)."""

from __future__ import annotations

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
    ) -> None:
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "strides": strides,
            "data": (address, False),
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
