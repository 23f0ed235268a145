"""The matmul on a GPU against the fp32 reference, C poisoned with NaN so gaps show."""

from __future__ import annotations

from typing import Any

import pytest
from config_cover import one_per_field_value

from spio.kernels.matmul import (
    MatmulConfig,
    MatmulParams,
    WgmmaConfig,
    compile_request,
    config_space,
    default_config,
    matmul,
    matmul_launch,
)
from spio.kernels.matmul.reference import matmul_reference

pytestmark = pytest.mark.gpu

#: Shapes with whole tiles, partial tiles along every dimension, a single row, and K shorter
#: than one chunk; every A and B layout and both element types.
SHAPES = [
    MatmulParams(256, 256, 128),
    MatmulParams(200, 136, 88),
    MatmulParams(1, 64, 32),
    MatmulParams(77, 8, 8, "bfloat16"),
    MatmulParams(300, 520, 264, "bfloat16", "nk"),
    MatmulParams(129, 72, 40, "float16", "nk"),
    MatmulParams(264, 136, 88, "float16", "kn", "km"),
    MatmulParams(200, 520, 264, "bfloat16", "nk", "km"),
    MatmulParams(8, 64, 40, "float16", "nk", "km"),
    MatmulParams(64, 136, 91, "bfloat16", "kn", "km"),  # K no row's length: any K
]


WGMMA_CONFIGS = [WgmmaConfig(128, 2, 1), WgmmaConfig(128, 5), WgmmaConfig(256, 3, 4), WgmmaConfig()]

CASES: list[tuple[MatmulParams, MatmulConfig | WgmmaConfig]] = [
    (params, config)
    for params in SHAPES
    for config in one_per_field_value(config_space(params), default_config(params))
]
#: The wgmma kernel (sm_90 only) on every shape, and larger ones in every layout.
WGMMA_CASES = [
    (params, config)
    for params in [
        *SHAPES,
        MatmulParams(1000, 1032, 1096, "float16", "nk"),
        MatmulParams(520, 1000, 200, "bfloat16", "kn"),
        MatmulParams(1000, 1032, 1096, "float16", "nk", "km"),
        MatmulParams(520, 1000, 200, "bfloat16", "kn", "km"),
    ]
    for config in WGMMA_CONFIGS
]


#: A bias on shapes whose last tile runs past n (136, 520) and on whole tiles, each layout
#: and element type: the default config of each kernel and one more of the mma.sync kernel.
BIAS_SHAPES = [
    MatmulParams(200, 136, 88, bias=True),
    MatmulParams(300, 520, 264, "bfloat16", "nk", bias=True),
    MatmulParams(264, 256, 91, "bfloat16", "kn", "km", bias=True),
    MatmulParams(8, 64, 32, "float16", "nk", "km", bias=True),
]
BIAS_CASES = [
    (params, config)
    for params in BIAS_SHAPES
    for config in (default_config(params), MatmulConfig(64, 128, 32, 32, 64, 2, 1), WgmmaConfig())
    if not isinstance(config, MatmulConfig) or config in config_space(params)
]


@pytest.fixture(scope="module", autouse=True)
def _compiled() -> None:
    """Every case's kernel compiled in parallel first (spio.jit's cache then serves them)."""
    import spio.jit

    arch = spio.jit.device_info(0).arch
    wgmma = WGMMA_CASES + [case for case in BIAS_CASES if isinstance(case[1], WgmmaConfig)]
    mma = CASES + [case for case in BIAS_CASES if isinstance(case[1], MatmulConfig)]
    cases = mma + (wgmma if _has_wgmma() else [])
    spio.jit.compile_many([compile_request(params, config, arch) for params, config in cases])


def _has_wgmma() -> bool:
    import spio.jit

    return bool(spio.jit.device_info(0).compute_capability == (9, 0))


def _operands(params: MatmulParams) -> tuple[Any, Any]:
    import torch

    dtype = getattr(torch, params.dtype)
    gen = torch.Generator(device="cuda").manual_seed(params.m * 7 + params.n * 3 + params.k)
    a = (torch.rand(params.a_shape, device="cuda", generator=gen) * 2 - 1).to(dtype)
    b = (torch.rand(params.b_shape, device="cuda", generator=gen) * 2 - 1).to(dtype)
    return a, b


def _assert_close(got: Any, expected: Any, params: MatmulParams) -> None:
    """A 16-bit result: its final rounding, plus f32 accumulation of k products."""
    import torch

    eps = 2.0**-8 if params.dtype == "bfloat16" else 2.0**-11
    depth = params.k
    torch.testing.assert_close(
        got.float(), expected, rtol=2 * eps, atol=2 * eps * depth**0.5 + depth * 2.0**-20
    )


@pytest.mark.parametrize(("params", "config"), CASES, ids=str)
def test_matmul_matches_reference(params: MatmulParams, config: MatmulConfig) -> None:
    import torch

    a, b = _operands(params)
    c = torch.full(params.c_shape, float("nan"), device="cuda", dtype=a.dtype)
    matmul(c, a, b, params, config)
    torch.cuda.synchronize()
    assert not torch.isnan(c).any(), "the kernel left elements of C unwritten"
    _assert_close(c, matmul_reference(a, b, params), params)


@pytest.mark.parametrize(("params", "config"), WGMMA_CASES, ids=str)
def test_wgmma_matches_reference(params: MatmulParams, config: WgmmaConfig) -> None:
    if not _has_wgmma():
        pytest.skip("the wgmma kernel runs on sm_90 only")
    test_matmul_matches_reference(params, config)  # type: ignore[arg-type]


@pytest.mark.parametrize(("params", "config"), BIAS_CASES, ids=str)
def test_bias_is_added_to_every_row(params: MatmulParams, config: Any) -> None:
    import torch

    if isinstance(config, WgmmaConfig) and not _has_wgmma():
        pytest.skip("the wgmma kernel runs on sm_90 only")
    a, b = _operands(params)
    # Large against the products, so a bias lost or misplaced by one column shows.
    bias = torch.linspace(-64, 64, params.n, device="cuda").to(a.dtype) if params.bias else None
    c = torch.full(params.c_shape, float("nan"), device="cuda", dtype=a.dtype)
    matmul(c, a, b, params, config, bias=bias)
    torch.cuda.synchronize()
    assert not torch.isnan(c).any(), "the kernel left elements of C unwritten"
    expected = matmul_reference(a, b, params, bias)
    eps = 2.0**-8 if params.dtype == "bfloat16" else 2.0**-11
    # The bias rounds with the sum, once: C's rounding of up to 64 plus the products' bound.
    torch.testing.assert_close(
        c.float(), expected, rtol=2 * eps, atol=2 * eps * params.k**0.5 + params.k * 2.0**-20
    )


def test_default_config_and_launch_callable() -> None:
    """No config: the device's default; the memoised launch callable gives the same bits."""
    import torch

    params = MatmulParams(512, 384, 256, b_layout="nk")
    a, b = _operands(params)
    c = torch.empty(params.c_shape, device="cuda", dtype=a.dtype)
    matmul(c, a, b, params)
    again = torch.empty_like(c)
    from spio.kernels.matmul import default_config_on

    matmul_launch(params, default_config_on(params))(again, a, b)
    torch.cuda.synchronize()
    assert torch.equal(c, again)
    _assert_close(c, matmul_reference(a, b, params), params)


def test_large_k_accumulates_in_float32() -> None:
    """K = 8192 with the default config: accumulation stays within the f32 bound."""
    import torch

    params = MatmulParams(256, 256, 8192)
    a, b = _operands(params)
    c = torch.empty(params.c_shape, device="cuda", dtype=a.dtype)
    matmul(c, a, b, params)
    torch.cuda.synchronize()
    _assert_close(c, matmul_reference(a, b, params), params)


def test_misaligned_view_is_refused_before_launch() -> None:
    import torch

    params = MatmulParams(16, 16, 16)
    a = torch.zeros(16 * 16 + 1, device="cuda", dtype=torch.float16)[1:].view(16, 16)
    b = torch.zeros(16, 16, device="cuda", dtype=torch.float16)
    c = torch.zeros(16, 16, device="cuda", dtype=torch.float16)
    with pytest.raises(ValueError, match="a must start on a 16-byte boundary"):
        matmul(c, a, b, params)
