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

import functools
from collections.abc import Callable
from typing import Any

import torch
from gw8_convs import (
    fp32_conv,
    layer_tensors,
    parse_arguments,
    relative_errors,
    spio_conv,
    torch_conv,
)

from spio.kernels.timing import time_us


def per_sample(conv: Callable[..., torch.Tensor]) -> Callable[..., Any]:
    """The per-sample gradients (weight, bias) of sum(conv(x_i) * t_i), image by image."""

    def loss(w: torch.Tensor, b: torch.Tensor, x: torch.Tensor, t: torch.Tensor) -> Any:
        return (conv(x[None], w, b).float() * t.float()).sum()

    return torch.vmap(torch.func.grad(loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))


def main() -> None:
    layers, dtype = parse_arguments(__doc__.split("\n")[0], ["64x64x64x64", "32x128x32x32"])
    for layer in layers:
        x, weight, bias = layer_tensors(layer, dtype)
        t = torch.randn_like(x)
        got = per_sample(spio_conv)(weight, bias, x, t)
        errors = relative_errors(got, per_sample(fp32_conv)(weight.float(), bias, x.float(), t))
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
