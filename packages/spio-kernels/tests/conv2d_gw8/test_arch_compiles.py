"""Every pass compiles for every architecture Spio targets (NVRTC, no GPU needed)."""

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, default_config, dgrad_spec, wgrad_spec
from spio.kernels.conv2d_gw8.dgrad import compile_dgrad
from spio.kernels.conv2d_gw8.fprop import compile_fprop
from spio.kernels.conv2d_gw8.wgrad import compile_wgrad

ARCHS = ["sm_80", "sm_86", "sm_89", "sm_90"]
PARAMS = Conv2dGw8Params.make(8, 64, 20, 18, r=3, s=3, padding=1, dtype="bfloat16")


@pytest.mark.parametrize("arch", ARCHS)
def test_every_pass_compiles(arch: str) -> None:
    for code in (
        compile_fprop(PARAMS, default_config(PARAMS), arch),
        compile_dgrad(PARAMS, dgrad_spec.default_config(PARAMS), arch),
        compile_wgrad(PARAMS, wgrad_spec.default_config(PARAMS), arch),
    ):
        assert code.arch == arch
        assert code.code
