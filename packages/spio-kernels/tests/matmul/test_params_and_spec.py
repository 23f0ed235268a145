"""MatmulParams and MatmulConfig validation, the config space, the heuristic and types.h."""

from __future__ import annotations

import dataclasses

import pytest

from spio.kernels.matmul import (
    MatmulConfig,
    MatmulParams,
    config_space,
    default_config,
    generate_types,
    launch_geometry,
)
from spio.kernels.matmul.spec import PORTABLE_SHARED_MEM, grid_blocks, swizzle_cells


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"m": 0}, ValueError, "m must be >= 1, got 0"),
        ({"n": 12}, ValueError, "n must be a multiple of 8 .* got 12"),
        ({"k": 20}, ValueError, "k must be a multiple of 8 .* got 20"),
        ({"m": 2.0}, TypeError, r"m must be an int, got 2.0 \(float\)"),
        ({"k": True}, TypeError, "k must be an int, got True"),
        ({"dtype": "float32"}, ValueError, "dtype must be one of .* got 'float32'"),
        ({"b_layout": "t"}, ValueError, "b_layout must be one of .* got 't'"),
        ({"a_layout": "t"}, ValueError, r"a_layout must be one of \('mk', 'km'\).* got 't'"),
        ({"m": 12, "a_layout": "km"}, ValueError, "m must be a multiple of 8 with a_layout 'km'"),
        ({"m": 2**20, "k": 2**12}, ValueError, r"A \(1048576 x 4096\) has more than"),
        ({"bias": 1}, TypeError, r"bias must be a bool, got 1 \(int\)"),
    ],
)
def test_params_name_the_field_the_value_and_what_is_allowed(
    fields: dict[str, object], error: type[Exception], message: str
) -> None:
    values: dict[str, object] = {"m": 64, "n": 64, "k": 64, **fields}
    with pytest.raises(error, match=message):
        MatmulParams(**values)  # type: ignore[arg-type]


def test_params_shapes_flops_and_bytes() -> None:
    kn = MatmulParams(3, 16, 8)
    nk = MatmulParams(3, 16, 8, "bfloat16", "nk")
    assert (kn.a_shape, kn.b_shape, kn.c_shape) == ((3, 8), (8, 16), (3, 16))
    assert nk.b_shape == (16, 8)
    km = MatmulParams(24, 16, 8, a_layout="km")
    assert (km.a_shape, km.c_shape) == ((8, 24), (24, 16))
    assert MatmulParams(3, 16, 8).a_layout == "mk"  # any m for an M x K A
    # K is no row's length with A as K x M and B as K x N (a weight gradient over any batch).
    assert MatmulParams(24, 16, 91, a_layout="km").row_sizes == ("n", "m")
    with pytest.raises(ValueError, match="k must be a multiple of 8 with a_layout 'mk' or"):
        MatmulParams(24, 16, 91, b_layout="nk", a_layout="km")
    assert kn.flops == 2 * 3 * 16 * 8
    assert kn.compulsory_bytes == 2 * (3 * 8 + 8 * 16 + 3 * 16)
    assert not kn.bias
    assert MatmulParams(3, 16, 8, bias=True).compulsory_bytes == kn.compulsory_bytes + 2 * 16


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"block_m": 96}, ValueError, r"block_m must be one of \(32, 64, 128, 256\), got 96"),
        ({"block_k": 16}, ValueError, "block_k must be one of"),
        ({"stages": 1}, ValueError, "stages must be one of"),
        ({"group_m": 2}, ValueError, "group_m must be one of"),
        ({"warp_n": "64"}, TypeError, "warp_n must be an int, got '64'"),
        ({"block_m": 32, "warp_m": 64}, ValueError, "warp_m = 64 must divide block_m = 32"),
        (
            {"block_m": 256, "block_n": 256, "warp_m": 16, "warp_n": 64},
            ValueError,
            "warps = .* = 64 must be at most 16",
        ),
        (
            {"block_m": 256, "block_n": 256, "block_k": 64, "stages": 6},
            ValueError,
            "needs 393216 bytes of shared memory",
        ),
    ],
)
def test_config_names_the_field_the_value_and_what_is_allowed(
    fields: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        MatmulConfig(**fields)  # type: ignore[arg-type]


def test_config_derived_sizes() -> None:
    config = MatmulConfig(128, 256, 32, 64, 64, 3)
    assert (config.warps_m, config.warps_n, config.threads) == (2, 4, 256)
    assert config.acc_registers == 128
    assert config.shared_mem == 3 * (128 + 256) * 32 * 2
    # The epilogue's staged tile is larger than a shallow ring of short chunks.
    assert MatmulConfig(128, 128, 32, 64, 64, 2).shared_mem == 128 * 128 * 2


def test_space_is_valid_portable_and_sized_to_the_problem() -> None:
    params = MatmulParams(40, 72, 24)
    space = config_space(params)
    assert space
    assert len(set(space)) == len(space)
    assert all(config.shared_mem <= PORTABLE_SHARED_MEM for config in space)
    # No tile more than twice the problem (except the smallest values).
    assert max(config.block_m for config in space) == 64
    assert max(config.block_n for config in space) == 128
    assert {config.block_k for config in space} == {32}
    big = config_space(MatmulParams(4096, 4096, 4096), max_shared_mem=227 * 1024)
    assert max(config.shared_mem for config in big) > PORTABLE_SHARED_MEM


@pytest.mark.parametrize(
    ("shape", "sm_count", "tile"),
    [
        ((8192, 8192, 8192), 132, (128, 256)),
        ((1024, 1024, 4096), 132, (64, 64)),
        ((128, 128, 4096), 132, (32, 32)),
        ((4096, 2048, 1024), 132, (128, 256)),
        ((2048, 2048, 1024), 132, (128, 128)),
    ],
)
def test_default_takes_the_largest_tile_that_fills_the_sms(
    shape: tuple[int, int, int], sm_count: int, tile: tuple[int, int]
) -> None:
    params = MatmulParams(*shape)
    config = default_config(params, sm_count)
    assert (config.block_m, config.block_n) == tile
    assert config.shared_mem <= PORTABLE_SHARED_MEM
    assert config in config_space(params) or grid_blocks(params, config) < sm_count


def test_default_takes_longer_chunks_where_the_gpu_has_the_shared_memory() -> None:
    params = MatmulParams(8192, 8192, 8192)
    portable = default_config(params)
    assert (portable.block_k, portable.stages) == (32, 4)
    hopper = default_config(params, 132, 227 * 1024)
    assert (hopper.block_k, hopper.stages) == (64, 3)
    with pytest.raises(ValueError, match="no default config fits 1024 bytes"):
        default_config(params, 132, 1024)


def test_launch_geometry_covers_c() -> None:
    params = MatmulParams(300, 520, 64)
    config = MatmulConfig(128, 128, 32, 64, 64, 3)
    geometry = launch_geometry(params, config)
    assert geometry.grid == 3 * 5
    assert (geometry.block, geometry.shared_mem) == (128, config.shared_mem)


def test_types_are_deterministic_and_name_the_layout() -> None:
    config = MatmulConfig()
    kn = generate_types(MatmulParams(256, 256, 256), config)
    assert kn == generate_types(MatmulParams(256, 256, 256), config)
    assert "#define SPIO_MATMUL_B_KN 1" in kn
    assert "spio::SwizzleIndex<4, I, K8, A_SWIZZLE>" in kn
    assert "spio::SwizzleIndex<8, K, J8, B_SWIZZLE>" in kn
    nk = generate_types(MatmulParams(256, 256, 256, b_layout="nk"), config)
    assert "SPIO_MATMUL_B_KN" not in nk
    assert "spio::SwizzleIndex<4, J, K8, B_SWIZZLE>" in nk
    wide = generate_types(MatmulParams(256, 256, 256), dataclasses.replace(config, block_k=64))
    assert "spio::SwizzleIndex<8, I, K8, A_SWIZZLE>" in wide
    assert "SPIO_MATMUL_A_KM" not in kn
    # A K x M A: rows of K, in slabs of 64 columns of M, as a K x N B's.
    km = generate_types(MatmulParams(256, 256, 256, a_layout="km"), config)
    assert "#define SPIO_MATMUL_A_KM 1" in km
    assert "spio::SwizzleIndex<8, K, I8, A_SWIZZLE>" in km
    assert "struct A_SLAB : spio::Fold<I, 64, A_SLAB>" in km
    # A bias: its vector of n elements and the macro that adds it; none without.
    assert "SPIO_MATMUL_BIAS" not in kn
    assert "Bias" not in kn
    biased = generate_types(MatmulParams(256, 136, 256, "bfloat16", bias=True), config)
    assert "#define SPIO_MATMUL_BIAS 1" in biased
    assert "using Bias = spio::Tensor<const __nv_bfloat16, spio::DimInfo<J, 136, 1>>;" in biased


def test_swizzle_rows_stop_at_one_bank_line() -> None:
    assert [swizzle_cells(row_bytes) for row_bytes in (32, 64, 128, 256, 512)] == [2, 4, 8, 8, 8]


def test_types_refuse_what_is_not_a_params_or_config() -> None:
    with pytest.raises(TypeError, match="params must be a MatmulParams, got tuple"):
        generate_types((1, 2, 3), MatmulConfig())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="config must be a MatmulConfig, got dict"):
        generate_types(MatmulParams(8, 8, 8), {})  # type: ignore[arg-type]
