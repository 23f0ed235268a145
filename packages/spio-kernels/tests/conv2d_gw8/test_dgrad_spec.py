"""dgrad as fprop on converted params: the identity, the config space, NVRTC compiles."""

import pytest
from gw8_cases import covering_configs

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, dgrad_spec
from spio.kernels.conv2d_gw8 import fprop_spec as fprop
from spio.kernels.conv2d_gw8.dgrad import compile_dgrad
from spio.kernels.conv2d_gw8.reference import dgrad_reference, fprop_reference

LAYERS = [
    Conv2dGw8Params.make(2, 16, 9, 7),
    Conv2dGw8Params.make(1, 16, 6, 11, r=5, s=2, padding=(0, 4, 1, 0), has_bias=True),
    Conv2dGw8Params.make(3, 8, 5, 5, r=1, s=1, padding=0),
    Conv2dGw8Params.make(1, 24, 4, 9, r=7, s=3, padding=(6, 2, 0, 2), dtype="bfloat16"),
]


@pytest.mark.parametrize("params", LAYERS, ids=str)
def test_dgrad_is_fprop_with_transposed_rotated_weights(params: Conv2dGw8Params) -> None:
    torch = pytest.importorskip("torch")
    converted = dgrad_spec.to_fprop_params(params)
    assert (converted.h, converted.w) == (params.p, params.q)
    assert (converted.p, converted.q) == (params.h, params.w)
    assert not converted.has_bias
    gen = torch.Generator().manual_seed(params.h)
    grad_y = torch.randn(params.output_shape, generator=gen)
    w = torch.randn(params.weight_shape, generator=gen)
    # The kernel reads w[g][k][r][s][c] as tap (R-1-r, S-1-s) with k and c swapped.
    by_group = w.view(params.groups, 8, params.r, params.s, 8)
    rotated = by_group.flip(2, 3).permute(0, 4, 2, 3, 1).reshape(params.weight_shape)
    torch.testing.assert_close(
        fprop_reference(grad_y, rotated, None, converted),
        dgrad_reference(grad_y, w, params),
        rtol=1e-5,
        atol=1e-5,
    )


def test_dgrad_reference_matches_torch_grad() -> None:
    torch = pytest.importorskip("torch")
    params = LAYERS[1]
    gen = torch.Generator().manual_seed(3)
    grad_y = torch.randn(params.output_shape, generator=gen)
    w = torch.randn(params.weight_shape, generator=gen)
    padded = (
        params.h + params.pad_top + params.pad_bottom,
        params.w + params.pad_left + params.pad_right,
    )
    expected = torch.nn.grad.conv2d_input(
        (params.n, params.c, *padded),
        w.permute(0, 3, 1, 2),
        grad_y.permute(0, 3, 1, 2),
        groups=params.groups,
    )
    top, left = params.pad_top, params.pad_left
    expected = expected[:, :, top : top + params.h, left : left + params.w].permute(0, 2, 3, 1)
    torch.testing.assert_close(dgrad_reference(grad_y, w, params), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("params", LAYERS, ids=str)
def test_config_space_and_default(params: Conv2dGw8Params) -> None:
    space = dgrad_spec.config_space(params)
    assert space == fprop.config_space(dgrad_spec.to_fprop_params(params))
    assert dgrad_spec.default_config(params) in space
    for config in space[:8]:
        dgrad_spec.check_config(params, config)
        assert dgrad_spec.launch_geometry(params, config).grid >= 1


def test_generated_types_select_the_dgrad_kernel() -> None:
    params = LAYERS[0]
    config = dgrad_spec.default_config(params)
    types_h = dgrad_spec.generate_types(params, config)
    assert "constexpr bool kDgrad = true;" in types_h
    assert "#define CONV2D_GW8_KERNEL conv2d_gw8_dgrad" in types_h
    with pytest.raises(ValueError, match="dgrad has no bias"):
        fprop.generate_types(LAYERS[1], config, dgrad=True)


COMPILE_CASES = [
    (params, config)
    for params in (Conv2dGw8Params.make(4, 64, 64, 64), *LAYERS[1:])
    for config in covering_configs(
        dgrad_spec.config_space(params), dgrad_spec.default_config(params)
    )[:12]
]


@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
@pytest.mark.parametrize(("params", "config"), COMPILE_CASES, ids=str)
def test_nvrtc_compiles(params: Conv2dGw8Params, config: fprop.FpropConfig, arch: str) -> None:
    code = compile_dgrad(params, config, arch)
    assert code.arch == arch
    assert code.code
