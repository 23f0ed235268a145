"""The fp32 reference agrees with a direct sum (padding per side, K x R x S x 8 weights)."""

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, weights_from_torch_layout
from spio.kernels.conv2d_gw8.reference import fprop_reference


def test_reference_matches_direct_sum() -> None:
    torch = pytest.importorskip("torch")
    params = Conv2dGw8Params.make(2, 16, 4, 5, r=3, s=2, padding=(2, 0, 0, 1), has_bias=True)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(params.input_shape, generator=gen)
    w = torch.randn(params.weight_shape, generator=gen)
    bias = torch.randn(params.c, generator=gen)
    y = fprop_reference(x, w, bias, params)
    assert y.shape == params.output_shape
    expected = torch.zeros(params.output_shape)
    for p in range(params.p):
        for q in range(params.q):
            for r in range(params.r):
                for s in range(params.s):
                    h, wc = p + r - params.pad_top, q + s - params.pad_left
                    if 0 <= h < params.h and 0 <= wc < params.w:
                        for k in range(params.c):
                            g = k // 8
                            expected[:, p, q, k] += x[:, h, wc, 8 * g : 8 * g + 8] @ w[k, r, s]
    expected += bias
    torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-5)


def test_weights_from_torch_layout() -> None:
    torch = pytest.importorskip("torch")
    w = torch.randn(16, 8, 3, 2)
    converted = weights_from_torch_layout(w)
    assert converted.shape == (16, 3, 2, 8)
    assert converted.is_contiguous()
    assert torch.equal(converted[5, 2, 1], w[5, :, 2, 1])
