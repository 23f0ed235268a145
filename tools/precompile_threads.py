"""Time spio.torch.precompile's compiles in 1, 2, ... threads on this machine's CPU (no GPU
needed): what the threads gain on a cold kernel cache.

    python tools/precompile_threads.py [--threads 1 2] [--channels 64 128 256] [--side 28]
        [--batches 32 9] [--kernel-sizes 3 5] [--gpu "NVIDIA H200"]

The network is spio.torch.bench_precompile's (a Conv2dGw8 per stage and kernel size),
converted and in fp16, prepared for its training steps at each batch size. The machine
stands in for --gpu as tools/selection_time.py's stand_in does (device_info, and the
heuristics' compiled look-ups), the recorded calls are moved to cuda:0, and a pass's launch
compiles its kernels with NVRTC for sm_90 (spio-kernels' compile_fprop, compile_dgrad,
compile_wgrad) where on a GPU it would compile and load them: the choices (the shipped
models scoring their spaces) and the compiles are the real ones, the driver's loads (a few
milliseconds a kernel) left out. Each thread count runs in a new process with an empty
spio-jit cache folder, and prints precompile's seconds and the kernels' passes it prepared.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from selection_time import GPUS, stand_in

from spio.torch.bench_precompile import run_with_empty_cache

TOOLS = Path(__file__).resolve().parent


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--channels", nargs="+", type=int, default=[64, 128, 256])
    parser.add_argument("--side", type=int, default=28)
    parser.add_argument("--batches", nargs="+", type=int, default=[32, 9])
    parser.add_argument("--kernel-sizes", nargs="+", type=int, default=[3, 5])
    parser.add_argument("--gpu", choices=sorted(GPUS), default="NVIDIA H200")
    # One run in this process (the parent starts one per thread count).
    parser.add_argument("--run", type=int, help=argparse.SUPPRESS)
    return parser


def stand_in_compiles(gpu: str) -> None:
    """Make this process prepare passes as on a `gpu` without one (see the module doc)."""
    import torch

    from spio.kernels.conv2d_gw8 import dgrad, fprop, wgrad
    from spio.torch import _cuda_passes, _precompile
    from spio.torch._precompile_calls import Recorded

    stand_in(gpu)
    launches: dict[str, Any] = _cuda_passes._LAUNCHES  # (typed as its loaders' caches)
    launches.update(
        fprop=lambda params, config, device: fprop.compile_fprop(params, config, "sm_90"),
        dgrad=lambda params, config, device: dgrad.compile_dgrad(params, config, "sm_90"),
        wgrad=lambda params, config, device: wgrad.compile_wgrad(params, config, "sm_90"),
    )
    recorded = _precompile.record_calls
    cuda = torch.device("cuda", 0)

    def on_cuda(*args: Any) -> Recorded:
        calls = recorded(*args)
        return Recorded([dataclasses.replace(call, device=cuda) for call in calls.layers], [])

    _precompile.record_calls = on_cuda  # type: ignore[assignment]


def run(args: argparse.Namespace) -> dict[str, Any]:
    """precompile the network in args.run threads in this process."""
    import torch

    import spio.torch
    from spio.torch.bench_precompile import build_network

    stand_in_compiles(args.gpu)
    model = build_network(args.channels, args.kernel_sizes)
    spio.torch.convert(model)
    model.half()
    batches = [
        torch.empty(n, args.channels[0], args.side, args.side, dtype=torch.float16)
        for n in args.batches
    ]
    result = spio.torch.precompile(model, *batches, threads=args.run)
    return {"seconds": result.seconds, "passes": len(result.passes), "layers": result.layers}


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    if args.run is not None:
        print(json.dumps(run(args)))
        return
    options = [
        "--channels", *map(str, args.channels), "--side", str(args.side),
        "--batches", *map(str, args.batches), "--kernel-sizes", *map(str, args.kernel_sizes),
        "--gpu", args.gpu,
    ]  # fmt: skip
    print(f"{args.gpu} stand-in, batches {args.batches}: precompile on a cold kernel cache")
    command = [sys.executable, str(TOOLS / "precompile_threads.py"), *options]
    for threads in args.threads:
        what = f"the run in {threads} threads"
        result = run_with_empty_cache([*command, "--run", str(threads)], what)
        print(
            f"  {threads} threads: {result['seconds']:.1f} s ({result['passes']} passes, "
            f"{result['layers']} layers)"
        )


if __name__ == "__main__":
    main()
