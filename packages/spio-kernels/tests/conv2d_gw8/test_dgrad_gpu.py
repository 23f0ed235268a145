"""dgrad on a GPU against the fp32 reference (autograd), grad_x poisoned with NaN."""

import dataclasses

import pytest
from gw8_cases import (
    GROUP_COUNT_SHAPES,
    PAIRED_SHAPES,
    SEGMENT_SHAPES,
    SHAPES,
    STEADY_WALK_CASES,
    assert_close_16bit,
    covering_configs,
    group_count_configs,
    paired_configs,
    segment_configs,
    uniform,
)

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig, conv2d_gw8_dgrad, dgrad_spec
from spio.kernels.conv2d_gw8.dgrad import get_dgrad_kernel
from spio.kernels.conv2d_gw8.reference import dgrad_reference

pytestmark = pytest.mark.gpu

CASES = (
    [
        (params, config)
        for params in SHAPES
        for config in covering_configs(
            dgrad_spec.config_space(params), dgrad_spec.default_config(params)
        )
    ]
    + [
        # Paired images (block_q = 8: 8 columns of each of two images per block). dgrad has no
        # bias.
        (dataclasses.replace(params, has_bias=False), config)
        for params in PAIRED_SHAPES
        for config in paired_configs(
            dgrad_spec.config_space(dataclasses.replace(params, has_bias=False))
        )
    ]
    + [
        # Walks of segments of the default's tile (the kernel writes the layer's input rows).
        (layer, config)
        for layer in (dataclasses.replace(params, has_bias=False) for params in SEGMENT_SHAPES)
        for config in segment_configs(dgrad_spec.default_config(layer), layer.n * layer.h)
    ]
    + [
        # Groups per block that are not a power of two.
        (layer, config)
        for layer in (dataclasses.replace(params, has_bias=False) for params in GROUP_COUNT_SHAPES)
        for config in group_count_configs(
            layer, dgrad_spec.config_space(layer), dgrad_spec.check_config
        )
    ]
    # Walks with steady groups of rows (filters of 5 rows or more).
    + [
        (dataclasses.replace(params, has_bias=False), FpropConfig(**fields))
        for params, fields in STEADY_WALK_CASES
    ]
)


@pytest.mark.parametrize(("params", "config"), CASES, ids=str)
def test_dgrad_matches_reference(params: Conv2dGw8Params, config: FpropConfig) -> None:
    import torch

    grad_y = uniform(params.output_shape, params, 3)
    w = uniform(params.weight_shape, params, 4)
    grad_x = torch.full(params.input_shape, float("nan"), device="cuda", dtype=grad_y.dtype)
    conv2d_gw8_dgrad(grad_x, grad_y, w, params, config)
    torch.cuda.synchronize()
    assert not torch.isnan(grad_x).any(), "the kernel left grad_x elements unwritten"
    expected = dgrad_reference(grad_y, w, params)
    assert_close_16bit(grad_x, expected, params, 8 * params.r * params.s)


def test_dgrad_kernels_use_no_local_memory() -> None:
    params = Conv2dGw8Params.make(128, 64, 64, 64)
    space = dgrad_spec.config_space(params)
    for config in covering_configs(space, dgrad_spec.default_config(params)):
        attributes = get_dgrad_kernel(params, config).attributes
        assert attributes.local_mem == 0, (config, attributes)
