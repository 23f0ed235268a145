"""Time per-sample weight gradients of a grouped conv2d (group width 8) with torch.func,
`vmap(grad(loss))` over single images, on Spio's operators and on torch's conv2d (cuDNN), in
one process (GPU); check Spio's against fp32.

    python tools/per_sample_grads_bench.py [--layers 64x64x64x64 ...] [--dtype float16]

A layer is NxCxHxW with a 3 x 3 filter and padding 1; the loss of image i is
sum(conv(x_i) * t_i). Each line: the median time of a call (CUDA events around 20 calls, 9
repetitions, after a warm-up), the ratio to torch's, and the largest error of Spio's
gradients against fp32 conv2d under the same transforms, relative to their largest value.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812

import spio.functional as spio_f
from spio.kernels.timing import time_us


def per_sample(conv: Callable[..., torch.Tensor]) -> Callable[..., Any]:
    """The per-sample gradients (weight, bias) of sum(conv(x_i) * t_i), image by image."""

    def loss(w: torch.Tensor, b: torch.Tensor, x: torch.Tensor, t: torch.Tensor) -> Any:
        return (conv(x[None], w, b).float() * t.float()).sum()

    return torch.vmap(torch.func.grad(loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))


def torch_conv(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.conv2d(x, w, b.to(x.dtype), padding=1, groups=x.shape[1] // 8)


def spio_conv(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return spio_f.conv2d_gw8(x, w, b, padding=1)


def fp32_conv(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.conv2d(x.float(), w.float(), b.float(), padding=1, groups=x.shape[1] // 8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layers", nargs="+", default=["64x64x64x64", "32x128x32x32"])
    parser.add_argument("--dtype", choices=("float16", "bfloat16"), default="float16")
    args = parser.parse_args()
    dtype = getattr(torch, args.dtype)
    torch.backends.cudnn.benchmark = True
    print(torch.cuda.get_device_name(), args.dtype)
    for layer in args.layers:
        n, c, h, w = (int(v) for v in layer.split("x"))
        x = torch.randn(n, c, h, w, device="cuda").to(dtype)
        x = x.contiguous(memory_format=torch.channels_last)
        t = torch.randn_like(x)
        weight = (torch.randn(c, 8, 3, 3, device="cuda") / 9).to(dtype)
        bias = torch.randn(c, device="cuda")
        got = per_sample(spio_conv)(weight, bias, x, t)
        want = per_sample(fp32_conv)(weight.float(), bias, x.float(), t)
        errors = [
            ((g.float() - e).abs().max() / e.abs().max()).item()
            for g, e in zip(got, want, strict=True)
        ]
        times = {
            name: time_us(functools.partial(per_sample(conv), weight, bias, x, t))
            for name, conv in (("spio", spio_conv), ("torch", torch_conv))
        }
        print(
            f"{layer}: spio {times['spio']:.1f} us, torch {times['torch']:.1f} us "
            f"({times['torch'] / times['spio']:.2f}x); relative error: weight {errors[0]:.1e}, "
            f"bias {errors[1]:.1e}",
            flush=True,
        )


if __name__ == "__main__":
    main()
