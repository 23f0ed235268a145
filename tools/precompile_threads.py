"""Time spio.torch.precompile's compiles in 1, 2, ... threads on this machine's CPU (no GPU
needed): what the threads gain on a cold kernel cache.

    python tools/precompile_threads.py [--threads 1 2] [--channels 64 128 256] [--side 28]
        [--batches 32 9] [--kernel-sizes 3 5] [--gpu "NVIDIA H200"]

The network is spio.torch.bench_precompile's (a Conv2dGw8 per stage and kernel size),
converted and in fp16, prepared for its training steps at each batch size. The machine
stands in for --gpu: spio.jit.device_info answers with a Hopper GPU of its SM count, and a
loaded module is a stand-in whose kernels take their registers and stack from the cubin
(tools/cubin_kernels.py) and their occupancy from them (tools/hopper_occupancy.py), so the
launchers' chains run as on the GPU: the choices (the shipped models scoring their spaces),
the variants each launcher compiles to read their registers, and every NVRTC compile are
the real ones; only the driver's loads (a few milliseconds a kernel) are left out. The
recorded calls are moved to cuda:0. Each thread count runs in a new process with an empty
spio-jit cache folder, and prints precompile's seconds, the kernels' passes it prepared and
the compiles they took.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cubin_kernels import KernelResources, kernel_resources
from hopper_occupancy import BLOCK_RESERVED_SHARED, SM_SHARED, blocks_per_sm
from selection_time import GPUS

import spio.jit
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


def hopper(gpu: str) -> Any:
    """spio.jit's DeviceInfo of a stand-in for `gpu` (an sm_90 GPU of GPUS)."""
    from spio.jit import DeviceInfo

    sm_count, arch = GPUS[gpu]
    return DeviceInfo(
        index=0, name=gpu, arch=arch, compute_capability=(9, 0), sm_count=sm_count,
        l2_bytes=50 << 20, memory_bytes=80 << 30, max_threads_per_block=1024,
        max_block_dims=(1024, 1024, 64), max_grid_dims=(2**31 - 1, 65535, 65535),
        max_shared_per_block=48 << 10, max_shared_per_block_optin=SM_SHARED - BLOCK_RESERVED_SHARED,
        max_threads_per_sm=2048, max_shared_per_sm=SM_SHARED,
        reserved_shared_per_block=BLOCK_RESERVED_SHARED,
    )  # fmt: skip


class StandInKernel:
    """A kernel as the launchers ask about it before launching: its attributes and
    occupancy, from the cubin's registers and stack."""

    def __init__(self, name: str, device: int, resources: KernelResources) -> None:
        self.name = name
        self.device = device
        self.resources = resources
        self.max_dynamic = 48 << 10

    @property
    def attributes(self) -> Any:
        from spio.jit import KernelAttributes

        return KernelAttributes(
            registers=self.resources.registers, static_shared_mem=0,
            max_dynamic_shared_mem=self.max_dynamic, const_mem=0,
            local_mem=self.resources.frame, max_threads_per_block=1024, ptx_version=90,
            binary_version=90,
        )  # fmt: skip

    def set_max_dynamic_shared_mem(self, nbytes: int) -> None:
        self.max_dynamic = nbytes

    def max_active_blocks_per_sm(self, block: int | Sequence[int], shared_mem: int = 0) -> int:
        threads = block if isinstance(block, int) else math.prod(block)
        return blocks_per_sm(self.resources.registers, threads, shared_mem)


class StandInModule:
    """A loaded module's stand-in: its kernels by name."""

    def __init__(self, code: Any, device: int) -> None:
        self.code = code
        self.device = device
        self.kernels = kernel_resources(code.code)

    def get_kernel(self, name: str) -> StandInKernel:
        return StandInKernel(name, self.device, self.kernels[name])


def stand_in_loads(gpu: str) -> list[int]:
    """Make this process prepare passes as on a `gpu` without one (see the module doc);
    return the list to which each NVRTC compile appends 1."""
    import torch

    from spio.jit import _compile, _driver
    from spio.torch import _precompile
    from spio.torch._precompile_calls import Recorded

    device = hopper(gpu)
    _driver.device_info = lambda index=0: device  # type: ignore[assignment]
    spio.jit.device_info = lambda index=0: device  # type: ignore[assignment]

    def load(code: Any, *, device: int | None = None) -> StandInModule:
        return StandInModule(code, 0 if device is None else device)

    _compile.CompiledCode.load = load  # type: ignore[assignment,method-assign]
    compiles: list[int] = []
    compile_one = _compile._compile_here_or_in_worker

    def counted(prepared: Any) -> Any:
        compiles.append(1)
        return compile_one(prepared)

    _compile._compile_here_or_in_worker = counted
    recorded = _precompile.record_calls
    cuda = torch.device("cuda", 0)

    def on_cuda(*args: Any) -> Recorded:
        calls = recorded(*args)
        return Recorded([dataclasses.replace(call, device=cuda) for call in calls.layers], [])

    _precompile.record_calls = on_cuda  # type: ignore[assignment]
    return compiles


def run(args: argparse.Namespace) -> dict[str, Any]:
    """precompile the network in args.run threads in this process."""
    import torch

    import spio.torch
    from spio.torch.bench_precompile import build_network

    compiles = stand_in_loads(args.gpu)
    model = build_network(args.channels, args.kernel_sizes)
    spio.torch.convert(model)
    model.half()
    batches = [
        torch.empty(n, args.channels[0], args.side, args.side, dtype=torch.float16)
        for n in args.batches
    ]
    result = spio.torch.precompile(model, *batches, threads=args.run)
    return {
        "seconds": result.seconds,
        "passes": len(result.passes),
        "layers": result.layers,
        "compiles": len(compiles),
    }


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
            f"{result['layers']} layers, {result['compiles']} compiles)"
        )


if __name__ == "__main__":
    main()
