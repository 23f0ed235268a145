"""Host cost of one kernel launch: spio.jit.launch beside cuda.core's bare launch and torch.

Run it with `python -m spio.jit.bench_launch` on a machine with a GPU and CUDA torch.

Method. A kernel with four pointer parameters (empty body, 1 block of 32 threads) is
launched on torch's current stream, so GPU time never limits the host. One sample is a
batch of `batch` back-to-back launches timed with time.perf_counter_ns; the batch stays far
below the driver's queue depth, and the stream is synchronized between batches, outside
the timed region. A sample's value is its time divided by `batch`. After `warmup` batches,
`repeats` batches are timed; the report is the median per launch, in microseconds. The
three paths run interleaved, batch by batch, so that clock and cache drift hit all equally:

- spio.jit: `spio.jit.launch(kernel, 1, 32, (a, b, c, d))` with four CUDA torch tensors:
  pointer extraction, argument checks, stream lookup and the launch itself.
- cuda.core: `cuda.core.launch(stream, config, kernel, p0, p1, p2, p3)` with the stream,
  config and pointers prepared beforehand: the floor spio.jit builds on.
- torch: `x.add_(1)` on a 4-element CUDA tensor: a framework op, for scale.

Host launch costs are CPU- and interpreter-bound, so the report names the Python version,
the CPU and the torch and cuda-core versions; compare numbers only between equal hosts.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

_SOURCE = r"""
extern "C" __global__ void four_pointers(float* a, const float* b, const float* c,
                                         float* d) {
    // Never true for the benchmark's tensors; keeps all four parameters live.
    if (threadIdx.x == 1024) { d[0] = a[0] + b[0] + c[0]; }
}
"""


@dataclass(frozen=True)
class LaunchCost:
    """Median host microseconds per launch of each path, and how they were measured."""

    spio_jit_us: float
    cuda_core_us: float
    torch_add_us: float
    device: str
    batch: int
    repeats: int
    host: str = ""

    def report(self) -> str:
        """Return the result as a few readable lines."""
        return "\n".join(
            [
                f"launch host cost on {self.device} (median of {self.repeats} batches "
                f"of {self.batch}):",
                f"  host: {self.host or host_description()}",
                f"  spio.jit.launch, 4 torch tensors : {self.spio_jit_us:6.2f} us",
                f"  cuda.core.launch, bare           : {self.cuda_core_us:6.2f} us",
                f"  torch x.add_(1)                  : {self.torch_add_us:6.2f} us",
            ]
        )


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def host_description() -> str:
    """Return the interpreter, CPU and library versions the launch cost depends on."""
    versions = []
    for distribution in ("torch", "cuda-core", "cuda-bindings"):
        try:
            versions.append(f"{distribution} {importlib.metadata.version(distribution)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{distribution} absent")
    return (
        f"{platform.python_implementation()} {platform.python_version()} on {_cpu_name()}; "
        + ", ".join(versions)
    )


def _time_batch(run: Callable[[], object], batch: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(batch):
        run()
    return (time.perf_counter_ns() - start) / batch / 1000.0


def measure(device: int = 0, batch: int = 200, repeats: int = 200, warmup: int = 20) -> LaunchCost:
    """Measure the three launch paths on one device; see the module doc for the method."""
    import torch

    from spio.jit import _launch, compile, launch
    from spio.jit._cuda_core import cuda_core

    core = cuda_core()
    LaunchConfig, core_launch = core.LaunchConfig, core.launch  # noqa: N806 (cuda.core's)

    torch.cuda.set_device(device)
    tensors = [torch.zeros(4, device=f"cuda:{device}") for _ in range(4)]
    x = torch.zeros(4, device=f"cuda:{device}")
    code = compile(_SOURCE, name="bench_launch.cu")
    kernel = code.load(device=device).get_kernel("four_pointers")
    args = tuple(tensors)

    stream, _ = _launch.resolve_stream(None, "torch", device)
    config = LaunchConfig(grid=(1, 1, 1), block=(32, 1, 1), shmem_size=0)
    pointers = [t.data_ptr() for t in tensors]
    core_kernel = kernel._core

    paths: dict[str, Callable[[], object]] = {
        "spio": lambda: launch(kernel, 1, 32, args),
        "core": lambda: core_launch(stream, config, core_kernel, *pointers),
        "torch": lambda: x.add_(1),
    }
    samples: dict[str, list[float]] = {name: [] for name in paths}
    for round_index in range(warmup + repeats):
        for name, run in paths.items():
            torch.cuda.synchronize(device)
            cost = _time_batch(run, batch)
            if round_index >= warmup:
                samples[name].append(cost)
    torch.cuda.synchronize(device)
    return LaunchCost(
        spio_jit_us=statistics.median(samples["spio"]),
        cuda_core_us=statistics.median(samples["core"]),
        torch_add_us=statistics.median(samples["torch"]),
        device=f"cuda:{device} ({torch.cuda.get_device_name(device)})",
        batch=batch,
        repeats=repeats,
        host=host_description(),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--device", type=int, default=0, help="CUDA device index")
    parser.add_argument("--batch", type=int, default=200, help="launches per timed batch")
    parser.add_argument("--repeats", type=int, default=200, help="timed batches per path")
    parser.add_argument("--warmup", type=int, default=20, help="untimed batches per path")
    args = parser.parse_args(argv)
    try:
        import torch
    except ModuleNotFoundError:
        parser.exit(2, "error: the launch benchmark compares with torch: pip install torch\n")
    if not torch.cuda.is_available():
        parser.exit(2, "error: the launch benchmark needs a CUDA GPU\n")
    cost = measure(args.device, args.batch, args.repeats, args.warmup)
    print(cost.report())
    return 0


if __name__ == "__main__":
    sys.exit(main())
