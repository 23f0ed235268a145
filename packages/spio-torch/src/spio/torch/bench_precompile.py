"""A network's first training steps on a cold kernel cache, with and without precompile.

    python -m spio.torch.bench_precompile [--channels 64 128 256 512] [--side 56]
        [--batches 64 17] [--kernel-sizes 3 5] [--threads N] [--rounds 1]

The network: a stage per channel count, its image side halving from --side from one stage
to the next, each stage a Conv2dGw8 (padding to keep the side, with a bias) and ReLU per
kernel size, and a strided 2 x 2 nn.Conv2d (cuDNN) from one stage's channels to the next's;
fp16, channels_last. A run is a training step (forward and backward of the output's sum of
squares) at each batch size in --batches (a training batch and an epoch's last, smaller one,
say), in a new process whose spio-jit disk cache is an empty folder, so every kernel
compiles: once without precompile (each layer compiles its kernels at its first call, one
after another), once with `spio.torch.precompile(model, *batches, threads=--threads)` before
the steps. Each prints its seconds (precompile's and the steps'), the kernels precompile
prepared and the ratio; --rounds repeats both, alternating.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from .bench_overhead import start_on_cuda

PROGRAM = "python -m spio.torch.bench_precompile"
MODES = ("cold", "precompiled")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROGRAM, description=__doc__.split("\n")[0])
    parser.add_argument("--channels", nargs="+", type=_multiple_of_8, default=[64, 128, 256, 512])
    parser.add_argument("--side", type=_positive, default=56, help="the first stage's H = W")
    parser.add_argument("--batches", nargs="+", type=_positive, default=[64, 17])
    parser.add_argument("--kernel-sizes", nargs="+", type=_kernel_size, default=[3, 5])
    parser.add_argument("--threads", type=_positive, default=None, help="precompile's threads")
    parser.add_argument("--rounds", type=_positive, default=1)
    # One measurement in this process (the parent starts a process per run).
    parser.add_argument("--run", choices=MODES, help=argparse.SUPPRESS)
    return parser


def _positive(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def _multiple_of_8(text: str) -> int:
    value = _positive(text)
    if value % 8:
        raise argparse.ArgumentTypeError(f"channels must be multiples of 8, got {text}")
    return value


def _kernel_size(text: str) -> int:
    value = _int(text)
    if not 1 <= value <= 7 or value % 2 == 0:
        raise argparse.ArgumentTypeError(f"kernel sizes are odd, 1 to 7, got {text}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def build_network(channels: Sequence[int], kernel_sizes: Sequence[int]) -> Any:
    """The benchmark's network (see the module doc), on the CPU in fp32, unconverted."""
    from torch import nn

    layers: list[nn.Module] = []
    for stage, width in enumerate(channels):
        for size in kernel_sizes:
            layers += [nn.Conv2d(width, width, size, padding=size // 2, groups=width // 8)]
            layers += [nn.ReLU()]
        if stage + 1 < len(channels):
            layers += [nn.Conv2d(width, channels[stage + 1], 2, stride=2)]
    return nn.Sequential(*layers)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """One run in this process (mode args.run): the seconds of precompile (0 where cold) and
    of the steps, and the kernels precompile prepared."""
    import spio.torch
    import torch

    model = build_network(args.channels, args.kernel_sizes)
    spio.torch.convert(model)
    model = model.to("cuda", torch.float16, memory_format=torch.channels_last)
    batches = [
        torch.randn(n, args.channels[0], args.side, args.side, device="cuda", dtype=torch.half)
        for n in args.batches
    ]
    batches = [x.contiguous(memory_format=torch.channels_last) for x in batches]
    torch.cuda.synchronize()
    start = time.perf_counter()
    kernels = 0
    if args.run == "precompiled":
        kernels = len(spio.torch.precompile(model, *batches, threads=args.threads).passes)
    prepared = time.perf_counter()
    for x in batches:
        model(x).float().square().sum().backward()
    torch.cuda.synchronize()
    end = time.perf_counter()
    return {"precompile_s": prepared - start, "steps_s": end - prepared, "kernels": kernels}


def run_in_new_process(args: argparse.Namespace, mode: str) -> dict[str, Any]:
    """measure in a new process whose spio-jit cache is an empty folder."""
    options = [
        "--channels", *map(str, args.channels),
        "--side", str(args.side),
        "--batches", *map(str, args.batches),
        "--kernel-sizes", *map(str, args.kernel_sizes),
        "--run", mode,
    ]  # fmt: skip
    if args.threads is not None:
        options += ["--threads", str(args.threads)]
    command = [sys.executable, "-m", "spio.torch.bench_precompile", *options]
    return run_with_empty_cache(command, f"the {mode} run")


def run_with_empty_cache(command: Sequence[str], what: str) -> dict[str, Any]:
    """The JSON object a command prints last, run in a new process whose spio-jit cache is an
    empty folder (so every kernel compiles); SystemExit with its stderr, naming `what`,
    where it fails."""
    with tempfile.TemporaryDirectory(prefix="spio-bench-precompile-") as cache:
        env = {**os.environ, "SPIO_JIT_CACHE_DIR": cache, "SPIO_JIT_PROGRESS": "0"}
        done = subprocess.run(list(command), env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{what} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print a line per run."""
    args = build_parser().parse_args(argv)
    start_on_cuda("bench_precompile")
    if args.run is not None:
        print(json.dumps(measure(args)))
        return
    columns = ("round", 5), ("run", 11), ("precompile s", 12), ("steps s", 8), ("total s", 8)
    print(" ".join(f"{name:>{width}}" for name, width in columns), f"{'kernels':>7}")
    for round_ in range(1, args.rounds + 1):
        totals = {}
        for mode in MODES:
            result = run_in_new_process(args, mode)
            totals[mode] = result["precompile_s"] + result["steps_s"]
            print(
                f"{round_:>5} {mode:>11} {result['precompile_s']:>12.2f} "
                f"{result['steps_s']:>8.2f} {totals[mode]:>8.2f} {result['kernels']:>7}"
            )
        print(f"{round_:>5} cold / precompiled: {totals['cold'] / totals['precompiled']:.2f}x")


if __name__ == "__main__":
    main()
