"""fprop on a GPU against the fp32 reference, output poisoned with NaN so gaps show."""

import pytest
from gw8_cases import SHAPES, assert_close_16bit, covering_configs, uniform

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

CASES = [
    (params, config)
    for params in SHAPES
    for config in covering_configs(config_space(params), default_config(params))
]


@pytest.mark.parametrize(("params", "config"), CASES, ids=str)
def test_fprop_matches_reference(params: Conv2dGw8Params, config: FpropConfig) -> None:
    import torch

    x = uniform(params.input_shape, params, 0)
    w = uniform(params.weight_shape, params, 1)
    bias = None
    if params.has_bias:
        gen = torch.Generator("cuda").manual_seed(2)
        bias = torch.randn(params.c, device="cuda", generator=gen)
    y = torch.full(params.output_shape, float("nan"), device="cuda", dtype=x.dtype)
    conv2d_gw8_fprop(y, x, w, bias, params, config)
    torch.cuda.synchronize()
    assert not torch.isnan(y).any(), "the kernel left output elements unwritten"
    # Inputs are exact in both; depth = 8 * R * S terms per output.
    assert_close_16bit(y, fprop_reference(x, w, bias, params), params, 8 * params.r * params.s)


def test_default_kernel_uses_no_local_memory() -> None:
    params = Conv2dGw8Params.make(128, 64, 64, 64)
    for config in covering_configs(config_space(params), default_config(params)):
        attributes = get_kernel(params, config).attributes
        assert attributes.local_mem == 0, (config, attributes)
