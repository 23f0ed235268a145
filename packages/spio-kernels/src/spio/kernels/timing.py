"""Timing on the GPU, as TARGETS.md's method asks, shared by the kernel families' benchmarks.

`time_us` is CUDA events around a loop of launches, the median of repetitions, after a
warm-up loop (or, with graph=True, replays of a CUDA graph of the loop: the GPU's time
without the host's launch cost). `copy_bandwidth_gbs` is the device-to-device copy
bandwidth every effective bandwidth is set against. torch is imported only when they run.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any


def time_us(
    fn: Callable[[], object], launches: int = 20, repetitions: int = 9, graph: bool = False
) -> float:
    """Median over repetitions of the per-launch time (us) of a loop of launches; with graph,
    of replays of a CUDA graph that captured the loop (no host launch cost)."""
    import torch

    for _ in range(launches):
        fn()
    torch.cuda.synchronize()

    def loop() -> None:
        for _ in range(launches):
            fn()

    run = _captured(loop).replay if graph else loop
    times = []
    for _ in range(repetitions):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / launches)
    return statistics.median(times)


def _captured(loop: Callable[[], None]) -> Any:
    """Return a torch.cuda.CUDAGraph of loop, replayed once (its launches warmed up already:
    cuDNN's algorithm search and Spio's compiles happen outside the capture)."""
    import torch

    # Libraries set up lazily on first use in a stream; torch's advice is a warm-up on a side
    # stream before capture.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        loop()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    captured = torch.cuda.CUDAGraph()
    with torch.cuda.graph(captured):
        loop()
    captured.replay()
    torch.cuda.synchronize()
    return captured


def copy_bandwidth_gbs(launches: int, repetitions: int) -> float:
    """Device-to-device copy bandwidth of a 1 GiB torch copy, (read + written) bytes / s."""
    import torch

    nbytes = 1 << 30
    a = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)

    def copy() -> None:
        b.copy_(a)

    us = time_us(copy, launches, repetitions)
    return 2 * nbytes / us / 1e3
