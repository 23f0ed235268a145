"""How NVRTC's compiles scale with threads of one process, and with compile_many's worker
processes, on this machine (no GPU needed).

    python tools/nvrtc_threads.py [--count 32] [--threads 1 4 8 16] [--processes]

Each round compiles --count configs of conv2d_gw8's fprop space for 64x64x56x56 3 x 3
(sm_90, no cache), drawn anew each round so that nothing is compiled twice, in a pool of T
threads, each calling spio.jit's compile; --processes adds a round of the same count in
compile_many's worker processes. Each round prints its wall time, the mean time of a compile
and how many ran at once on average (their summed time over the wall time). On a 16-core
H100 host (2026-12-06): 15.8 s in one thread, 5.0 s in 4, 5.3 s in 8, 5.5 s in 16 (each
compile 2.05 s there against 0.49 s alone), 1.7 s in 16 processes: the reason
spio.jit.compile_in_workers exists.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import spio.jit
from spio.jit._compile import compile_request
from spio.kernels.conv2d_gw8 import Conv2dGw8Params, fprop, fprop_spec


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=32)
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 4, 8, 16])
    parser.add_argument("--processes", action="store_true")
    return parser


def compile_timed(request: spio.jit.CompileRequest) -> float:
    """Seconds spio.jit.compile takes for request, without the cache."""
    start = time.perf_counter()
    compile_request(request, cache=False)
    return time.perf_counter() - start


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    params = Conv2dGw8Params.make(64, 64, 56, 56, r=3, s=3, padding=1)
    space = fprop_spec.config_space(params)
    rounds = [("threads", threads) for threads in args.threads]
    rounds += [("processes", 0)] if args.processes else []
    draws = random.Random(0).sample(space, args.count * len(rounds))
    for index, (kind, threads) in enumerate(rounds):
        configs = draws[index * args.count : (index + 1) * args.count]
        requests = [fprop.compile_request(params, config, "sm_90") for config in configs]
        if kind == "processes":
            start = time.perf_counter()
            spio.jit.compile_many(requests, cache=False, progress=False)
            print(f"compile_many's processes: {time.perf_counter() - start:.2f} s")
            continue
        start = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            durations = list(pool.map(compile_timed, requests))
        wall = time.perf_counter() - start
        print(
            f"{threads:2d} threads: {wall:.2f} s for {args.count} compiles, each "
            f"{sum(durations) / len(durations):.2f} s, {sum(durations) / wall:.1f} at once"
        )


if __name__ == "__main__":
    main()
