"""Launch one conv2d_gw8 fprop configuration a few times, for ncu to profile on the GPU.

Usage: ncu --clock-control none --set full -k regex:conv2d -c 1 -o OUT \
           python3 tools/profile_conv_fprop.py 128x64x64x64 [CONFIG]
CONFIG is six numbers (block_q block_g warp_g warp_q16 block_p prefetch); without them the
default configuration is profiled.
"""

from __future__ import annotations

import sys

import torch

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    FpropConfig,
    conv2d_gw8_fprop,
    default_config,
    get_kernel,
)


def main(argv: list[str]) -> None:
    n, c, h, w = (int(v) for v in argv[0].split("x"))
    params = Conv2dGw8Params.make(n=n, c=c, h=h, w=w, r=3, s=3, padding=1)
    fields = [int(v) for v in argv[1:7]]
    config = FpropConfig(*fields) if fields else default_config(params)
    x = torch.randn(n, h, w, c, device="cuda", dtype=torch.float16)
    weight = torch.randn(c, 3, 3, 8, device="cuda", dtype=torch.float16)
    y = torch.empty(n, params.p, params.q, c, device="cuda", dtype=torch.float16)
    attributes = get_kernel(params, config).attributes
    print(config, attributes, flush=True)
    for _ in range(3):
        conv2d_gw8_fprop(y, x, weight, None, params, config)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main(sys.argv[1:])
