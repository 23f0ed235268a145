"""The specs' public entries name a wrong argument instead of failing inside, or answering
for a config that cannot run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    FpropConfig,
    WgradConfig,
    config_space,
    default_config,
    dgrad_spec,
    generate_types,
    launch_geometry,
    weights_from_torch_layout,
    wgrad_heuristic,
    wgrad_spec,
)

PARAMS = Conv2dGw8Params.make(2, 16, 6, 6)


@pytest.mark.parametrize(
    "entry",
    [
        lambda p: config_space(p),
        lambda p: default_config(p),
        lambda p: generate_types(p, FpropConfig()),
        lambda p: launch_geometry(p, FpropConfig()),
        lambda p: dgrad_spec.default_config(p),
        lambda p: wgrad_spec.config_space(p),
        lambda p: wgrad_spec.launch_geometry(p, WgradConfig()),
        lambda p: wgrad_heuristic.default_config(p),
    ],
)
@pytest.mark.parametrize("params", [None, (2, 16, 6, 6), "2x16x6x6"])
def test_params_of_another_type_are_named(entry: Callable[[Any], Any], params: object) -> None:
    with pytest.raises(TypeError, match="params must be a Conv2dGw8Params, got"):
        entry(params)


def test_launch_geometry_refuses_a_config_that_cannot_run() -> None:
    # Two groups cannot be tiled four a block: the grid would be empty.
    with pytest.raises(ValueError, match="block_g"):
        launch_geometry(PARAMS, FpropConfig(block_g=4, warp_g=2))
    with pytest.raises(TypeError, match="config must be an FpropConfig, got WgradConfig"):
        launch_geometry(PARAMS, WgradConfig())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="config must be a WgradConfig, got FpropConfig"):
        wgrad_spec.launch_geometry(PARAMS, FpropConfig())  # type: ignore[arg-type]


def test_launch_geometry_of_a_config_that_runs() -> None:
    config = default_config(PARAMS)
    geometry = launch_geometry(PARAMS, config)
    assert geometry.grid >= 1
    assert geometry.block == config.threads


@pytest.mark.parametrize(
    "heuristic", [default_config, dgrad_spec.default_config, wgrad_heuristic.default_config]
)
@pytest.mark.parametrize(
    ("sm_count", "error"),
    [(0, ValueError), (-5, ValueError), (1.5, TypeError), ("132", TypeError), (True, TypeError)],
)
def test_heuristics_refuse_an_sm_count_that_is_not_a_positive_int(
    heuristic: Callable[..., Any], sm_count: object, error: type[Exception]
) -> None:
    with pytest.raises(error, match="sm_count must be"):
        heuristic(PARAMS, sm_count)


@pytest.mark.parametrize("shape", [(3, 3, 3), (16, 4, 3, 3), (16, 3, 3, 8)])
def test_weights_of_another_shape_are_named(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match=r"weight must be K x 8 x R x S .*got shape"):
        weights_from_torch_layout(np.zeros(shape, np.float16))


def test_weights_in_torch_layout_become_spio_layout() -> None:
    weight = np.arange(16 * 8 * 3 * 2, dtype=np.float32).reshape(16, 8, 3, 2)
    converted = weights_from_torch_layout(weight)
    assert converted.shape == (16, 3, 2, 8)
    assert converted[5, 2, 1, 7] == weight[5, 7, 2, 1]
