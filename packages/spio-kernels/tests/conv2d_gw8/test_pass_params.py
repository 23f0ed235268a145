"""fprop_kernel_params: the layer fprop's kernel runs for each pass."""

from __future__ import annotations

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, dgrad_spec
from spio.kernels.conv2d_gw8.pass_params import fprop_kernel_params


def test_fprop_runs_the_layer_and_dgrad_the_layer_turned_around() -> None:
    # Asymmetric padding: dgrad's forward convolution mirrors it.
    params = Conv2dGw8Params.make(3, 64, 9, 7, r=3, s=2, padding=(0, 2, 1, 0))
    assert fprop_kernel_params("fprop", params) is params
    turned = fprop_kernel_params("dgrad", params)
    assert turned == dgrad_spec.to_fprop_params(params)
    assert turned != params


@pytest.mark.parametrize("pass_name", ["wgrad", "Dgrad", ""])
def test_other_passes_are_refused_by_name(pass_name: str) -> None:
    params = Conv2dGw8Params.make(1, 64, 8, 8)
    with pytest.raises(
        ValueError, match=rf"pass_name must be one of \['fprop', 'dgrad'\].*{pass_name!r}"
    ):
        fprop_kernel_params(pass_name, params)
