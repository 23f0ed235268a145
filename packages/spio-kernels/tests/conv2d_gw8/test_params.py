"""Conv2dGw8Params: validation names the argument, the value and what is allowed."""

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, normalize_padding


def test_derived_sizes() -> None:
    params = Conv2dGw8Params.make(2, 64, 7, 9, r=3, s=5, padding=(0, 2, 1, 3))
    assert (params.p, params.q, params.groups) == (7 - 3 + 1 + 2, 9 - 5 + 1 + 4, 8)
    assert params.padding == (0, 2, 1, 3)
    assert params.output_shape == (2, params.p, params.q, 64)
    assert params.weight_shape == (64, 3, 5, 8)


def test_padding_forms() -> None:
    assert normalize_padding(1) == (1, 1, 1, 1)
    assert normalize_padding((1, 2)) == (1, 1, 2, 2)
    assert normalize_padding((0, 1, 2, 0)) == (0, 1, 2, 0)


def test_compulsory_bytes_fprop() -> None:
    params = Conv2dGw8Params.make(128, 64, 64, 64, has_bias=True)
    activations = 2 * 2 * 128 * 64 * 64 * 64
    assert params.compulsory_bytes() == activations + 64 * 9 * 8 * 2 + 64 * 4
    assert params.compulsory_bytes("dgrad") == activations + 64 * 9 * 8 * 2
    assert params.compulsory_bytes("wgrad") == activations + 64 * 9 * 8 * 4
    with pytest.raises(ValueError, match="pass_ must be"):
        params.compulsory_bytes("backward")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"c": 12}, "c must be a multiple of 8.*got 12"),
        ({"c": 0}, "c must be >= 1, got 0"),
        ({"n": 0}, "n must be >= 1, got 0"),
        ({"h": -3}, "h must be >= 1, got -3"),
        ({"w": 0}, "w must be >= 1, got 0"),
        ({"r": 0}, "r must be 1 to 7, got 0"),
        ({"r": 8}, "r must be 1 to 7, got 8"),
        ({"s": 9}, "s must be 1 to 7, got 9"),
        ({"padding": (3, 0, 0, 0)}, "padding top must be 0 to 2, got 3"),
        ({"padding": (0, 0, 0, -1)}, "padding right must be 0 to 2, got -1"),
        ({"dtype": "float32"}, "dtype must be one of .*got 'float32'"),
        ({"h": 2, "padding": (0, 0, 0, 0)}, "output size p x q = 0 x"),
        ({"w": 1, "s": 5, "padding": (0, 0, 1, 1)}, "output size p x q = .* x -1"),
        ({"n": 2**20, "h": 64, "w": 64, "c": 64}, "2\\*\\*31"),
    ],
)
def test_value_errors(kwargs: dict, match: str) -> None:
    base = {"n": 1, "c": 8, "h": 4, "w": 4, "r": 3, "s": 3, "padding": (1, 1, 1, 1)}
    with pytest.raises(ValueError, match=match):
        Conv2dGw8Params(**{**base, **kwargs})


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n": True}, "n must be an int, got True"),
        ({"c": 8.0}, "c must be an int, got 8.0"),
        ({"r": "3"}, "r must be an int"),
        ({"padding": [1, 1, 1, 1]}, "padding must be a tuple"),
        ({"padding": (1, 1, True, 1)}, "padding left must be an int, got True"),
        ({"has_bias": 1}, "has_bias must be a bool, got 1"),
    ],
)
def test_type_errors(kwargs: dict, match: str) -> None:
    base = {"n": 1, "c": 8, "h": 4, "w": 4, "r": 3, "s": 3, "padding": (1, 1, 1, 1)}
    with pytest.raises(TypeError, match=match):
        Conv2dGw8Params(**{**base, **kwargs})


@pytest.mark.parametrize("padding", [True, 1.0, (1, 2, 3), "1", (1, None)])
def test_make_padding_type_errors(padding: object) -> None:
    with pytest.raises(TypeError, match="padding must be"):
        Conv2dGw8Params.make(1, 8, 4, 4, padding=padding)  # type: ignore[arg-type]
