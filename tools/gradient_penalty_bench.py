"""Time a gradient-penalty step of a grouped conv2d (group width 8): second derivatives on
Spio's passes against torch's conv2d (cuDNN), in one process (GPU); check Spio's against fp32.

    python tools/gradient_penalty_bench.py [--layers 128x64x64x64 ...] [--dtype float16]

A layer is NxCxHxW with a 3 x 3 filter, padding 1 and a bias. The step: y = conv(x, w, b),
the gradient of sum(y^2) / 2 in x as a graph (create_graph), and the gradients of the
penalty mean(grad_x^2) in x, w and b; six passes of the convolution. Each line: the median
time of a step (CUDA events around 20 steps, 9 repetitions, after a warm-up), eager and as
CUDA-graph replays, the ratios to torch's, and the largest errors of Spio's gradients and of
torch's in the same dtype (x, w, b) against fp32 conv2d's, relative to their largest value.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

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

Conv = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


def penalty_step(
    conv: Conv, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor
) -> tuple[torch.Tensor, ...]:
    """The gradients in (x, w, b) of mean(d/dx [sum(conv(x, w, b)^2) / 2] ^ 2)."""
    y = conv(x, w, b)
    (grad_x,) = torch.autograd.grad(y.float().square().sum() / 2, x, create_graph=True)
    penalty = grad_x.float().square().mean()
    return torch.autograd.grad(penalty, (x, w, b))


def main() -> None:
    layers, dtype = parse_arguments(__doc__.split("\n")[0], ["128x64x64x64", "64x128x32x32"])
    for layer in layers:
        tensors = tuple(t.requires_grad_() for t in layer_tensors(layer, dtype))
        exact = [t.detach().float().requires_grad_() for t in tensors]
        want = penalty_step(fp32_conv, *exact)
        errors = {
            name: relative_errors(penalty_step(conv, *tensors), want)
            for name, conv in (("spio", spio_conv), ("torch", torch_conv))
        }
        times = {
            (name, graph): time_us(functools.partial(penalty_step, conv, *tensors), graph=graph)
            for name, conv in (("spio", spio_conv), ("torch", torch_conv))
            for graph in (False, True)
        }
        line = [f"{layer}:"]
        for graph, how in ((False, "eager"), (True, "graph")):
            spio, cudnn = times[("spio", graph)], times[("torch", graph)]
            line.append(f"{how} spio {spio:.1f} us, torch {cudnn:.1f} us ({cudnn / spio:.2f}x);")
        for name, error in errors.items():
            line.append(f"{name}'s error " + ", ".join(f"{e:.1e}" for e in error) + ";")
        print(" ".join(line), flush=True)


if __name__ == "__main__":
    main()
