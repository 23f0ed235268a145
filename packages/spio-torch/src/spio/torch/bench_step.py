"""The GPU's time for one training step of a layer, Spio's module against torch's.

    python -m spio.torch.bench_step [--shapes 128x64x64x64 ...] [--bias]
                                    [--dtype float16|bfloat16] [--rounds 3]
                                    [--nondeterministic]

For each N x C x H x W layer (3 x 3, padding 1): a `Conv2dGw8` module (its weight in
channels_last memory, as it keeps it) and torch's `nn.Conv2d` with C / 8 groups in
channels_last memory (cuDNN, cudnn.benchmark on), with or without a bias. A step is the
forward pass and the backward pass of a fixed output gradient into every gradient (input,
weight, bias). Both steps are captured in CUDA graphs and replayed, so the times are the
GPU's, without the host's launch cost (spio.torch.bench_overhead measures that). The two
alternate for --rounds rounds in one process; each prints its fastest round's median, in
microseconds per step, and torch's time over Spio's. --nondeterministic runs Spio's steps
after `spio.torch.set_wgrad_deterministic(False)` (the weight gradient from atomic sums
where they pay; cuDNN may pick nondeterministic algorithms either way).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from .bench_overhead import _shape, layer_name, start_on_cuda

DEFAULT_SHAPES = ("32x64x64x64", "128x64x64x64", "64x128x32x32", "128x256x14x14")
DTYPES = ("float16", "bfloat16")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m spio.torch.bench_step", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--shapes", nargs="+", type=_shape, default=list(map(_shape, DEFAULT_SHAPES))
    )
    parser.add_argument("--bias", action="store_true", help="layers with a bias")
    parser.add_argument("--dtype", choices=DTYPES, default=DTYPES[0])
    parser.add_argument(
        "--rounds", type=rounds_argument, default=3, help="alternating rounds (>= 1)"
    )
    parser.add_argument(
        "--nondeterministic",
        action="store_true",
        help="Spio's weight gradients from atomic sums where they pay (their last bits vary)",
    )
    return parser


def whole_number_argument(flag: str) -> Callable[[str], int]:
    """The argparse type of an option (flag, named in its error) that takes a whole number
    >= 1."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise argparse.ArgumentTypeError(f"{flag} takes a whole number >= 1, got {text!r}")
        return value

    return parse


#: argparse type of --rounds.
rounds_argument = whole_number_argument("--rounds")


def layer_step_us(
    shape: tuple[int, int, int, int], bias: bool, dtype_name: str, rounds: int
) -> tuple[float, float]:
    """(Spio's, torch's) GPU microseconds per training step of one layer."""
    import torch

    from ._modules import Conv2dGw8

    n, c, h, w = shape
    dtype = getattr(torch, dtype_name)
    spio_layer = Conv2dGw8(c, 3, padding=1, bias=bias, device="cuda", dtype=dtype)
    torch_layer = torch.nn.Conv2d(
        c, c, 3, padding=1, groups=c // 8, bias=bias, device="cuda", dtype=dtype
    ).to(memory_format=torch.channels_last)
    x = torch.randn(n, c, h, w, device="cuda", dtype=dtype)
    x = x.contiguous(memory_format=torch.channels_last).requires_grad_()
    grad_y = torch.randn_like(x)

    spio_us, torch_us = fastest_alternating(
        [training_step(spio_layer, x, grad_y), training_step(torch_layer, x, grad_y)], rounds
    )
    return spio_us, torch_us


def training_step(module: Any, x: Any, grad_y: Any) -> Callable[[], None]:
    """A function that runs one training step of module: forward on x, backward of grad_y
    into the gradients of x and of every parameter."""
    parameters = list(module.parameters())

    def run() -> None:
        # Fresh gradients each step (allocated from the graph's pool under capture), so
        # that no step adds into the last one's.
        for tensor in (x, *parameters):
            tensor.grad = None
        module(x).backward(grad_y)

    return run


def fastest_alternating(steps: Sequence[Callable[[], None]], rounds: int) -> list[float]:
    """Each step's GPU microseconds: the contenders timed in turn (CUDA-graph replays of 10
    steps, the median of 9) for rounds rounds, each given its fastest round's time, so
    that drift in the GPU's clocks falls on all of them."""
    from spio.kernels.timing import time_us

    times: list[list[float]] = [[] for _ in steps]
    for _ in range(rounds):
        for i, run in enumerate(steps):
            times[i].append(time_us(run, launches=10, graph=True))
    return [min(t) for t in times]


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print a line per layer."""
    args = build_parser().parse_args(argv)
    start_on_cuda("bench_step")
    import torch

    from ._determinism import set_wgrad_deterministic

    bias = "with bias" if args.bias else "no bias"
    wgrad = "nondeterministic" if args.nondeterministic else "deterministic"
    print(
        f"{torch.cuda.get_device_name()}, {args.dtype}, 3 x 3, {bias}, Spio's wgrad {wgrad}; "
        "GPU us per step"
    )
    print(f"{'layer':>14} {'spio':>9} {'torch':>9} {'speed-up':>8}")
    set_wgrad_deterministic(not args.nondeterministic)
    try:
        for shape in args.shapes:
            spio_us, torch_us = layer_step_us(shape, args.bias, args.dtype, args.rounds)
            row = f"{spio_us:>9.1f} {torch_us:>9.1f} {torch_us / spio_us:>7.2f}x"
            print(f"{layer_name(shape):>14} {row}")
    finally:
        set_wgrad_deterministic(True)  # the default, for whatever runs next in the process


if __name__ == "__main__":
    main()
