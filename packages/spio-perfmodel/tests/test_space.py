"""_space: the config spaces as arrays agree with the kernel specs' config_space."""

from __future__ import annotations

import random

import numpy as np
import pytest

from spio.kernels.conv2d_gw8.params import Conv2dGw8Params
from spio.perfmodel import PASSES
from spio.perfmodel._space import Columns, shared_mem, space_columns


def _layers() -> list[Conv2dGw8Params]:
    """Edge layers (tiny, odd, one image, wide channels, every filter size and padding) and a
    seeded sample."""
    layers = [
        Conv2dGw8Params.make(1, 8, 1, 1, r=1, s=1, padding=0),
        Conv2dGw8Params.make(1, 8, 3, 5, r=3, s=3, padding=1),
        Conv2dGw8Params.make(3, 24, 17, 9, r=5, s=3, padding=(2, 1)),
        Conv2dGw8Params.make(2, 40, 7, 7, r=7, s=7, padding=3),
        Conv2dGw8Params.make(5, 64, 20, 18, r=2, s=4, padding=(1, 0, 3, 0)),
        Conv2dGw8Params.make(128, 64, 64, 64),
        Conv2dGw8Params.make(512, 256, 14, 14, dtype="bfloat16"),
        Conv2dGw8Params.make(64, 1024, 16, 16),
        # Short row chunks (wgrad_spec.has_short_chunks), and a layer just too tall for them.
        Conv2dGw8Params.make(1, 64, 16, 16, r=5, s=5, padding=2),
        Conv2dGw8Params.make(4, 64, 32, 32),
        Conv2dGw8Params.make(2, 24, 6, 5, r=3, s=2, padding=(1, 0)),
        Conv2dGw8Params.make(1, 64, 4, 4),
    ]
    rng = random.Random(7)
    while len(layers) < 60:
        r, s = rng.randint(1, 7), rng.randint(1, 7)
        h, w = rng.randint(r, 80), rng.randint(s, 80)
        layers.append(
            Conv2dGw8Params.make(
                rng.choice([1, 2, 3, 8, 17, 32, 100, 256]),
                8 * rng.choice([1, 2, 3, 5, 8, 16, 32, 128]),
                h,
                w,
                r=r,
                s=s,
                padding=(rng.randint(0, r - 1), rng.randint(0, s - 1)),
            )
        )
    return layers


@pytest.mark.parametrize("pass_name", sorted(PASSES))
def test_the_array_space_is_the_spec_space_in_its_order(pass_name: str) -> None:
    spec = PASSES[pass_name]
    for params in _layers():
        columns = space_columns(pass_name, params)
        expected = spec.config_space(params)
        assert [columns.config(i) for i in range(len(columns))] == expected, params


@pytest.mark.parametrize("pass_name", sorted(PASSES))
def test_a_space_slices_its_candidates_properties_and_they_are_the_configs(
    pass_name: str,
) -> None:
    spec = PASSES[pass_name]
    properties = [
        name for name, value in vars(spec.config_type).items() if isinstance(value, property)
    ]
    assert "threads" in properties
    for params in _layers()[:12]:
        columns = space_columns(pass_name, params)
        configs = spec.config_space(params)
        for name in properties:
            expected = [getattr(config, name) for config in configs]
            assert getattr(columns, name).tolist() == expected, (params, name)


@pytest.mark.parametrize("pass_name", sorted(PASSES))
def test_shared_memory_on_columns_is_the_specs(pass_name: str) -> None:
    spec = PASSES[pass_name]
    params = Conv2dGw8Params.make(16, 64, 30, 30, r=5, s=5, padding=2)
    configs = spec.config_space(params)
    columns = Columns.of(spec.config_type, configs)
    expected = [spec.launch_geometry(params, config).shared_mem for config in configs]
    np.testing.assert_array_equal(shared_mem(pass_name, params, columns), expected)
    assert columns.threads.tolist() == [config.threads for config in configs]


@pytest.mark.parametrize("pass_name", sorted(PASSES))
def test_index_of_finds_each_config_and_nothing_else(pass_name: str) -> None:
    spec = PASSES[pass_name]
    params = Conv2dGw8Params.make(16, 64, 30, 30, r=5, s=5, padding=2)
    columns = space_columns(pass_name, params)
    for i in (0, len(columns) // 2, len(columns) - 1):
        assert columns.index_of(columns.config(i)) == i
    assert columns.index_of(spec.default_config(params, 132)) is not None
    # Images 8 wide have tiles of two images each; images 30 wide have none.
    narrow = spec.config_space(Conv2dGw8Params.make(16, 64, 8, 8, r=5, s=5, padding=2))
    outside = [config for config in narrow if config.block_q == 8]
    assert outside
    assert all(columns.index_of(config) is None for config in outside)
    assert columns.index_of("not a config") is None
