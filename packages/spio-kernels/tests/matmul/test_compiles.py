"""The matmul compiles with NVRTC for every architecture Spio targets (no GPU needed), with
configs that cover every value of every config field and every A and B layout."""

from __future__ import annotations

import dataclasses

import pytest
from config_cover import one_per_field_value

from spio.kernels.matmul import MatmulConfig, MatmulParams, config_space, default_config
from spio.kernels.matmul.launch import compile_matmul

ARCHS = ["sm_80", "sm_86", "sm_89", "sm_90"]


def _covering(params: MatmulParams) -> list[MatmulConfig]:
    space = config_space(params, max_shared_mem=227 * 1024)
    return one_per_field_value(space, default_config(params))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("b_layout", ["kn", "nk"])
@pytest.mark.parametrize("a_layout", ["mk", "km"])
@pytest.mark.parametrize("bias", [False, True])
def test_default_compiles(arch: str, b_layout: str, a_layout: str, bias: bool) -> None:
    params = MatmulParams(1000, 520, 264, "bfloat16", b_layout, a_layout, bias)  # type: ignore[arg-type]
    code = compile_matmul(params, default_config(params), arch)
    assert code.arch == arch
    assert code.code


@pytest.mark.parametrize(
    "params",
    [
        MatmulParams(512, 512, 512),
        MatmulParams(512, 512, 512, "bfloat16", "nk"),
        MatmulParams(512, 512, 512, "float16", "kn", "km"),
    ],
    ids=str,
)
def test_every_field_value_compiles_for_sm_90(params: MatmulParams) -> None:
    configs = _covering(params)
    fields = {field.name for field in dataclasses.fields(MatmulConfig)}
    for name in fields:
        assert {getattr(c, name) for c in configs} == {
            getattr(c, name) for c in config_space(params, max_shared_mem=227 * 1024)
        }
    for config in configs:
        assert compile_matmul(params, config, "sm_90").code


def test_ptx_uses_tensor_cores_ldmatrix_and_cp_async() -> None:
    import spio.dims
    import spio.jit
    from spio.kernels.matmul.launch import compile_request

    def ptx(params: MatmulParams) -> str:
        request = compile_request(params, MatmulConfig(), "sm_90")
        code = spio.jit.compile(
            request.source,
            headers=request.headers,
            include_dirs=(spio.dims.include_dir(),),
            arch="sm_90",
            name=request.name,
            target="ptx",
        )
        return code.code.decode() if isinstance(code.code, bytes) else str(code.code)

    plain = ptx(MatmulParams(256, 256, 256, b_layout="nk"))
    for instruction in ("mma.sync.aligned.m16n8k16", "ldmatrix.sync.aligned", "cp.async.cg"):
        assert instruction in plain
    assert ".local" not in plain, "the accumulators must stay in registers"
    # 64 x 64 warp tiles, chunks of 32: per chunk 2 steps of 4 A fragments (ldmatrix .x4 each)
    # and 4 pairs of B fragments; only a K x M A's and a K x N B's take .trans.
    trans = "ldmatrix.sync.aligned.m8n8.x4.trans"
    assert trans not in plain
    assert ptx(MatmulParams(256, 256, 256, b_layout="nk", a_layout="km")).count(trans) > 0
    both = ptx(MatmulParams(256, 256, 256, a_layout="km"))
    assert both.count(trans) == 2 * ptx(MatmulParams(256, 256, 256)).count(trans)
    assert ".local" not in both
