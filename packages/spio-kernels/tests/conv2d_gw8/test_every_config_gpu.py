"""Every config of every pass's space on the GPU tests' shape set, against the fp32 reference.

The per-pass files (test_fprop_gpu.py, test_dgrad_gpu.py, test_wgrad_gpu.py) run a covering
sample of each large space (gw8_cases.covering_configs: every value of every field), which
keeps the GPU tier short. This file runs all of them: about 9400 kernels over the shape set
(gw8_cases.SHAPES and PAIRED_SHAPES: odd sizes, R and S from 1 to 7, asymmetric padding,
bias, fp16 and bf16, N = 1, images side by side). Each test compiles its space in parallel
first (spio.jit.compile_many, through the benchmark's precompile), then runs the configs
one after another on the same inputs and collects every config that misses.

Marked slow: the GPU tier leaves it out unless asked (`python tools/gpu_tier.py --slow`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from gw8_cases import PAIRED_SHAPES, SHAPES, assert_close_16bit, uniform

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    config_space,
    conv2d_gw8_dgrad,
    conv2d_gw8_fprop,
    conv2d_gw8_wgrad,
    dgrad_spec,
    wgrad_spec,
    wgrad_workspace_bytes,
)
from spio.kernels.conv2d_gw8.bench import precompile
from spio.kernels.conv2d_gw8.reference import (
    dgrad_reference,
    fprop_reference,
    wgrad_bias_reference,
    wgrad_reference,
)

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

SHAPE_SET = SHAPES + PAIRED_SHAPES
#: Failing configs a report lists before it stops.
REPORTED = 20


def _poisoned_16bit_check(
    out: Any, run: Callable[[Any], None], expected: Any, params: Conv2dGw8Params, what: str
) -> Callable[[Any], None]:
    """A check of one config: out poisoned with NaN, run(config), then no element left
    unwritten and out close to expected (16-bit rounding, 8 * R * S terms a sum)."""
    import torch

    def check(config: Any) -> None:
        out.fill_(float("nan"))
        run(config)
        torch.cuda.synchronize()
        assert not torch.isnan(out).any(), f"{what} elements left unwritten"
        assert_close_16bit(out, expected, params, 8 * params.r * params.s)

    return check


def _fprop_checker(params: Conv2dGw8Params) -> Callable[[Any], None]:
    import torch

    x = uniform(params.input_shape, params, 0)
    w = uniform(params.weight_shape, params, 1)
    bias = None
    if params.has_bias:
        bias = torch.randn(
            params.c, device="cuda", generator=torch.Generator("cuda").manual_seed(2)
        )
    y = torch.empty(params.output_shape, device="cuda", dtype=x.dtype)
    return _poisoned_16bit_check(
        y,
        lambda config: conv2d_gw8_fprop(y, x, w, bias, params, config),
        fprop_reference(x, w, bias, params),
        params,
        "output",
    )


def _dgrad_checker(params: Conv2dGw8Params) -> Callable[[Any], None]:
    import torch

    grad_y = uniform(params.output_shape, params, 3)
    w = uniform(params.weight_shape, params, 4)
    grad_x = torch.empty(params.input_shape, device="cuda", dtype=grad_y.dtype)
    return _poisoned_16bit_check(
        grad_x,
        lambda config: conv2d_gw8_dgrad(grad_x, grad_y, w, params, config),
        dgrad_reference(grad_y, w, params),
        params,
        "grad_x",
    )


def _wgrad_checker(params: Conv2dGw8Params) -> Callable[[Any], None]:
    import torch

    x = uniform(params.input_shape, params, 5)
    grad_y = uniform(params.output_shape, params, 6)
    expected = wgrad_reference(x, grad_y, params)
    expected_bias = wgrad_bias_reference(grad_y) if params.has_bias else None
    grad_w = torch.empty(params.weight_shape, device="cuda", dtype=torch.float32)
    grad_bias = torch.empty(params.c, device="cuda") if params.has_bias else None
    # Products of 16-bit values are exact in f32; the error is f32 summation over
    # depth = n * p * q terms of magnitude <= 1, in any order.
    depth = params.n * params.p * params.q
    tolerance = {"rtol": 1e-4, "atol": 1e-6 * depth + 1e-6}

    def check(config: Any) -> None:
        grad_w.fill_(float("nan"))
        workspace = torch.full(
            (max(wgrad_workspace_bytes(params, config) // 4, 1),), float("nan"), device="cuda"
        )
        if grad_bias is not None:
            grad_bias.fill_(float("nan"))
        conv2d_gw8_wgrad(
            grad_w, x, grad_y, params, config, workspace=workspace, grad_bias=grad_bias
        )
        torch.cuda.synchronize()
        assert not torch.isnan(grad_w).any(), "weights or partial sums left unwritten"
        torch.testing.assert_close(grad_w, expected, **tolerance)
        if grad_bias is not None:
            torch.testing.assert_close(grad_bias, expected_bias, **tolerance)

    return check


#: Per pass: the layer it runs (dgrad has no bias), its config space, its checker.
PASSES: dict[str, tuple[Callable[[Conv2dGw8Params], Conv2dGw8Params], Any, Any]] = {
    "fprop": (lambda params: params, config_space, _fprop_checker),
    "dgrad": (
        lambda params: dataclasses.replace(params, has_bias=False),
        dgrad_spec.config_space,
        _dgrad_checker,
    ),
    "wgrad": (lambda params: params, wgrad_spec.config_space, _wgrad_checker),
}


@pytest.mark.parametrize("params", SHAPE_SET, ids=str)
@pytest.mark.parametrize("pass_name", list(PASSES))
def test_every_config_matches_reference(pass_name: str, params: Conv2dGw8Params) -> None:
    layer, space_of, checker = PASSES[pass_name]
    params = layer(params)
    configs = space_of(params)
    assert configs
    precompile(params, {pass_name: configs})
    check = checker(params)
    failures = []
    for config in configs:
        try:
            check(config)
        except AssertionError as error:
            failures.append(f"{config}: {str(error).splitlines()[0]}")
    listed = "\n".join(failures[:REPORTED])
    assert not failures, f"{len(failures)} of {len(configs)} configs miss:\n{listed}"
