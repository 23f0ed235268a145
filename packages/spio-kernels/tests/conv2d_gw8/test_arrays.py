"""The entries' checks of the arrays they are given (CPU: the checks come before any device
is asked for, and arrays are stood in for by __cuda_array_interface__ objects)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    WgradConfig,
    conv2d_gw8_dgrad,
    conv2d_gw8_fprop,
    conv2d_gw8_wgrad,
    wgrad_spec,
    wgrad_workspace_bytes,
)
from spio.kernels.conv2d_gw8._arrays import check_activation, check_weights

PARAMS = Conv2dGw8Params.make(2, 16, 6, 5)  # 3 x 3, padding 1: output 6 x 5
BF16 = Conv2dGw8Params.make(2, 16, 6, 5, dtype="bfloat16")
WGRAD = WgradConfig(block_q=16, block_g=2, warp_g=1, block_p=8, prefetch=1)


class _Array:
    """A device array as __cuda_array_interface__ describes it (never dereferenced)."""

    def __init__(
        self,
        shape: tuple[int, ...],
        typestr: str = "<f2",
        strides: Any = None,
        data: Any = (0x10000, False),
    ) -> None:
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "strides": strides,
            "data": data,
            "version": 3,
        }


def _channels_last(n: int, h: int, w: int, c: int, itemsize: int = 2) -> _Array:
    """torch's N x C x H x W view of dense NHWC memory (byte strides)."""
    strides = (h * w * c * itemsize, itemsize, w * c * itemsize, c * itemsize)
    return _Array((n, c, h, w), "<f2" if itemsize == 2 else "<f4", strides)


def _fprop_arrays(**changed: Any) -> dict[str, Any]:
    arrays = {
        "y": _Array(PARAMS.output_shape),
        "x": _Array(PARAMS.input_shape),
        "w": _Array(PARAMS.weight_shape),
        "bias": None,
    }
    return {**arrays, **changed}


def _fprop(**changed: Any) -> None:
    a = _fprop_arrays(**changed)
    conv2d_gw8_fprop(a["y"], a["x"], a["w"], a["bias"], changed.get("params", PARAMS))


def test_both_views_of_dense_memory_pass() -> None:
    check_activation("x", _Array(PARAMS.input_shape), PARAMS.input_shape, "float16")
    check_activation("x", _channels_last(2, 6, 5, 16), PARAMS.input_shape, "float16")
    # Weights: K x R x S x 8, or torch's K x 8 x R x S in channels_last memory.
    check_weights("w", _Array((16, 3, 3, 8)), PARAMS, "float16")
    check_weights("w", _Array((16, 8, 3, 3), strides=(144, 2, 48, 16)), PARAMS, "float16")
    # Sizes of 1 take any stride (torch gives them whatever stride it likes).
    one = Conv2dGw8Params.make(1, 16, 1, 5)
    check_activation("x", _Array((1, 1, 5, 16), strides=(7, 3, 32, 2)), one.input_shape, "float16")
    # A bfloat16 layer takes 2-byte containers without a float type of their own.
    check_activation("x", _Array(BF16.input_shape, "<u2"), BF16.input_shape, "bfloat16")
    # Device pointers are taken as they are.
    check_activation("x", 0x10000, PARAMS.input_shape, "float16")


@pytest.mark.parametrize(
    ("name", "array", "message"),
    [
        (
            "x",
            _Array((2, 16, 6, 5)),
            r"x must be an N x H x W x C activation: shape \(2, 6, 5, 16\)",
        ),
        ("y", _Array((2, 6, 5, 24)), r"got shape \(2, 6, 5, 24\)"),
        ("x", _Array((2, 6, 5, 16), strides=(2048, 256, 32, 2)), r"x must be .* got shape"),
        ("x", _Array(PARAMS.input_shape, "<f4"), "x must hold float16 values, got float32"),
        ("w", _Array((16, 8, 3, 3)), r"w must be the layer's K x R x S x 8 weights .*converts"),
        ("w", _Array((16, 3, 3, 8), "<i1"), "w must hold float16 values, got 1-byte elements"),
    ],
    ids=["nchw-contiguous", "channels", "strided", "dtype", "torch-weights", "weights-dtype"],
)
def test_fprop_names_the_array_that_does_not_fit(name: str, array: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _fprop(**{name: array})


def test_a_bfloat16_layer_refuses_float16_arrays() -> None:
    with pytest.raises(ValueError, match="x must hold bfloat16 values, got float16"):
        conv2d_gw8_fprop(
            _Array(BF16.output_shape, "<u2"), _Array(BF16.input_shape), _Array(BF16.weight_shape),
            None, BF16,
        )  # fmt: skip


def test_the_bias_must_fit_the_layer() -> None:
    with pytest.raises(ValueError, match=r"bias is given, but the layer has no bias"):
        _fprop(bias=_Array((16,), "<f4"))
    with_bias = Conv2dGw8Params.make(2, 16, 6, 5, has_bias=True)
    for bias, message in (
        (_Array((8,), "<f4"), r"bias must be 16 contiguous values, got shape \(8,\)"),
        (_Array((16,), "<f2"), "bias must hold float32 values, got float16"),
    ):
        with pytest.raises(ValueError, match=message):
            _fprop(bias=bias, params=with_bias)


def test_arrays_on_the_host_are_refused() -> None:
    torch = pytest.importorskip("torch")
    x = torch.zeros(PARAMS.input_shape, dtype=torch.float16)
    with pytest.raises(ValueError, match="x must be on a CUDA device, got a tensor on cpu"):
        _fprop(x=x)


def test_params_must_be_conv2d_gw8_params() -> None:
    a = _fprop_arrays()
    with pytest.raises(TypeError, match="params must be a Conv2dGw8Params, got dict"):
        conv2d_gw8_fprop(a["y"], a["x"], a["w"], None, {"n": 2})  # type: ignore[arg-type]


def test_dgrad_checks_its_own_arrays() -> None:
    with pytest.raises(ValueError, match=r"grad_x must be an N x H x W x C activation"):
        conv2d_gw8_dgrad(
            _Array((*PARAMS.output_shape[:3], 8)), _Array(PARAMS.output_shape),
            _Array(PARAMS.weight_shape), PARAMS,
        )  # fmt: skip


def test_wgrad_checks_grad_w_in_its_dtype_and_the_workspace_size() -> None:
    x, grad_y = _Array(PARAMS.input_shape), _Array(PARAMS.output_shape)
    with pytest.raises(ValueError, match="grad_w must hold float32 values, got float16"):
        conv2d_gw8_wgrad(_Array(PARAMS.weight_shape), x, grad_y, PARAMS, WGRAD)
    with pytest.raises(ValueError, match="grad_w must hold float16 values, got float32"):
        conv2d_gw8_wgrad(
            _Array(PARAMS.weight_shape, "<f4"), x, grad_y, PARAMS, WGRAD, grad_w_dtype="float16"
        )
    needed = wgrad_workspace_bytes(PARAMS, WGRAD)
    assert needed == wgrad_spec.workspace_bytes(PARAMS, WGRAD) > 0
    small = _Array((needed // 4 - 1,), "<f4")
    with pytest.raises(ValueError, match=f"workspace must hold at least {needed} bytes"):
        conv2d_gw8_wgrad(
            _Array(PARAMS.weight_shape, "<f4"), x, grad_y, PARAMS, WGRAD, workspace=small,
            grad_w_dtype="float32",
        )  # fmt: skip
    with_bias = Conv2dGw8Params.make(2, 16, 6, 5, has_bias=True)
    with pytest.raises(ValueError, match=r"grad_bias must be 16 contiguous values"):
        conv2d_gw8_wgrad(
            _Array(PARAMS.weight_shape, "<f4"), x, grad_y, with_bias, WGRAD,
            grad_bias=_Array((17,), "<f4"),
        )  # fmt: skip


def test_fitting_arrays_pass_every_entrys_checks() -> None:
    """With arrays that fit, each entry gets past its checks to the device (none here)."""
    import spio.jit

    if spio.jit.device_count() > 0:
        pytest.skip("the stand-in arrays point nowhere: only where no GPU would launch them")
    x, y = _Array(PARAMS.input_shape), _Array(PARAMS.output_shape)
    w = _Array(PARAMS.weight_shape)
    grad_w = _channels_last(16, 3, 3, 8, itemsize=4)  # torch's K x 8 x R x S view
    workspace = _Array((wgrad_workspace_bytes(PARAMS, WGRAD) // 4,), "<f4")
    for launch in (
        lambda: conv2d_gw8_fprop(y, _channels_last(2, 6, 5, 16), w, None, PARAMS),
        lambda: conv2d_gw8_dgrad(x, y, w, PARAMS),
        lambda: conv2d_gw8_wgrad(grad_w, x, y, PARAMS, WGRAD, workspace=workspace),
    ):
        with pytest.raises(ValueError, match="does not exist; this process sees no CUDA device"):
            launch()


def test_torch_tensors_are_checked_by_their_shape_strides_and_dtype(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """torch's path (host tensors standing in for CUDA ones): both views pass, with and
    without the few-call fast path; the rest is named."""
    torch = pytest.importorskip("torch")
    from spio.kernels import _array_info
    from spio.kernels.conv2d_gw8 import _arrays

    monkeypatch.setattr(_array_info, "on_cuda", lambda tensor: True)
    x = torch.zeros(PARAMS.input_shape, dtype=torch.float16)
    nchw = x.permute(0, 3, 1, 2)  # channels_last memory
    w = torch.zeros(PARAMS.weight_shape, dtype=torch.float16)
    for array in (x, nchw):
        assert _arrays._fits_as_tensor(array, PARAMS.input_shape, "float16")
        check_activation("x", array, PARAMS.input_shape, "float16")
    assert _arrays._fits_as_tensor(w.permute(0, 3, 1, 2), PARAMS.weight_shape, "float16")
    check_weights("w", w.permute(0, 3, 1, 2), PARAMS, "float16")
    refused = [
        (x.float(), "x must hold float16 values, got float32"),
        (nchw.contiguous(), r"x must be an N x H x W x C activation: .* got shape \(2, 16, 6, 5\)"),
        (x[:, :, :, :8], r"got shape \(2, 6, 5, 8\)"),
        (torch.zeros(4, 6, 5, 16, dtype=torch.float16)[::2], r"with strides \(960, 80, 16, 1\)"),
    ]
    for array, message in refused:
        assert not _arrays._fits_as_tensor(array, PARAMS.input_shape, "float16")
        with pytest.raises(ValueError, match=message):
            check_activation("x", array, PARAMS.input_shape, "float16")


def test_wgrad_names_a_config_of_another_pass() -> None:
    from spio.kernels.conv2d_gw8 import default_config

    x, grad_y = _Array(PARAMS.input_shape), _Array(PARAMS.output_shape)
    grad_w = _Array(PARAMS.weight_shape, "<f4")
    with pytest.raises(TypeError, match="config must be a WgradConfig, got FpropConfig"):
        conv2d_gw8_wgrad(grad_w, x, grad_y, PARAMS, default_config(PARAMS))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "given", "shown"),
    [
        ("x", None, "None"),
        ("y", [0.0] * 4, "a list"),
        ("w", "0x10000", "a str ('0x10000')"),
        ("x", 65536.0, "a float (65536.0)"),
        ("x", True, "a bool (True)"),
    ],
)
def test_an_argument_that_is_no_array_is_a_type_error_before_any_compile(
    name: str, given: Any, shown: str
) -> None:
    """Regression: these passed the checks (describe returned None for them) and failed only
    at the launch, after compiling, as "argument 1 of kernel ..."."""
    with pytest.raises(
        TypeError, match=rf"{name} must be a device array .* got {re.escape(shown)}"
    ):
        _fprop(**{name: given})


def test_a_host_array_is_named_as_one() -> None:
    np = pytest.importorskip("numpy")
    with pytest.raises(TypeError, match=r"x must be .* got a numpy\.ndarray in host memory"):
        _fprop(x=np.zeros(PARAMS.input_shape, dtype=np.float16))
    with pytest.raises(TypeError, match=r"x must be .* got a numpy\.uint64 \(pass a pointer as"):
        _fprop(x=np.uint64(0x10000))
    with pytest.raises(TypeError, match="grad_y must be a device array"):
        conv2d_gw8_dgrad(_Array(PARAMS.input_shape), [], _Array(PARAMS.weight_shape), PARAMS)
    with pytest.raises(TypeError, match="workspace must be a device array"):
        conv2d_gw8_wgrad(
            _Array(PARAMS.weight_shape, "<f4"), _Array(PARAMS.input_shape),
            _Array(PARAMS.output_shape), PARAMS, WGRAD, workspace=np.zeros(1 << 20),
        )  # fmt: skip


@pytest.mark.parametrize("pointer", [0, -16, 1 << 64])
def test_a_pointer_must_be_a_nonzero_64_bit_address(pointer: int) -> None:
    with pytest.raises(
        ValueError, match=f"x must be a nonzero 64-bit device address, got {pointer}"
    ):
        _fprop(x=pointer)


def test_strides_that_split_an_element_are_refused() -> None:
    """Regression: byte strides were floor-divided by the element size, so (961, 160, 32, 2)
    read as the dense (480, 80, 16, 1)."""
    misaligned = _Array(PARAMS.input_shape, strides=(961, 160, 32, 2))
    with pytest.raises(
        ValueError, match=r"x must have byte strides that are multiples of its element size "
        r"\(2 bytes\), got strides \(961, 160, 32, 2\)",
    ):  # fmt: skip
        _fprop(x=misaligned)
    # A size-1 dimension is never stepped: its stride may be anything.
    one = Conv2dGw8Params.make(1, 16, 1, 5)
    check_activation("x", _Array((1, 1, 5, 16), strides=(7, 3, 32, 2)), one.input_shape, "float16")


def test_a_written_array_marked_read_only_is_refused() -> None:
    """Regression: y marked read-only (data=(ptr, True)) was written anyway."""
    read_only = (0x10000, True)
    with pytest.raises(ValueError, match=r"y is written by the kernel, but .* marks it read-only"):
        _fprop(y=_Array(PARAMS.output_shape, data=read_only))
    with pytest.raises(ValueError, match="grad_x is written by the kernel"):
        conv2d_gw8_dgrad(
            _Array(PARAMS.input_shape, data=read_only), _Array(PARAMS.output_shape),
            _Array(PARAMS.weight_shape), PARAMS,
        )  # fmt: skip
    with pytest.raises(ValueError, match="grad_w is written by the kernel"):
        conv2d_gw8_wgrad(
            _Array(PARAMS.weight_shape, "<f4", data=read_only), _Array(PARAMS.input_shape),
            _Array(PARAMS.output_shape), PARAMS, WGRAD,
        )  # fmt: skip
    # The arrays the kernel only reads may be read-only.
    check_activation("x", _Array(PARAMS.input_shape, data=read_only), PARAMS.input_shape, "float16")
    check_weights("w", _Array(PARAMS.weight_shape, data=read_only), PARAMS, "float16")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ((0, False), r"x has a null data pointer for its 960 elements"),
        (
            (0x10001, False),
            r"x must start on a boundary of its 2-byte elements, got address 0x10001",
        ),
        (0x10000, r"x's __cuda_array_interface__ data must be \(pointer int, read-only bool\)"),
        ((-2, False), r"x's data pointer must be a 64-bit address, got -2"),
    ],
    ids=["null", "misaligned", "not-a-pair", "negative"],
)
def test_a_data_pointer_the_kernel_cannot_read_is_refused(data: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _fprop(x=_Array(PARAMS.input_shape, data=data))


class _Interface:
    """An object whose __cuda_array_interface__ is whatever the test gives."""

    def __init__(self, interface: Any) -> None:
        self.__cuda_array_interface__ = interface


#: A key _interface leaves out.
_GONE = object()


def _interface(**changed: Any) -> dict[str, Any]:
    """x's interface with `changed` keys given other values (or, as _GONE, left out)."""
    whole = {"shape": PARAMS.input_shape, "typestr": "<f2", "data": (0x10000, False)}
    return {key: value for key, value in {**whole, **changed}.items() if value is not _GONE}


@pytest.mark.parametrize(
    ("interface", "message"),
    [
        (_interface(shape=_GONE), r"x's __cuda_array_interface__ has no 'shape'"),
        (_interface(data=_GONE, typestr=_GONE), r"has no 'typestr', 'data'"),
        (_interface(typestr="f2"), r"typestr must be .* like '<f2'; got 'f2'"),
        (_interface(typestr=2), r"typestr must be .*; got 2"),
        (_interface(typestr=">f2"), r"x must hold little-endian elements, got typestr '>f2'"),
        (_interface(shape=(2, 6.0, 5, 16)), r"shape must be a tuple of ints, got \(2, 6\.0"),
        (_interface(shape=(2, -6, 5, 16)), r"shape must hold sizes >= 0"),
        (_interface(strides=(2, 2)), r"has 2 strides for its 4 dimensions"),
        (_interface(mask=_Interface({})), "x has a mask"),
        ([("shape", (1,))], "x's __cuda_array_interface__ must be a dict, got a list"),
    ],
    ids=[
        *("no-shape", "no-typestr-data", "typestr-without-order", "typestr-int", "big-endian"),
        *("float-size", "negative-size", "strides-count", "mask", "not-a-dict"),
    ],
)
def test_a_malformed_interface_is_a_value_error_naming_the_array(
    interface: Any, message: str
) -> None:
    """Regression: a missing key was a KeyError, a typestr without its byte order an int()
    ValueError that named nothing."""
    with pytest.raises(ValueError, match=message):
        _fprop(x=_Interface(interface))


class _DLPackOnly:
    """A device array that describes itself through DLPack alone (spio.jit's launch takes
    it)."""

    def __dlpack__(self, stream: Any = None) -> Any:
        raise AssertionError("the entries' checks do not read the array")

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 0)  # kDLCUDA, device 0


def test_arrays_the_launch_takes_undescribed_pass_the_checks() -> None:
    """Regression: the checks refused what spio.jit's launch takes, DLPack arrays and
    cuda.core Buffers (the entries passed them on before)."""
    from spio.kernels.conv2d_gw8._arrays import check_workspace

    buffer_type = type("Buffer", (), {"__module__": "cuda.core._memory", "handle": 0})
    check_activation("x", _DLPackOnly(), PARAMS.input_shape, "float16")
    check_weights("w", buffer_type(), PARAMS, "float16")
    check_workspace(buffer_type(), 512)
    check_workspace(0, 0)  # a null pointer where no workspace is needed
    with pytest.raises(ValueError, match="nonzero"):
        check_workspace(0, 512)


def test_a_data_pointer_may_be_any_integer_type() -> None:
    np = pytest.importorskip("numpy")
    x = _Array(PARAMS.input_shape, data=(np.uint64(0x10000), False))
    check_activation("x", x, PARAMS.input_shape, "float16")
