"""Launch one conv2d_gw8 pass and configuration a few times, for ncu or compute-sanitizer.

Usage: ncu --clock-control none --set full -k regex:conv2d -c 1 -o OUT \
           python3 tools/profile_conv.py PASS NxCxHxW [CONFIG]
       compute-sanitizer --tool racecheck --report-api-errors no python3 tools/profile_conv.py \
           PASS NxCxHxW [CONFIG]
PASS is fprop, dgrad or wgrad. CONFIG is the config's fields in order (for fprop and dgrad:
block_q block_g warp_g warp_q16 block_p [prefetch [mma_k]]; for wgrad: block_q block_g warp_g
block_p [prefetch [block_n [walk_n [image_sync 0/1]]]]); without them the pass's default
configuration runs.
"""

from __future__ import annotations

import sys

import torch

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    FpropConfig,
    WgradConfig,
    conv2d_gw8_dgrad,
    conv2d_gw8_fprop,
    conv2d_gw8_wgrad,
    default_config,
    dgrad_spec,
    wgrad_spec,
)


def main(argv: list[str]) -> None:
    pass_ = argv[0]
    n, c, h, w = (int(v) for v in argv[1].split("x"))
    params = Conv2dGw8Params.make(n=n, c=c, h=h, w=w, r=3, s=3, padding=1)
    fields = [int(v) for v in argv[2:]]
    x = torch.randn(n, h, w, c, device="cuda", dtype=torch.float16)
    weight = torch.randn(c, 3, 3, 8, device="cuda", dtype=torch.float16)
    y = torch.empty(n, params.p, params.q, c, device="cuda", dtype=torch.float16)
    config: FpropConfig | WgradConfig
    if pass_ == "fprop":
        fprop_config = FpropConfig(*fields) if fields else default_config(params)
        config = fprop_config
        run = lambda: conv2d_gw8_fprop(y, x, weight, None, params, fprop_config)  # noqa: E731
    elif pass_ == "dgrad":
        dgrad_config = FpropConfig(*fields) if fields else dgrad_spec.default_config(params)
        config = dgrad_config
        run = lambda: conv2d_gw8_dgrad(x, y, weight, params, dgrad_config)  # noqa: E731
    elif pass_ == "wgrad":
        # The eighth field, image_sync, is a bool (0 or 1 on the command line).
        image_sync = len(fields) > 7 and bool(fields[7])
        wgrad_config = wgrad_spec.default_config(params)
        if fields:
            wgrad_config = WgradConfig(*fields[:7], image_sync=image_sync)
        config = wgrad_config
        grad_w = torch.empty(c, 3, 3, 8, device="cuda", dtype=torch.float32)
        run = lambda: conv2d_gw8_wgrad(grad_w, x, y, params, wgrad_config)  # noqa: E731
    else:
        raise SystemExit(f"PASS must be fprop, dgrad or wgrad, got {pass_!r}")
    print(pass_, params, config, flush=True)
    for _ in range(3):
        run()
    torch.cuda.synchronize()


if __name__ == "__main__":
    main(sys.argv[1:])
