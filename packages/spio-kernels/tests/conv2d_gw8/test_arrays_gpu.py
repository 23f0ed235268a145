"""The entries' array checks with CUDA torch tensors: the two accepted views of the same
memory give the reference's result, and arrays that do not fit are named before any launch."""

import pytest
from gw8_cases import assert_close_16bit, uniform

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    conv2d_gw8_dgrad,
    conv2d_gw8_fprop,
    conv2d_gw8_wgrad,
)
from spio.kernels.conv2d_gw8.reference import fprop_reference, wgrad_reference

pytestmark = pytest.mark.gpu

PARAMS = Conv2dGw8Params.make(3, 64, 13, 11)


def test_torch_channels_last_views_give_the_same_result() -> None:
    """N x C x H x W activations and K x 8 x R x S weights in channels_last memory are the
    NHWC and K x R x S x 8 bytes the kernels read."""
    import torch

    x = uniform(PARAMS.input_shape, PARAMS, 51)
    w = uniform(PARAMS.weight_shape, PARAMS, 52)
    y = torch.full(PARAMS.output_shape, float("nan"), device="cuda", dtype=x.dtype)
    conv2d_gw8_fprop(
        y.permute(0, 3, 1, 2), x.permute(0, 3, 1, 2), w.permute(0, 3, 1, 2), None, PARAMS
    )
    torch.cuda.synchronize()
    assert not torch.isnan(y).any()
    assert_close_16bit(y, fprop_reference(x, w, None, PARAMS), PARAMS, 8 * 9)
    grad_w = torch.full(PARAMS.weight_shape, float("nan"), device="cuda")
    conv2d_gw8_wgrad(grad_w.permute(0, 3, 1, 2), x, y, PARAMS)
    torch.cuda.synchronize()
    depth = PARAMS.n * PARAMS.p * PARAMS.q
    torch.testing.assert_close(
        grad_w, wgrad_reference(x, y, PARAMS), rtol=1e-4, atol=1e-6 * depth + 1e-6
    )


def test_arrays_that_do_not_fit_are_named_before_any_launch() -> None:
    import torch

    x = uniform(PARAMS.input_shape, PARAMS, 53)
    w = uniform(PARAMS.weight_shape, PARAMS, 54)
    y = torch.full(PARAMS.output_shape, float("nan"), device="cuda", dtype=x.dtype)
    with pytest.raises(ValueError, match="x must hold float16 values, got float32"):
        conv2d_gw8_fprop(y, x.float(), w, None, PARAMS)
    with pytest.raises(ValueError, match=r"x must be an N x H x W x C activation"):
        conv2d_gw8_fprop(y, x.permute(0, 3, 1, 2).contiguous(), w, None, PARAMS)
    with pytest.raises(ValueError, match=r"w must be the layer's K x R x S x 8 weights"):
        conv2d_gw8_dgrad(x, y, w.permute(0, 3, 1, 2).contiguous(), PARAMS)
    with_bias = Conv2dGw8Params.make(3, 64, 13, 11, has_bias=True)  # reduces: a workspace
    with pytest.raises(ValueError, match=r"workspace must hold at least"):
        conv2d_gw8_wgrad(
            torch.empty(PARAMS.weight_shape, device="cuda"), x, y, with_bias,
            workspace=torch.empty(1, device="cuda"), grad_bias=torch.empty(64, device="cuda"),
        )  # fmt: skip
    torch.cuda.synchronize()
    assert torch.isnan(y).all(), "a refused call launched nothing"
