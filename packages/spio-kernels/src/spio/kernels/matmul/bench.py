"""Benchmark the matmul against cuBLAS (torch) in one run.

    python -m spio.kernels.bench matmul [--shapes 8192x8192x8192 ...] [--dtype float16]
        [--b-layout kn|nk] [--a-layout mk|km] [--bias] [--kernel auto|mma|wgmma]
        [--all-configs] [--cuda-graph] [--out DIR]

Shapes are M x N x K. Method (TARGETS.md): one process, one GPU, the same buffers for every
contender; each timing is CUDA events around a loop of `--launches` (>= 20) launches,
repeated `--repetitions` (>= 9) times, the median repetition per launch, after a warm-up
loop (`spio.kernels.timing.time_us`). cuBLAS is torch.matmul(a, b) for a K x N B ("kn") and
torch.nn.functional.linear(a, b) for an N x K one ("nk"), which is a @ b.T. The table gives
each contender's time, TFLOP/s (2 M N K / time) and Spio's speed relative to cuBLAS (cuBLAS
time / Spio time: 0.7 is 70% of cuBLAS's speed). A K x M A (`--a-layout km`) goes to cuBLAS
as the transposed view a.t(). Spio runs its default config
(`default_config_on`: on an H100 or H200 the wgmma kernel, else the mma.sync one; --kernel
mma or wgmma takes that kernel's default instead), or with --all-configs every config of
that kernel's space that runs on the GPU (both kernels' with auto; the mma.sync kernel has
thousands: minutes per shape), reporting the best and the default's regret (default time /
best time - 1).
--bias adds a bias vector to C's rows: cuBLAS runs torch.addmm(bias, a, b) or
F.linear(a, b, bias) (its epilogue adds it), Spio its kernels' epilogue, and a third row,
spio_unfused, times Spio's product without the bias followed by torch's add of it, the way
an epilogue without one would have to run.
--out DIR writes DIR/matmul_bench.csv and .json: one row per shape and contender with the
GPU, torch version, dtype, layout, config, median us, TFLOP/s and the ratio.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..timing import time_us
from .launch import Config, compile_request, default_config_on, matmul_launch
from .params import A_LAYOUTS, B_LAYOUTS, DTYPES, MatmulParams
from .spec import config_space
from .spec import default_config as mma_default
from .wgmma_spec import config_space as wgmma_space
from .wgmma_spec import default_config as wgmma_default

DEFAULT_SHAPES = ("8192x8192x8192", "4096x4096x4096", "16384x4096x4096", "4096x14336x4096")
CSV_NAME = "matmul_bench.csv"
JSON_NAME = "matmul_bench.json"


@dataclass(frozen=True)
class MatmulRow:
    """One contender's timing of one shape."""

    gpu: str
    torch: str
    dtype: str
    b_layout: str
    a_layout: str
    bias: bool
    m: int
    n: int
    k: int
    contender: str
    config: str
    us: float
    tflops: float
    vs_cublas: float
    timing: str


def parse_shape(
    text: str, dtype: str, b_layout: str, a_layout: str = "mk", bias: bool = False
) -> MatmulParams:
    """MatmulParams of an M x N x K shape text; argparse.ArgumentTypeError when malformed."""
    parts = text.lower().split("x")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        raise argparse.ArgumentTypeError(f"shape must be M x N x K, like 4096x4096x4096: {text!r}")
    m, n, k = (int(part) for part in parts)
    try:
        return MatmulParams(m, n, k, dtype, b_layout, a_layout, bias)  # type: ignore[arg-type]
    except (TypeError, ValueError) as error:
        raise argparse.ArgumentTypeError(f"shape {text!r}: {error}") from error


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m spio.kernels.bench matmul",
        description="Time Spio's matmul against cuBLAS (torch) in one run.",
    )
    parser.add_argument("--shapes", nargs="+", default=list(DEFAULT_SHAPES), metavar="MxNxK")
    parser.add_argument("--dtype", choices=DTYPES, default="float16")
    parser.add_argument("--b-layout", choices=B_LAYOUTS, default="kn")
    parser.add_argument(
        "--a-layout",
        choices=A_LAYOUTS,
        default="mk",
        help="A as M x K (mk) or K x M (km: cuBLAS then takes A.t(), a transposed view)",
    )
    parser.add_argument("--bias", action="store_true", help="add a bias vector to C's rows")
    parser.add_argument(
        "--kernel",
        choices=("auto", "mma", "wgmma"),
        default="auto",
        help="the kernel whose default config is timed: auto (default_config_on), mma "
        "(mma.sync, every GPU) or wgmma (sm_90)",
    )
    parser.add_argument(
        "--all-configs",
        action="store_true",
        help="time every config of --kernel's space (both kernels' with auto) that runs here",
    )
    parser.add_argument("--cuda-graph", action="store_true")
    parser.add_argument("--launches", type=int, default=20)
    parser.add_argument("--repetitions", type=int, default=9)
    parser.add_argument("--out", type=Path)
    return parser


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.launches < 20 or args.repetitions < 9:
        parser.error("--launches must be >= 20 and --repetitions >= 9 (TARGETS.md's method)")
    try:
        args.params = [
            parse_shape(text, args.dtype, args.b_layout, args.a_layout, args.bias)
            for text in args.shapes
        ]
    except argparse.ArgumentTypeError as error:
        parser.error(str(error))
    return args


def _buffers(params: MatmulParams) -> tuple[Any, Any, Any, Any]:
    """C, A, B and the bias (None without one) of params, on the GPU."""
    import torch

    dtype = getattr(torch, params.dtype)
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = (torch.rand(params.a_shape, device="cuda", generator=gen) - 0.5).to(dtype)
    b = (torch.rand(params.b_shape, device="cuda", generator=gen) - 0.5).to(dtype)
    c = torch.empty(params.c_shape, device="cuda", dtype=dtype)
    bias = torch.rand(params.n, device="cuda", generator=gen).to(dtype) if params.bias else None
    return c, a, b, bias


def _cublas(params: MatmulParams, c: Any, a: Any, b: Any, bias: Any) -> Callable[[], object]:
    import torch
    import torch.nn.functional as F  # noqa: N812

    # A K x M A is given to cuBLAS as the transposed view it is (no copy).
    a_mk = a if params.a_layout == "mk" else a.t()
    if params.b_layout == "kn":
        if bias is not None:
            return lambda: torch.addmm(bias, a_mk, b, out=c)
        return lambda: torch.matmul(a_mk, b, out=c)
    return lambda: F.linear(a_mk, b, bias)


def _unfused(params: MatmulParams, config: Config, c: Any, a: Any, b: Any, bias: Any) -> Any:
    """Spio's product without the bias, then torch's add of it."""
    launch = matmul_launch(dataclasses.replace(params, bias=False), config)

    def run() -> None:
        launch(c, a, b)
        c.add_(bias)

    return run


def precompile(params: MatmulParams, configs: Sequence[Config], arch: str) -> None:
    """Compile configs in parallel (spio.jit.compile_many, progress bar) before timing."""
    import spio.jit

    spio.jit.compile_many([compile_request(params, config, arch) for config in configs])


def _default(params: MatmulParams, kernel: str) -> Config:
    """The default config of `kernel` (auto, mma or wgmma) for params on device 0."""
    import spio.jit

    if kernel == "auto":
        return default_config_on(params)
    info = spio.jit.device_info(0)
    if kernel == "wgmma":
        return wgmma_default(params, info.sm_count)
    return mma_default(params, info.sm_count, info.max_shared_per_block_optin)


def _configs(params: MatmulParams, default: Config, args: argparse.Namespace) -> list[Config]:
    """The default, and with --all-configs every config of the --kernel asked for that runs
    on device 0: the mma.sync kernel's space within its shared memory (mma, auto), the wgmma
    kernel's on sm_90 (wgmma, auto)."""
    import spio.jit

    if not args.all_configs:
        return [default]
    info = spio.jit.device_info(0)
    space: list[Config] = []
    if args.kernel in ("mma", "auto"):
        space += config_space(params, max_shared_mem=info.max_shared_per_block_optin)
    if args.kernel in ("wgmma", "auto") and info.compute_capability == (9, 0):
        space += wgmma_space()
    return [default] + [config for config in space if config != default]


def bench_shape(params: MatmulParams, args: argparse.Namespace, gpu: str) -> list[MatmulRow]:
    """Time cuBLAS and Spio (its default, or every config) on one shape's buffers."""
    import torch

    import spio.jit

    c, a, b, bias = _buffers(params)
    default = _default(params, args.kernel)
    configs = _configs(params, default, args)
    precompile(params, configs, spio.jit.device_info(0).arch)
    timing = "graph" if args.cuda_graph else "events"

    def timed(run: Callable[[], object]) -> float:
        return time_us(run, args.launches, args.repetitions, args.cuda_graph)

    cublas_us = timed(_cublas(params, c, a, b, bias))
    times = {}
    for config in configs:
        times[config] = timed(functools.partial(matmul_launch(params, config), c, a, b, bias=bias))
    best = min(times, key=times.__getitem__)

    def row(contender: str, config: str, us: float) -> MatmulRow:
        return MatmulRow(
            gpu, torch.__version__, params.dtype, params.b_layout, params.a_layout, params.bias,
            params.m, params.n, params.k,
            contender, config, us, params.flops / us / 1e6, cublas_us / us, timing,
        )  # fmt: skip

    rows = [row("cublas", "", cublas_us), row("spio", str(default), times[default])]
    if params.bias:
        unfused_us = timed(_unfused(params, default, c, a, b, bias))
        rows.append(row("spio_unfused", str(default), unfused_us))
    if args.all_configs:
        rows.append(row("spio_best", str(best), times[best]))
        regret = times[default] / times[best] - 1
        print(f"{_shape(params)}: {len(times)} configs; best {best}; default's regret {regret:.1%}")
    return rows


def _shape(params: MatmulParams) -> str:
    return f"{params.m}x{params.n}x{params.k}"


def _print_table(rows: Sequence[MatmulRow]) -> None:
    print(f"{'shape':>18} {'contender':>10} {'us':>10} {'TFLOP/s':>9} {'vs cuBLAS':>9}  config")
    for r in rows:
        shape = f"{r.m}x{r.n}x{r.k}"
        print(
            f"{shape:>18} {r.contender:>10} {r.us:10.1f} {r.tflops:9.1f} {r.vs_cublas:9.3f}  "
            f"{r.config}"
        )


def write_outputs(rows: Sequence[MatmulRow], out: Path) -> None:
    """Write the rows as out/matmul_bench.csv and out/matmul_bench.json."""
    out.mkdir(parents=True, exist_ok=True)
    records = [asdict(r) for r in rows]
    with (out / CSV_NAME).open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)
    (out / JSON_NAME).write_text(json.dumps(records, indent=2) + "\n")


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    import torch

    import spio.jit

    if not torch.cuda.is_available():
        print("error: the matmul benchmark needs a CUDA GPU", file=sys.stderr)
        raise SystemExit(2)
    gpu = spio.jit.device_info(0).name
    bias = ", bias" if args.bias else ""
    print(
        f"GPU: {gpu}; torch {torch.__version__}; {args.dtype}, A {args.a_layout}, "
        f"B {args.b_layout}{bias}"
    )
    rows: list[MatmulRow] = []
    for params in args.params:
        rows += bench_shape(params, args, gpu)
    _print_table(rows)
    if args.out is not None:
        write_outputs(rows, args.out)


if __name__ == "__main__":
    main()
