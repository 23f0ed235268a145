"""feature_matrix: one row per config, columns named by feature_names, from the kernel specs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from spio.kernels.conv2d_gw8.params import Conv2dGw8Params
from spio.perfmodel import PASSES, GpuLimits, feature_matrix, feature_names
from spio.perfmodel._features import columns_matrix, config_feature
from spio.perfmodel._space import Columns, space_columns, space_fields

LAYER = Conv2dGw8Params.make(128, 64, 64, 64)


@pytest.mark.parametrize("pass_name", sorted(PASSES))
def test_columns_match_the_names_and_the_specs(pass_name: str) -> None:
    spec = PASSES[pass_name]
    configs = spec.config_space(LAYER)[::37]
    matrix = feature_matrix(pass_name, LAYER, configs)
    names = feature_names(pass_name)
    assert matrix.shape == (len(configs), len(names))
    assert matrix.dtype == np.float32
    column = {name: matrix[:, i] for i, name in enumerate(names)}
    for i, config in enumerate(configs):
        geometry = spec.launch_geometry(LAYER, config)
        assert column["blocks"][i] == geometry.grid
        assert column["warps_per_block"][i] == geometry.block / 32
        for name in space_fields(spec.config_type):
            assert column[name][i] == float(getattr(config, name))
    assert np.all(column["n"] == 128)
    assert np.all(column["compulsory_mb"] > 134)


@pytest.mark.parametrize("pass_name", sorted(PASSES))
def test_a_space_has_the_features_of_its_configs(pass_name: str) -> None:
    # The space's columns come from the candidates' (their properties computed once); the
    # configs' are computed afresh.
    for layer in (LAYER, Conv2dGw8Params.make(24, 256, 16, 16, r=5, s=5, padding=2)):
        configs = PASSES[pass_name].config_space(layer)
        space = columns_matrix(pass_name, layer, space_columns(pass_name, layer))
        np.testing.assert_array_equal(space, feature_matrix(pass_name, layer, configs))
        assert space.dtype == np.float32
        assert space.flags.c_contiguous


def test_placement_fields_are_no_features() -> None:
    """wgrad's segments are set for a GPU after a config is chosen (stream_config): models
    neither see them nor choose them, and configs of a space read them as their default."""
    assert "segments" not in feature_names("wgrad")
    assert "segments" not in space_fields(PASSES["wgrad"].config_type)
    configs = PASSES["wgrad"].config_space(LAYER)[:3]
    columns = Columns.of(PASSES["wgrad"].config_type, configs)
    assert columns.segments == 0
    assert [columns.config(i) for i in range(3)] == configs
    placed = dataclasses.replace(configs[0], walk_n=1, segments=4)
    with pytest.raises(ValueError, match=r"configs must be tiles, with segments = 0"):
        Columns.of(PASSES["wgrad"].config_type, [placed])


def test_waves_follow_the_gpu() -> None:
    configs = PASSES["fprop"].config_space(LAYER)[:5]
    names = feature_names("fprop")
    waves = names.index("waves")
    big = feature_matrix("fprop", LAYER, configs, GpuLimits(sm_count=132))[:, waves]
    small = feature_matrix("fprop", LAYER, configs, GpuLimits(sm_count=66))[:, waves]
    np.testing.assert_allclose(small, 2 * big, rtol=1e-6)


def test_no_configs_give_an_empty_matrix() -> None:
    assert feature_matrix("wgrad", LAYER, []).shape == (0, len(feature_names("wgrad")))


def test_unknown_pass_is_named() -> None:
    with pytest.raises(ValueError, match="pass must be one of"):
        feature_names("bprop")


def test_flag_columns_come_last_in_their_fixed_order_with_their_values() -> None:
    configs = PASSES["wgrad"].config_space(LAYER)[:5]
    plain = feature_matrix("wgrad", LAYER, configs)
    # Given in either order, the flags take FLAG_FEATURES' order after the pass's features.
    flagged = feature_matrix("wgrad", LAYER, configs, flags={"other_gpu": 0.0, "launched": 1.0})
    names = feature_names("wgrad", ["other_gpu", "launched"])
    assert names == (*feature_names("wgrad"), "launched", "other_gpu")
    assert flagged.shape == (5, len(names))
    np.testing.assert_array_equal(flagged[:, :-2], plain)
    assert flagged[:, -2].tolist() == [1.0] * 5
    assert flagged[:, -1].tolist() == [0.0] * 5
    with pytest.raises(ValueError, match=r"flags must be among .*, got \['tuned'\]"):
        feature_names("wgrad", ["tuned"])


def test_config_feature_is_the_configs_column_of_its_feature_row() -> None:
    from spio.kernels.conv2d_gw8 import fprop_spec

    layer = Conv2dGw8Params.make(96, 128, 32, 32)
    config = fprop_spec.default_config(layer, 132)
    names = feature_names("fprop")
    row = feature_matrix("fprop", layer, [config], GpuLimits())[0]
    for name in ("waves", "blocks", "blocks_per_sm"):
        assert config_feature("fprop", layer, config, name, GpuLimits()) == row[names.index(name)]
    # 384 blocks of four warps, 6 an SM by shared memory: 384 / 792 waves on 132 SMs.
    assert config_feature("fprop", layer, config, "waves", GpuLimits()) == pytest.approx(384 / 792)
    with pytest.raises(ValueError, match=r"name must be one of .* got 'wave'"):
        config_feature("fprop", layer, config, "wave", GpuLimits())


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"sm_count": 0}, ValueError, "GpuLimits.sm_count must be >= 1, got 0"),
        ({"sm_count": -5}, ValueError, "GpuLimits.sm_count must be >= 1, got -5"),
        ({"max_threads_per_sm": 0}, ValueError, "max_threads_per_sm must be >= 1, got 0"),
        ({"reserved_shared_per_block": -1}, ValueError, "must be >= 0, got -1"),
        ({"sm_count": 13.5}, TypeError, r"sm_count must be an int, got 13\.5 \(float\)"),
        ({"sm_count": True}, TypeError, "sm_count must be an int, got True"),
        ({"tma": 1}, TypeError, "GpuLimits.tma must be a bool, got 1"),
    ],
)
def test_gpu_limits_out_of_range_are_refused(
    fields: dict[str, object], error: type[Exception], message: str
) -> None:
    """Regression (B2): 0 SMs divided by zero in the waves and reached XGBoost as inf."""
    with pytest.raises(error, match=message):
        GpuLimits(**fields)  # type: ignore[arg-type]
    assert GpuLimits(reserved_shared_per_block=0).reserved_shared_per_block == 0
