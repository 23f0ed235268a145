"""The Hopper kernel's config, which shapes it takes, its defaults and its compiles (CPU)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from spio.kernels.matmul import (
    MatmulConfig,
    MatmulParams,
    WgmmaConfig,
    compile_request,
    default_config_for,
    wgmma_spec,
)
from spio.kernels.matmul.launch import compile_matmul

NK = MatmulParams(1000, 520, 264, "bfloat16", "nk")


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"block_n": 64}, ValueError, r"block_n must be one of \(128, 256\), got 64"),
        ({"stages": 1}, ValueError, "stages must be one of"),
        ({"group_m": 3}, ValueError, "group_m must be one of"),
        ({"stages": "4"}, TypeError, "stages must be an int, got '4'"),
        ({"stages": 5}, ValueError, "needs 245840 bytes of shared memory"),
    ],
)
def test_config_names_the_field_the_value_and_what_is_allowed(
    fields: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        WgmmaConfig(**fields)  # type: ignore[arg-type]


def test_sizes_and_space() -> None:
    config = WgmmaConfig(256, 4)
    assert (config.block_m, config.threads) == (128, 288)
    assert config.stage_bytes == (128 + 256) * 64 * 2
    assert config.shared_mem == 4 * config.stage_bytes + 4 * 16
    space = wgmma_spec.config_space()
    assert (256, 5) not in {(c.block_n, c.stages) for c in space}
    assert len(space) == len(set(space)) == (4 + 3) * 4


def test_b_s_stages_and_descriptors_follow_its_layout() -> None:
    kn = MatmulParams(64, 64, 64)
    # A K x N B arrives in slabs of 64 columns, N-major; an N x K one as rows of K.
    kn_types = wgmma_spec.generate_types(kn, WgmmaConfig())
    assert "#define SPIO_MATMUL_B_KN 1" in kn_types
    assert "constexpr unsigned kBLeadingBytes = 8192;" in kn_types
    assert "DimInfo<B_SLAB, 4," in kn_types
    nk_types = wgmma_spec.generate_types(NK, WgmmaConfig())
    assert "SPIO_MATMUL_B_KN" not in nk_types
    assert "constexpr unsigned kBLeadingBytes = 16;" in nk_types
    with pytest.raises(TypeError, match="config must be a WgmmaConfig, got MatmulConfig"):
        wgmma_spec.generate_types(NK, MatmulConfig())  # type: ignore[arg-type]


def test_a_s_stages_and_descriptors_follow_its_layout() -> None:
    # A K x M A arrives as a slab of 64 columns per consumer warpgroup, M-major.
    km_types = wgmma_spec.generate_types(MatmulParams(64, 64, 64, a_layout="km"), WgmmaConfig())
    assert "#define SPIO_MATMUL_A_KM 1" in km_types
    assert "constexpr unsigned kALeadingBytes = 8192;" in km_types
    assert "DimInfo<A_SLAB, 2," in km_types
    nk_types = wgmma_spec.generate_types(NK, WgmmaConfig())
    assert "SPIO_MATMUL_A_KM" not in nk_types
    assert "constexpr unsigned kALeadingBytes = 16;" in nk_types


def test_defaults_per_gpu() -> None:
    assert default_config_for(NK, (9, 0), 132, 227 * 1024) == WgmmaConfig(128, 4)
    large = MatmulParams(8192, 8192, 8192, b_layout="nk")
    assert default_config_for(large, (9, 0), 132, 227 * 1024) == WgmmaConfig(256, 4)
    assert default_config_for(MatmulParams(64, 64, 64), (9, 0), 132, 1) == WgmmaConfig(128, 4)
    # GPUs without wgmma take the mma.sync kernel.
    for capability in ((8, 0), (8, 6), (8, 9)):
        assert isinstance(default_config_for(large, capability, 132, 99 * 1024), MatmulConfig)


def test_types_are_deterministic() -> None:
    text = wgmma_spec.generate_types(NK, WgmmaConfig())
    assert text == wgmma_spec.generate_types(NK, WgmmaConfig())
    assert "#define SPIO_MATMUL_WGMMA_KERNEL spio_matmul_wgmma" in text
    assert "constexpr int kChunks = 5;" in text


@pytest.mark.parametrize(
    ("params", "config"),
    [
        (NK, WgmmaConfig(128, 2, 1)),
        (NK, WgmmaConfig(256, 4)),
        (dataclasses.replace(NK, a_layout="km"), WgmmaConfig(256, 4)),
        (dataclasses.replace(NK, b_layout="kn", a_layout="km"), WgmmaConfig(128, 3)),
        (dataclasses.replace(NK, bias=True), WgmmaConfig(256, 4)),
    ],
    ids=str,
)
def test_compiles_for_sm_90a_with_wgmma_and_tma(params: MatmulParams, config: WgmmaConfig) -> None:
    import spio.jit

    code = compile_matmul(params, config, "sm_90")
    assert code.arch == "sm_90a"
    request = compile_request(params, config, "sm_90")
    ptx = spio.jit.compile(
        request.source,
        headers=request.headers,
        include_dirs=request.include_dirs,
        arch=request.arch,
        name=request.name,
        target="ptx",
    ).code
    text = ptx.decode() if isinstance(ptx, bytes) else str(ptx)
    for instruction in (
        f"wgmma.mma_async.sync.aligned.m64n{config.block_n}k16.f32.bf16.bf16",
        "cp.async.bulk.tensor.2d",
        "mbarrier.try_wait",
    ):
        assert instruction in text
    assert ".local" not in text, "the accumulators must stay in registers"
    # The instructions' last immediates: transpose A (a K x M A), transpose B (a K x N B).
    transposes = {(params.a_layout == "km", params.b_layout == "kn")}
    found = re.findall(r"wgmma\.mma_async.*, p, 1, 1, (\d), (\d);", text)
    assert {(a == "1", b == "1") for a, b in found} == transposes
    # The bias: read from global memory in the epilogue only where the kernel adds one.
    assert ("ld.global.nc" in text) == params.bias


def test_gpus_without_tma_are_refused() -> None:
    with pytest.raises(ValueError, match="the wgmma kernel needs sm_90 or newer, got sm_80"):
        compile_request(NK, WgmmaConfig(), "sm_80")
