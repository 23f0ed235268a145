"""Benchmark grouped conv2d gw8 against cuDNN and the device's copy bandwidth.

    python -m spio.kernels.bench conv2d_gw8 [--shapes 128x64x64x64 ...] [--passes fprop]
        [--dtype float16] [--r 3] [--s 3] [--pad P ...] [--all-configs [--sample-configs K]
        [--where FIELD=V[,V...] ...]] [--no-pdl] [--cuda-graph] [--nondeterministic] [--out DIR]
    python -m spio.kernels.bench conv2d_gw8 --layer 64x64x64 --batch-sweep 1 2 4 ... 512
        --out DIR

(`python -m spio.kernels.conv2d_gw8.bench ...` runs the same.)

Method (docs/TARGETS.md): everything runs in this one process on one GPU, on the same
buffers for every contender. Each timing is CUDA events around a loop of `--launches`
(>= 20) launches, repeated `--repetitions` (>= 9) times; the median repetition is reported
per launch, after one untimed warm-up loop. L2 is not flushed between launches: each launch
streams far more than L2 for the large shapes, while small shapes (N = 32) measure the
L2-resident regime, as TARGETS.md intends. Effective bandwidth = compulsory DRAM bytes
(Conv2dGw8Params.compulsory_bytes) / time. Copy bandwidth: `b.copy_(a)` of a 1 GiB buffer,
bytes read + written / time, measured once per run. cuDNN: torch.nn.functional.conv2d with
torch.backends.cudnn.benchmark = True, channels_last, the same dtype, groups = C / 8.
Spio runs the config its entries run without one (`default_config_on`: the heuristic with
its walk balanced over the GPU's waves). Spio's kernels launch with programmatic
dependent launch (sm_90 and newer), as its entry points do by default: each launch's blocks
are placed while the previous launch finishes, the loop's back-to-back launches included;
--no-pdl launches them in plain stream order (the rows' spio_launch column says which).
--cuda-graph times replays of a CUDA graph of each loop instead (Spio's and cuDNN's alike):
the GPU's time without the host's launch cost, which otherwise bounds layers of a few
microseconds (the rows' timing column says which; the copy bandwidth is timed the same way
either way).
--nondeterministic runs wgrad's default config with atomic sums where they pay
(`wgrad.atomic_config_on`, as conv2d_gw8_wgrad(..., deterministic=False) does): faster, but
the last bits of the weight gradient vary from run to run (the rows' spio_config says
atomic_sums=True where it was taken).
--all-configs times every config of the space per shape and prints the best and the
default's regret (default time / best time - 1). --sample-configs K (with --all-configs)
times the default and K other configs of the space drawn at random, the same ones on every
run for a shape and pass (`sample_configs`). --where FIELD=V[,V...] ... (with --all-configs)
narrows the space first to the configs whose fields take those values (`config_where`), the
default still timed beside them: a campaign aimed at a corner of the space. --as-launched
(with --all-configs) times each tile as a launch that chose it runs it on this GPU
(`launched_configs`, `placement.placed_config_on`: every pass's rows in even chunks, wgrad's
walk and kernel improvements) and writes each tile's row with that time and launch
"launcher".

Shapes: --shapes takes N x C x H x W; --batch-sweep N ... runs the one layer --layer C x H x W
(default 64x64x64) at each batch size instead. --pad takes 1, 2 or 4 ints (every side;
vertical and horizontal; top, bottom, left and right); without it the padding keeps the
output as large as the input (`bench_results.same_padding`: 1 for --r 3 --s 3, 0 for 1 x 1).

Outputs: a table on stdout. With --out DIR (created if missing) also
- DIR/conv2d_gw8_bench.csv and DIR/conv2d_gw8_bench.json: one row per shape x pass x
  contender (spio, cudnn) with the GPU, torch and cuDNN versions, dtype, shape, R, S,
  padding, spio config, median us, effective GB/s, fraction of copy bandwidth, speed-up over
  cuDNN, copy bandwidth, launches and repetitions (`bench_results.BenchRow`);
- with --all-configs, DIR/conv2d_gw8_configs_<pass>.csv: every timed tile's median time
  per layer (the latency models' training data: a default with placement fields set for
  the GPU, such as wgrad's padded slabs, is timed for the table but not written; its tile
  is sampled and written instead), with the layer (N, C, H, W, R, S, padding, dtype) and timing mode
  (`bench_results.write_config_times`; appended to, so several runs can share one file,
  one file per pass because wgrad's configs have other fields than fprop's and dgrad's);
- one PNG per layer and pass, batch_size_vs_eff_bandwidth__<gpu>__<pass>_<layer>.png:
  effective GB/s against N (log2 axis) for Spio and cuDNN, with the copy bandwidth as a
  horizontal line; meaningful with --batch-sweep (none with --no-plots).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import random
import sys
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NoReturn

from ..timing import copy_bandwidth_gbs, time_us
from . import dgrad_spec, placement, wgrad_spec
from .bench_results import (
    BenchRow,
    contender_rows,
    padding_option,
    shape_text,
    upgrade_config_times,
    write_bandwidth_plots,
    write_config_times,
    write_csv,
    write_json,
)
from .config_where import ConfigWhere
from .dgrad import compile_request as dgrad_request
from .dgrad import conv2d_gw8_dgrad, get_dgrad_kernel
from .dgrad import default_config_on as dgrad_default_on
from .fprop import compile_request as fprop_request
from .fprop import conv2d_gw8_fprop, get_kernel
from .fprop import default_config_on as fprop_default_on
from .fprop_spec import FpropConfig, config_space
from .params import Conv2dGw8Params
from .wgrad import atomic_config_on, conv2d_gw8_wgrad, get_wgrad_kernels
from .wgrad import compile_request as wgrad_request
from .wgrad import default_config_on as wgrad_default_on

DEFAULT_SHAPES = ("128x64x64x64", "256x64x64x64", "32x64x64x64", "64x128x32x32")
DEFAULT_LAYER = "64x64x64"
CSV_NAME = "conv2d_gw8_bench.csv"
#: --all-configs' per-pass file of every config's time, formatted with pass_name.
CONFIGS_CSV_NAME = "conv2d_gw8_configs_{pass_name}.csv"
JSON_NAME = "conv2d_gw8_bench.json"
#: Threads that place --as-launched's tiles side by side (each may compile twice or more).
PLACE_THREADS = 8


def parse_shape(text: str, r: int, s: int, padding: Any, dtype: str) -> Conv2dGw8Params:
    """Parse NxCxHxW into params."""
    n, c, h, w = (int(v) for v in text.lower().split("x"))
    return Conv2dGw8Params.make(n, c, h, w, r=r, s=s, padding=padding, dtype=dtype)  # type: ignore[arg-type]


class Buffers:
    """One set of device buffers for every pass and contender of a shape (torch tensors).

    x, y, grad_x, grad_y: NHWC activations; w: Spio's weights (c x r x s x 8); grad_w: f32
    weights; bias: f32 or None; workspace: wgrad's partial sums for the largest config.
    """

    def __init__(self, params: Conv2dGw8Params, passes: Sequence[str], configs: Any) -> None:
        import torch

        dtype = getattr(torch, params.dtype)
        self.x = torch.randn(params.input_shape, device="cuda").to(dtype)
        w = torch.randn(params.weight_shape, device="cuda") / (8 * params.r * params.s)
        self.w = w.to(dtype)
        self.y = torch.empty(params.output_shape, device="cuda", dtype=dtype)
        self.bias = torch.randn(params.c, device="cuda") if params.has_bias else None
        self.grad_y = torch.randn(params.output_shape, device="cuda").to(dtype)
        self.grad_x = torch.empty(params.input_shape, device="cuda", dtype=dtype)
        self.grad_w = torch.empty(params.weight_shape, device="cuda", dtype=torch.float32)
        workspace = 4
        if "wgrad" in passes:
            sizes = [wgrad_spec.workspace_bytes(params, c) for c in configs["wgrad"]]
            workspace = max(sizes, default=4)
        self.workspace = torch.empty(workspace // 4, device="cuda", dtype=torch.float32)


def _spio_launcher(
    pass_: str, params: Conv2dGw8Params, buffers: Buffers, config: Any, pdl: bool = True
) -> Callable[[], None]:
    """Return a function that runs Spio's pass once with config on the buffers (pdl: with
    programmatic dependent launch)."""
    b = buffers
    if pass_ == "fprop":
        get_kernel(params, config)
        return lambda: conv2d_gw8_fprop(b.y, b.x, b.w, b.bias, params, config, pdl=pdl)
    if pass_ == "dgrad":
        get_dgrad_kernel(params, config)
        return lambda: conv2d_gw8_dgrad(b.grad_x, b.grad_y, b.w, params, config, pdl=pdl)
    get_wgrad_kernels(params, config)
    deterministic = not config.atomic_sums
    return lambda: conv2d_gw8_wgrad(
        b.grad_w,
        b.x,
        b.grad_y,
        params,
        config,
        workspace=b.workspace,
        pdl=pdl,
        deterministic=deterministic,
    )


def _cudnn_launcher(pass_: str, params: Conv2dGw8Params, buffers: Buffers) -> Callable[[], object]:
    """Return a function that runs PyTorch's (cuDNN's) pass once on the same buffers.

    NCHW views of the NHWC tensors are channels_last, as are the K x 8 x R x S views of the
    weights. Asymmetric padding pads x explicitly (as a model would with F.pad).
    """
    import torch
    import torch.nn.functional as F  # noqa: N812

    b = buffers
    x = b.x.permute(0, 3, 1, 2)
    w = b.w.permute(0, 3, 1, 2)
    grad_y = b.grad_y.permute(0, 3, 1, 2)
    pad = (params.pad_left, params.pad_right, params.pad_top, params.pad_bottom)
    symmetric = pad[0] == pad[1] and pad[2] == pad[3]
    padding = [pad[2], pad[0]] if symmetric else [0, 0]
    if not symmetric:
        x = F.pad(x, pad).contiguous(memory_format=torch.channels_last)
    groups = params.groups
    if pass_ == "fprop":
        if symmetric:
            return lambda: F.conv2d(x, w, b.bias, padding=padding, groups=groups)
        return lambda: F.conv2d(F.pad(b.x.permute(0, 3, 1, 2), pad), w, b.bias, groups=groups)
    mask = [pass_ == "dgrad", pass_ == "wgrad", False]

    def backward() -> None:
        torch.ops.aten.convolution_backward(
            grad_y, x, w, None, [1, 1], padding, [1, 1], False, [0, 0], groups, mask
        )

    return backward


def bench_pass(
    pass_: str,
    params: Conv2dGw8Params,
    configs: Sequence[Any],
    buffers: Buffers,
    launches: int,
    repetitions: int,
    pdl: bool = True,
    graph: bool = False,
) -> tuple[dict[Any, float], float]:
    """Time the configs of one pass and cuDNN's on the same buffers: ({config: us}, cuDNN us);
    graph: each from replays of a CUDA graph (time_us). cuDNN runs with
    torch.backends.cudnn.benchmark on, as the method asks, whoever calls this (the setting
    is restored afterwards)."""
    import torch

    results = {}
    for config in configs:
        results[config] = time_us(
            _spio_launcher(pass_, params, buffers, config, pdl), launches, repetitions, graph
        )
    # (Callers other than main, spio-perfmodel's compare among them, left it off until the
    # thirteenth session: cuDNN's default algorithms, e.g. 84 us instead of 47 us for
    # 256x1024x8x8 wgrad on an H200.)
    benchmark = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = True
    try:
        cudnn_us = time_us(_cudnn_launcher(pass_, params, buffers), launches, repetitions, graph)
    finally:
        torch.backends.cudnn.benchmark = benchmark
    return results, cudnn_us


def bench_fprop(
    params: Conv2dGw8Params,
    configs: Sequence[FpropConfig],
    launches: int,
    repetitions: int,
) -> tuple[dict[FpropConfig, float], float]:
    """Time fprop's configs and cuDNN on one set of buffers; return ({config: us}, cudnn us)."""
    buffers = Buffers(params, ["fprop"], {})
    return bench_pass("fprop", params, configs, buffers, launches, repetitions)


def precompile(params: Conv2dGw8Params, configs: dict[str, Sequence[Any]]) -> None:
    """Compile every (pass, config) in parallel worker processes (spio.jit.compile_many,
    with its progress bar), so that timing each config then finds it in the cache."""
    import spio.jit

    arch = spio.jit.device_info(0).arch
    makers: dict[str, Callable[[Conv2dGw8Params, Any, str], Any]] = {
        "fprop": fprop_request,
        "dgrad": dgrad_request,
        "wgrad": wgrad_request,
    }
    requests = {
        (pass_, config): makers[pass_](params, config, arch)
        for pass_, pass_configs in configs.items()
        for config in pass_configs
    }
    spio.jit.compile_many(requests)


#: Each pass's config space and the config its entry runs without one (on device 0), by
#: pass name.
PASS_CONFIGS: dict[str, tuple[Callable[[Conv2dGw8Params], Any], Callable[..., Any]]] = {
    "fprop": (config_space, fprop_default_on),
    "dgrad": (dgrad_spec.config_space, dgrad_default_on),
    "wgrad": (wgrad_spec.config_space, wgrad_default_on),
}


def sample_configs(space: Sequence[Any], default: Any, k: int, key: str) -> list[Any]:
    """The configs --sample-configs k times for one shape and pass: default first, then k
    others drawn without replacement from space (all of them, in a shuffled order, when k
    is at least their number) by `random.Random(zlib.crc32(key))`.

    Why a sample: a pass's full config space is 300-1400 configs per shape, and each config
    compiles separately for each shape, so timing all of them for many shapes does not fit
    in a GPU session; a sample of each keeps a data-collection run for the latency models
    within one. The key (`f"{shape}:{pass}"` in the benchmark) makes the draw deterministic:
    the same shape and pass get the same configs on every run and machine, other shapes get
    others. k < 1 raises ValueError.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    others = [config for config in dict.fromkeys(space) if config != default]
    rng = random.Random(zlib.crc32(key.encode("utf-8")))
    return [default, *rng.sample(others, min(k, len(others)))]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer (>= 1), got {value}")
    return value


def _dims(text: str, count: int, what: str) -> tuple[int, ...]:
    parts = text.lower().split("x")
    if len(parts) != count or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"{what} must be {count} positive integers joined by 'x', got {text!r}")
    return tuple(int(p) for p in parts)


#: How the command is spelled in usage and error messages.
PROG = "python -m spio.kernels.bench conv2d_gw8"


def build_parser() -> argparse.ArgumentParser:
    """Return the command line parser (no validation across options: see `parse_args`)."""
    parser = argparse.ArgumentParser(prog=PROG, description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--shapes", nargs="+", default=None, help=f"N x C x H x W (default {DEFAULT_SHAPES})"
    )
    parser.add_argument(
        "--batch-sweep",
        nargs="+",
        type=_positive_int,
        default=None,
        metavar="N",
        help="run --layer at each of these batch sizes instead of --shapes",
    )
    parser.add_argument(
        "--layer", default=None, help=f"C x H x W of --batch-sweep (default {DEFAULT_LAYER})"
    )
    parser.add_argument(
        "--passes", nargs="+", default=list(PASS_CONFIGS), choices=list(PASS_CONFIGS)
    )
    parser.add_argument("--dtype", default="float16", choices=["float16", "bfloat16"])
    parser.add_argument("--r", type=int, default=3)
    parser.add_argument("--s", type=int, default=3)
    parser.add_argument(
        "--pad",
        type=int,
        nargs="+",
        default=None,
        help="zero padding: 1, 2 or 4 ints (default: the output as large as the input, "
        "1 for 3 x 3 filters, 0 for 1 x 1)",
    )
    parser.add_argument("--launches", type=int, default=20)
    parser.add_argument("--repetitions", type=int, default=9)
    parser.add_argument(
        "--all-configs",
        action="store_true",
        help="time every config of each pass's config space (or a sample: --sample-configs)",
    )
    parser.add_argument(
        "--sample-configs",
        type=int,
        default=None,
        metavar="K",
        help="with --all-configs: time the default config and K others drawn at random "
        "(the same ones on every run for a shape and pass) instead of every config",
    )
    parser.add_argument(
        "--where",
        nargs="+",
        action="extend",
        default=None,
        metavar="FIELD=V[,V...]",
        help="with --all-configs: time only the configs whose fields take these values (and the "
        "default), e.g. --where block_p=4,8 prefetch=6",
    )
    parser.add_argument(
        "--as-launched",
        action="store_true",
        help="with --all-configs: time each tile as a launch that chose it runs it on this GPU "
        "(its row chunks cut evenly; wgrad's walk and kernel improvements) and write its row "
        "with launch 'launcher'",
    )
    parser.add_argument(
        "--no-pdl",
        action="store_true",
        help="launch Spio's kernels in plain stream order, without programmatic dependent "
        "launch (which lets each launch overlap the previous kernel's tail on sm_90+)",
    )
    parser.add_argument(
        "--cuda-graph",
        action="store_true",
        help="time replays of a CUDA graph of each loop of launches (Spio's and cuDNN's): the "
        "GPU's time without the host's launch cost, which bounds small layers otherwise",
    )
    parser.add_argument(
        "--nondeterministic",
        action="store_true",
        help="wgrad: add the blocks' sums atomically where that pays (deterministic=False): "
        "faster, but the last bits of the result vary from run to run",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="write CSV, JSON and PNG plots into this directory (created if missing)",
    )
    parser.add_argument(
        "--no-plots",
        action="store_true",
        help="with --out: write no PNG plots (a campaign of sampled layers keeps only its tables)",
    )
    return parser


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse and check the command line; set args.shapes to the NxCxHxW strings to run.

    Exits through argparse (status 2, a message naming the option) on bad input.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.launches < 20 or args.repetitions < 9:
        parser.error("the method needs --launches >= 20 and --repetitions >= 9")
    if args.batch_sweep is not None:
        if args.shapes is not None:
            parser.error("give either --shapes or --batch-sweep, not both")
        layer = args.layer or DEFAULT_LAYER
        try:
            _dims(layer, 3, "--layer")
        except ValueError as e:
            parser.error(str(e))
        args.shapes = [f"{n}x{layer.lower()}" for n in dict.fromkeys(args.batch_sweep)]
    elif args.layer is not None:
        parser.error("--layer goes with --batch-sweep; use --shapes NxCxHxW otherwise")
    elif args.shapes is None:
        args.shapes = list(DEFAULT_SHAPES)
    if args.sample_configs is not None:
        if not args.all_configs:
            parser.error("--sample-configs goes with --all-configs (it samples the config space)")
        if args.sample_configs < 1:
            parser.error(f"--sample-configs must be >= 1, got {args.sample_configs}")
    args.config_where = None
    if args.where is not None:
        if not args.all_configs:
            parser.error("--where goes with --all-configs (it narrows the config space)")
        try:
            args.config_where = ConfigWhere.parse(args.where)
        except ValueError as e:
            parser.error(f"--where: {e}")
    if args.as_launched and not args.all_configs:
        parser.error("--as-launched goes with --all-configs (it changes how the tiles are timed)")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out} is a file; give a directory to write the results into")
    try:
        args.padding = padding_option(args.pad, args.r, args.s)
        for text in args.shapes:
            _dims(text, 4, "a shape")
            params = parse_shape(text, args.r, args.s, args.padding, args.dtype)
    except (TypeError, ValueError) as e:
        parser.error(str(e))
    if args.config_where is not None:
        try:
            check_where(args.config_where, params, args.passes)
        except ValueError as e:
            parser.error(f"--where: {e}")
    return args


def check_where(where: ConfigWhere, params: Conv2dGw8Params, passes: Sequence[str]) -> None:
    """ValueError where a condition names no field of a pass's configs or gives a value of
    another type (checked on params' config spaces; compiles nothing)."""
    for pass_ in passes:
        where.for_config(next(iter(PASS_CONFIGS[pass_][0](params))), pass_)


def _report(
    text: str,
    pass_: str,
    params: Conv2dGw8Params,
    default: Any,
    times: dict[Any, float],
    cudnn_us: float,
    copy_gbs: float,
    run: dict[str, Any],
) -> list[BenchRow]:
    """Print the default config's table line; return its rows for the CSV and JSON."""
    nbytes = params.compulsory_bytes(pass_)  # type: ignore[arg-type]
    us = times[default]
    gbs = nbytes / us / 1e3
    print(
        f"{text:>16} {pass_:>5} {us:8.1f} {gbs:9.0f} {gbs / copy_gbs:7.1%} "
        f"{cudnn_us:8.1f} {nbytes / cudnn_us / 1e3:10.0f} {cudnn_us / us:7.2f}x",
        flush=True,
    )
    return contender_rows(params, pass_, default, us, cudnn_us, copy_gbs=copy_gbs, **run)


def _report_best(
    pass_: str, params: Conv2dGw8Params, default: Any, times: dict[Any, float], copy_gbs: float
) -> None:
    """Print the best config of an exhaustive run and the default's regret."""
    nbytes = params.compulsory_bytes(pass_)  # type: ignore[arg-type]
    best = min(times, key=times.__getitem__)
    best_gbs = nbytes / times[best] / 1e3
    print(
        f"{'':>16} best {times[best]:.1f} us ({best_gbs:.0f} GB/s, "
        f"{best_gbs / copy_gbs:.1%}) {best}; default {default} regret "
        f"{times[default] / times[best] - 1:.1%} of {len(times)} configs"
    )


def _configs_to_time(
    args: argparse.Namespace, params: Conv2dGw8Params, pass_: str, default: Any
) -> list[Any]:
    """The configs of pass_ to time: the default alone; with --all-configs the default and
    the pass's config space (narrowed by --where), or with --sample-configs its sample around
    the default's tile (`sample_configs`, keyed by shape and pass)."""
    if not args.all_configs:
        return [default]
    space = PASS_CONFIGS[pass_][0](params)
    if args.config_where is not None:
        space = args.config_where.select(list(space), pass_)
        if not space:
            where = args.config_where
            print(f"{shape_text(params)} {pass_}: no config has {where}; the default alone")
    if args.sample_configs is None:
        return list(space) if default in space else [default, *space]
    key = f"{shape_text(params)}:{pass_}"
    sample = sample_configs(space, tile_of(default), args.sample_configs, key)
    return list(dict.fromkeys([default, *sample]))


def tile_of(config: Any) -> Any:
    """config with its placement fields (the config type's PLACEMENT_FIELDS, which launchers
    set on a chosen config for its GPU) at their defaults: the tile that a config space holds
    and a latency model scores."""
    placed = getattr(config, "PLACEMENT_FIELDS", ())
    fields = dataclasses.fields(config)
    return dataclasses.replace(config, **{f.name: f.default for f in fields if f.name in placed})


def tile_times(times: dict[Any, float]) -> dict[Any, float]:
    """The times of the configs that are tiles (tile_of(config) == config): what the config
    times CSV keeps, since latency models train on tiles only (a placed default, timed for
    the table, is left out)."""
    return {config: us for config, us in times.items() if tile_of(config) == config}


def launched_configs(pass_: str, params: Conv2dGw8Params, configs: Sequence[Any]) -> dict[Any, Any]:
    """Each tile among configs (tile_of(config) == config; a placed default's tile is sampled
    beside it) and the config a launch that chose it runs on the current GPU. Placing a wgrad
    tile compiles its kernel to learn its occupancy: the tiles are placed side by side in
    threads (NVRTC lets go of the GIL)."""
    tiles = list(dict.fromkeys(config for config in configs if tile_of(config) == config))
    if not tiles:
        return {}
    with ThreadPoolExecutor(min(len(tiles), PLACE_THREADS)) as pool:
        placed = list(pool.map(lambda tile: placement.placed_config_on(pass_, params, tile), tiles))
    return dict(zip(tiles, placed, strict=True))


def _fail(message: str) -> NoReturn:
    """Stop the run with message on stderr and status 2, as argparse's errors and the matmul
    benchmark's do: what the run was given cannot run here."""
    print(f"{PROG}: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark from the command line, print the table and write --out files."""
    args = parse_args(argv)
    if (
        args.out is not None
        and not args.no_plots
        and importlib.util.find_spec("matplotlib") is None
    ):
        # Said before timing: the plots are drawn last, after minutes on the GPU.
        _fail('the plots need matplotlib: pip install "spio-kernels[bench]", or pass --no-plots')

    import torch

    try:
        gpu = torch.cuda.get_device_name()
    except (AssertionError, RuntimeError):
        # (torch without CUDA asserts; with CUDA and no GPU it raises RuntimeError.)
        _fail("the conv2d_gw8 benchmark needs a CUDA GPU")
    if args.out is not None:
        # (Made once the run can go ahead: a run refused above leaves no empty folder.)
        try:
            args.out.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            _fail(f"--out {args.out}: {error.strerror}")
    torch.backends.cudnn.benchmark = True
    padding = args.padding
    run: dict[str, Any] = {
        "gpu": gpu,
        "torch_version": str(torch.__version__),
        "cudnn_version": str(torch.backends.cudnn.version()),
        "launches": args.launches,
        "repetitions": args.repetitions,
        "spio_launch": "ordered" if args.no_pdl else "pdl",
        "timing": "graph" if args.cuda_graph else "loop",
    }
    print(
        f"device: {gpu}, torch {run['torch_version']}, cuDNN {run['cudnn_version']}, "
        f"spio launches: {run['spio_launch']}, timing: {run['timing']}"
    )
    copy_gbs = copy_bandwidth_gbs(args.launches, args.repetitions)
    print(f"copy bandwidth (1 GiB, read + write): {copy_gbs:.0f} GB/s")
    header = (
        f"{'shape':>16} {'pass':>5} {'spio us':>8} {'spio GB/s':>9} {'of copy':>7} "
        f"{'cuDNN us':>8} {'cuDNN GB/s':>10} {'speed-up':>8}"
    )
    print(header)
    rows: list[BenchRow] = []
    for text in args.shapes:
        params = parse_shape(text, args.r, args.s, padding, args.dtype)
        defaults = {p: PASS_CONFIGS[p][1](params) for p in args.passes}
        if args.nondeterministic and "wgrad" in defaults:
            defaults["wgrad"] = atomic_config_on(params, defaults["wgrad"])
        configs: dict[str, Sequence[Any]] = {
            p: _configs_to_time(args, params, p, defaults[p]) for p in args.passes
        }
        launched: dict[str, dict[Any, Any]] = {}
        if args.as_launched:
            launched = {p: launched_configs(p, params, configs[p]) for p in args.passes}
            configs = {
                p: list(dict.fromkeys([defaults[p], *launched[p].values()])) for p in args.passes
            }
        if args.all_configs and args.out is not None:
            # (Before any timing: a file that cannot take the rows stops the run here.)
            for pass_ in args.passes:
                path = args.out / CONFIGS_CSV_NAME.format(pass_name=pass_)
                upgrade_config_times(path, defaults[pass_])
        buffers = Buffers(params, args.passes, configs)
        if args.all_configs:
            precompile(params, configs)
        for pass_ in args.passes:
            default = defaults[pass_]
            pass_configs = configs[pass_]
            if args.all_configs:
                from tqdm import tqdm

                pass_configs = list(tqdm(pass_configs, desc=f"time {pass_} {text}", leave=False))
            times, cudnn_us = bench_pass(
                pass_,
                params,
                pass_configs,
                buffers,
                args.launches,
                args.repetitions,
                pdl=not args.no_pdl,
                graph=args.cuda_graph,
            )
            rows += _report(text, pass_, params, default, times, cudnn_us, copy_gbs, run)
            if args.all_configs:
                _report_best(pass_, params, default, times, copy_gbs)
                if args.out is not None:
                    path = args.out / CONFIGS_CSV_NAME.format(pass_name=pass_)
                    if args.as_launched:
                        rows_times = {t: times[c] for t, c in launched[pass_].items()}
                    else:
                        rows_times = tile_times(times)
                    write_config_times(
                        gpu,
                        pass_,
                        params,
                        rows_times,
                        path,
                        timing=run["timing"],
                        launch="launcher" if args.as_launched else "tile",
                    )
    if args.out is not None:
        written = [write_csv(rows, args.out / CSV_NAME), write_json(rows, args.out / JSON_NAME)]
        if not args.no_plots:
            written += write_bandwidth_plots(rows, args.out)
        for path in written:
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
