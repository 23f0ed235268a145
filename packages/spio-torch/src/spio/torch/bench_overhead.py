"""The host's cost of one call of spio.functional.conv2d_gw8 against torch's conv2d (or of
spio.functional.linear against F.linear).

    python -m spio.torch.bench_overhead [--shapes 1x64x8x8 ...] [--calls 2000] [--backward]
                                        [--weight-format channels_last|contiguous]
                                        [--linear 8x256x256 ...]

TARGETS.md asks that one eager call cost the host no more than torch's own conv2d call.
Method: on small layers (the GPU finishes each call faster than the host issues the next),
time a loop of --calls calls from Python, wall clock, after a warm-up, and synchronize only
at the end: the time per call is what the host spends issuing one. Both contenders get the
same tensors (channels_last activations, fp16) and torch runs with cudnn.benchmark on. The
weight is in channels_last memory by default, as `Conv2dGw8` modules and
`model.to(memory_format=torch.channels_last)` keep it (Spio reads it in place);
--weight-format contiguous times a plain C x 8 x R x S weight, which Spio copies into its
layout on every call. --backward times forward and backward (autograd) instead of the
forward alone. --linear ROWS x IN x OUT times linear layers with a bias instead (fp16, an
input of ROWS x IN, a weight of OUT x IN): `spio.functional.linear` against
`torch.nn.functional.linear`. Prints one line per layer: microseconds per call for Spio and
for torch, and their ratio.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from typing import Any

DEFAULT_SHAPES = ("1x64x8x8", "1x256x4x4", "8x64x16x16")
WEIGHT_FORMATS = ("channels_last", "contiguous")


def _shape(text: str) -> tuple[int, int, int, int]:
    try:
        n, c, h, w = (int(v) for v in text.split("x"))
    except ValueError:
        message = f"a layer is N x C x H x W, e.g. 1x64x8x8; got {text!r}"
        raise argparse.ArgumentTypeError(message) from None
    if min(n, c, h, w) < 1 or c % 8:
        raise argparse.ArgumentTypeError(f"sizes must be positive and C a multiple of 8: {text}")
    return n, c, h, w


def _linear_shape(text: str) -> tuple[int, int, int]:
    try:
        rows, inputs, outputs = (int(v) for v in text.split("x"))
    except ValueError:
        message = f"a linear layer is ROWS x IN x OUT, e.g. 8x256x256; got {text!r}"
        raise argparse.ArgumentTypeError(message) from None
    if min(rows, inputs, outputs) < 1 or inputs % 8 or outputs % 8:
        message = f"sizes must be positive and IN and OUT multiples of 8: {text}"
        raise argparse.ArgumentTypeError(message)
    return rows, inputs, outputs


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m spio.torch.bench_overhead", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--shapes", nargs="+", type=_shape, default=list(map(_shape, DEFAULT_SHAPES))
    )
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--backward", action="store_true", help="time forward + backward")
    parser.add_argument(
        "--weight-format",
        choices=WEIGHT_FORMATS,
        default=WEIGHT_FORMATS[0],
        help="the weight's memory format, for both contenders (default channels_last)",
    )
    parser.add_argument(
        "--linear",
        nargs="+",
        type=_linear_shape,
        metavar="ROWSxINxOUT",
        help="time these linear layers (with a bias) instead of --shapes",
    )
    return parser


def per_call_us(step: Callable[[], object], calls: int, synchronize: Callable[[], None]) -> float:
    """Wall-clock microseconds per call of a loop of calls, after a warm-up of calls // 10."""
    for _ in range(max(1, calls // 10)):
        step()
    synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        step()
    synchronize()
    return (time.perf_counter() - start) * 1e6 / calls


def layer_times(
    shape: tuple[int, int, int, int],
    calls: int,
    backward: bool,
    weight_format: str = WEIGHT_FORMATS[0],
) -> list[float]:
    """[Spio's, torch's] microseconds per call on one layer (3 x 3, padding 1, fp16), the
    weight in weight_format memory (WEIGHT_FORMATS)."""
    import spio.functional
    import torch

    n, c, h, w = shape
    x = torch.randn(n, c, h, w, device="cuda", dtype=torch.float16)
    x = x.contiguous(memory_format=torch.channels_last).requires_grad_(backward)
    weight = torch.randn(c, 8, 3, 3, device="cuda", dtype=torch.float16)
    memory_format = torch.channels_last if weight_format == "channels_last" else None
    if memory_format is not None:
        weight = weight.contiguous(memory_format=memory_format)
    weight.requires_grad_(backward)
    calls_of = (
        lambda: spio.functional.conv2d_gw8(x, weight, padding=1),
        lambda: torch.nn.functional.conv2d(x, weight, padding=1, groups=c // 8),
    )
    return _call_times(calls_of, calls, backward)


def linear_times(shape: tuple[int, int, int], calls: int, backward: bool) -> list[float]:
    """[Spio's, torch's] microseconds per call of one linear layer with a bias (fp16)."""
    import spio.functional
    import torch

    rows, inputs, outputs = shape
    x = torch.randn(rows, inputs, device="cuda", dtype=torch.float16).requires_grad_(backward)
    weight = torch.randn(outputs, inputs, device="cuda", dtype=torch.float16)
    bias = torch.randn(outputs, device="cuda", dtype=torch.float16)
    weight.requires_grad_(backward)
    bias.requires_grad_(backward)
    calls_of = (
        lambda: spio.functional.linear(x, weight, bias),
        lambda: torch.nn.functional.linear(x, weight, bias),
    )
    return _call_times(calls_of, calls, backward)


def _call_times(calls_of: Sequence[Callable[[], Any]], calls: int, backward: bool) -> list[float]:
    """Microseconds per call of each of calls_of (with backward: and of its output's sum's
    backward pass)."""
    import torch

    times = []
    for call in calls_of:
        if backward:

            def step(call: Callable[[], torch.Tensor] = call) -> object:
                output = call()
                output.sum().backward()
                return output

            times.append(per_call_us(step, calls, torch.cuda.synchronize))
        else:
            times.append(per_call_us(call, calls, torch.cuda.synchronize))
    return times


def start_on_cuda(program: str) -> None:
    """Exit with a message where there is no CUDA GPU; else turn cuDNN's benchmark mode on
    (torch's contender runs its fastest algorithm)."""
    import torch

    if not torch.cuda.is_available():
        raise SystemExit(f"{program} needs a CUDA GPU")
    torch.backends.cudnn.benchmark = True


def layer_name(shape: tuple[int, ...]) -> str:
    """A layer's sizes as the command line spells them: 128x64x64x64."""
    return "x".join(str(v) for v in shape)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print a line per layer."""
    args = build_parser().parse_args(argv)
    start_on_cuda("bench_overhead")
    print(f"{'layer':>14} {'spio us/call':>12} {'torch us/call':>13} {'ratio':>6}")
    layers: list[tuple[tuple[int, ...], list[float]]]
    if args.linear:
        layers = [(shape, linear_times(shape, args.calls, args.backward)) for shape in args.linear]
    else:
        layers = [
            (shape, layer_times(shape, args.calls, args.backward, args.weight_format))
            for shape in args.shapes
        ]
    for shape, (spio_us, torch_us) in layers:
        row = f"{spio_us:>12.1f} {torch_us:>13.1f} {spio_us / torch_us:>6.2f}"
        print(f"{layer_name(shape):>14} {row}")


if __name__ == "__main__":
    main()
