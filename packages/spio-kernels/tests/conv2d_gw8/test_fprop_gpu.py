"""fprop on a GPU against the fp32 reference, output poisoned with NaN so gaps show."""

import dataclasses

import pytest

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    FpropConfig,
    config_space,
    conv2d_gw8_fprop,
    default_config,
    get_kernel,
)
from spio.kernels.conv2d_gw8.reference import fprop_reference

pytestmark = pytest.mark.gpu

SHAPES = [
    Conv2dGw8Params.make(1, 8, 7, 9),
    Conv2dGw8Params.make(1, 8, 1, 1, r=1, s=1, padding=0),
    Conv2dGw8Params.make(2, 16, 5, 3, r=2, s=2, padding=(1, 0, 0, 1), has_bias=True),
    Conv2dGw8Params.make(1, 24, 11, 13, r=7, s=7, padding=3, dtype="bfloat16"),
    Conv2dGw8Params.make(3, 8, 9, 17, r=1, s=7, padding=(0, 0, 6, 0), has_bias=True),
    Conv2dGw8Params.make(1, 32, 8, 6, r=5, s=3, padding=(4, 0, 0, 2), dtype="bfloat16"),
    Conv2dGw8Params.make(2, 16, 6, 33, r=4, s=6, padding=(1, 2, 5, 0)),
    Conv2dGw8Params.make(1, 64, 19, 35, has_bias=True),
    Conv2dGw8Params.make(2, 128, 15, 15, r=3, s=3, padding=(0, 2, 2, 0), dtype="bfloat16"),
    Conv2dGw8Params.make(128, 64, 64, 64),
]

#: Shapes whose space is larger than this run a covering subset (every value of every field).
MAX_CONFIGS = 48


def _configs(params: Conv2dGw8Params) -> list[FpropConfig]:
    space = config_space(params)
    if len(space) <= MAX_CONFIGS:
        return space
    chosen = [default_config(params)]
    for field in dataclasses.fields(FpropConfig):
        for value in sorted({getattr(c, field.name) for c in space}):
            if not any(getattr(c, field.name) == value for c in chosen):
                chosen.append(next(c for c in space if getattr(c, field.name) == value))
    return chosen


CASES = [(params, config) for params in SHAPES for config in _configs(params)]


def _inputs(params: Conv2dGw8Params):  # type: ignore[no-untyped-def]
    import torch

    dtype = getattr(torch, params.dtype)
    gen = torch.Generator(device="cuda").manual_seed(params.n * 1000 + params.h + params.r)
    x = torch.rand(params.input_shape, device="cuda", generator=gen) * 2 - 1
    w = torch.rand(params.weight_shape, device="cuda", generator=gen) * 2 - 1
    bias = torch.randn(params.c, device="cuda", generator=gen) if params.has_bias else None
    return x.to(dtype), w.to(dtype), bias


@pytest.mark.parametrize(("params", "config"), CASES, ids=str)
def test_fprop_matches_reference(params: Conv2dGw8Params, config: FpropConfig) -> None:
    import torch

    x, w, bias = _inputs(params)
    y = torch.full(params.output_shape, float("nan"), device="cuda", dtype=x.dtype)
    conv2d_gw8_fprop(y, x, w, bias, params, config)
    torch.cuda.synchronize()
    assert not torch.isnan(y).any(), "the kernel left output elements unwritten"
    expected = fprop_reference(x, w, bias, params)
    # Inputs are exact in both; the error is the final rounding to 16 bits, plus f32
    # accumulation over depth = 8 * R * S terms of magnitude <= 1.
    depth = 8 * params.r * params.s
    eps = 2.0**-8 if params.dtype == "bfloat16" else 2.0**-11
    torch.testing.assert_close(
        y.float(), expected, rtol=2 * eps, atol=2 * eps * depth**0.5 + depth * 2.0**-20
    )


def test_default_kernel_uses_no_local_memory() -> None:
    params = Conv2dGw8Params.make(128, 64, 64, 64)
    for config in _configs(params):
        attributes = get_kernel(params, config).attributes
        assert attributes.local_mem == 0, (config, attributes)
