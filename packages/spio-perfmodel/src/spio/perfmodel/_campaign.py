"""Collecting training data: which layers to time, and timing them with the benchmark.

A campaign is a seeded sample of layers over the ranges Spio's targets name (C from 64 to
1024, H = W from 7 to 112, N from 1 to 512, R = S of 1, 3, 5 or 7, fp16 and some bf16), with
the benchmark's standard layers always in. Each layer's passes are timed on a sample of
their configs (`spio.kernels.bench --all-configs --sample-configs K`), because every config
compiles separately per layer: the full spaces of a few dozen layers would take hours of GPU
time, a sample of 40 a few minutes. The rows go to the benchmark's per-pass config-times
CSVs in one directory; a layer's pass already there is skipped, so an interrupted campaign
resumes (a layer cut off between its passes is timed for the passes it lacks only: rows
timed twice would count twice in training).
Beside them, CAMPAIGN_TABLE keeps the benchmark's table of every layer timed: the default
config of each pass against cuDNN, whether Spio is faster everywhere.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Sequence
from pathlib import Path

from spio.kernels.conv2d_gw8.params import Conv2dGw8Params, Dtype

from ._data import read_config_times
from ._passes import PASSES

CHANNELS = (64, 128, 256, 512, 1024)
SIDES = (7, 8, 14, 16, 28, 32, 56, 64, 112)
#: Widths and image sides that networks use besides CHANNELS and SIDES (ConvNeXt's 96 to
#: 768 channels, 160 and 320; 10 x 10 to 48 x 48 images), which no shipped model had timed
#: by 2026-11-30: on the H200, choose_config's picks on such widths ran 0.906-1.233x the
#: heuristic's configs (fprop and dgrad, 1.014x and 1.030x in geometric mean over 8
#: layers; 64x96x56x56 dgrad 0.906x, 128x160x28x28 dgrad 1.233x). A campaign on them:
#: `spio-perfmodel collect --channels ... --sides ...`.
NETWORK_CHANNELS = (96, 160, 192, 320, 384, 768)
NETWORK_SIDES = (10, 12, 13, 20, 24, 40, 48)
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
#: Filter sizes, 3 x 3 most often (what ConvNets mostly use).
FILTERS = (1, 3, 3, 3, 5, 7)
#: Share of sampled layers in bf16 (the rest fp16): the kernels differ only in the mma type.
BF16_SHARE = 0.15
#: Largest activation tensor a sampled layer may have (bytes): bounds a layer's timing.
MAX_ACTIVATION_BYTES = 256 * 2**20
#: The benchmark's table (its --out CSV) of every layer of a campaign, one run after another:
#: each run writes its own group's table, which the next would replace.
CAMPAIGN_TABLE = "conv2d_gw8_campaign_bench.csv"
#: Layers every campaign times: the targets' layers (TARGETS.md).
STANDARD_LAYERS = (
    Conv2dGw8Params.make(128, 64, 64, 64),
    Conv2dGw8Params.make(256, 64, 64, 64),
    Conv2dGw8Params.make(32, 64, 64, 64),
    Conv2dGw8Params.make(64, 128, 32, 32),
    Conv2dGw8Params.make(64, 1024, 16, 16),
    Conv2dGw8Params.make(128, 256, 14, 14),
)


def campaign_layers(
    count: int,
    seed: int = 0,
    batches: Sequence[int] = BATCHES,
    channels: Sequence[int] = CHANNELS,
    sides: Sequence[int] = SIDES,
) -> list[Conv2dGw8Params]:
    """The standard layers, then sampled ones up to count in all (deterministic in seed and
    the value lists; the defaults sample what every campaign so far sampled).

    batches, channels, sides: the batch sizes, channel counts (multiples of 8, the group
    width) and image sides (H = W) to sample from, for a campaign aimed at large batches or
    at NETWORK_CHANNELS and NETWORK_SIDES, say; a layer whose activations would pass
    MAX_ACTIVATION_BYTES is not sampled. ValueError, before any draw, where the values
    admit no layer within MAX_ACTIVATION_BYTES or fewer distinct layers than count.
    """
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    for name, values in (("batches", batches), ("sides", sides)):
        if not values or any(not _is_positive_int(v) for v in values):
            raise ValueError(f"{name} must be positive ints, got {list(values)}")
    if not channels or any(not _is_positive_int(c) or c % 8 for c in channels):
        raise ValueError(f"channels must be positive multiples of 8, got {list(channels)}")
    rng = random.Random(seed)
    layers = dict.fromkeys(STANDARD_LAYERS[:count])
    if len(layers) < count:
        _check_enough_layers(count, list(layers), batches, channels, sides)
    attempts = 0
    while len(layers) < count:
        attempts += 1
        if attempts > 1000 * count:
            raise ValueError(f"could not sample {count} distinct layers")
        n, c, side = rng.choice(list(batches)), rng.choice(list(channels)), rng.choice(list(sides))
        if not _fits(n, c, side):
            continue
        extent = rng.choice(FILTERS)
        extent = min(extent, side)  # a filter no larger than the image
        dtype: Dtype = "bfloat16" if rng.random() < BF16_SHARE else "float16"
        layer = Conv2dGw8Params.make(
            n, c, side, side, r=extent, s=extent, padding=extent // 2, dtype=dtype
        )
        layers[layer] = None
    return list(layers)


def _fits(n: int, c: int, side: int) -> bool:
    """Whether a layer of n x c x side x side has its activations within MAX_ACTIVATION_BYTES
    (2 bytes an element: float16 and bfloat16)."""
    return n * c * side * side * 2 <= MAX_ACTIVATION_BYTES


def _check_enough_layers(
    count: int,
    standard: Sequence[Conv2dGw8Params],
    batches: Sequence[int],
    channels: Sequence[int],
    sides: Sequence[int],
) -> None:
    """ValueError where fewer than count distinct layers can be drawn from the values (each
    batch, channel count and side within MAX_ACTIVATION_BYTES, with each of FILTERS' extents
    that the side holds, in both dtypes) beside the standard ones: said at once, where the
    draws would go on until their limit without a reason."""
    batches = sorted(set(batches))
    samplable = 0
    for c in set(channels):
        for side in set(sides):
            # The batch sizes up to the largest that fits (_fits, solved for n).
            fitting = bisect.bisect_right(batches, MAX_ACTIVATION_BYTES // (c * side * side * 2))
            samplable += fitting * len({min(extent, side) for extent in FILTERS}) * 2
    budget = f"{MAX_ACTIVATION_BYTES // 2**20} MiB"
    if samplable == 0:
        n, c, side = batches[0], min(channels), min(sides)
        smallest = n * c * side * side * 2 / 2**20
        raise ValueError(
            f"no layer of these batches, channels and sides fits within {budget} of "
            f"activations: the smallest, {n}x{c}x{side}x{side}, has {smallest:.0f} MiB"
        )
    # A standard layer (3 x 3, float16) that a draw can give too counts once.
    also_drawn = [
        p
        for p in standard
        if p.n in batches and p.c in channels and p.h in sides and _fits(p.n, p.c, p.h)
    ]
    possible = samplable + len(standard) - len(also_drawn)
    if possible < count:
        raise ValueError(
            f"only {possible} distinct layers, the {len(standard)} standard ones among them, "
            f"can come from these batches, channels and sides (within {budget} of activations, "
            f"filters of {sorted(set(FILTERS))} up to the side, float16 and bfloat16); "
            f"asked for {count}"
        )


def _is_positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def config_times_path(out_dir: Path, pass_name: str) -> Path:
    """The config-times CSV of pass_name that the benchmark writes into out_dir."""
    from spio.kernels.conv2d_gw8.bench import CONFIGS_CSV_NAME

    return out_dir / CONFIGS_CSV_NAME.format(pass_name=pass_name)


def passes_done(out_dir: Path, passes: Sequence[str]) -> dict[str, set[Conv2dGw8Params]]:
    """The layers with rows of each pass in out_dir's config-times CSVs."""
    done = {}
    for pass_name in passes:
        path = config_times_path(out_dir, pass_name)
        have = set(read_config_times(path).select(pass_name).by_layer()) if path.exists() else set()
        done[pass_name] = have
    return done


def layers_done(out_dir: Path, passes: Sequence[str]) -> set[Conv2dGw8Params]:
    """Layers with rows of every pass in out_dir's config-times CSVs."""
    done = passes_done(out_dir, passes).values()
    return set.intersection(*done) if done else set()


def collect(
    out_dir: str | Path,
    layers: Sequence[Conv2dGw8Params],
    configs_per_layer: int,
    passes: Sequence[str] = tuple(PASSES),
    graph: bool = True,
    as_launched: bool = False,
    where: Sequence[str] = (),
) -> list[Conv2dGw8Params]:
    """Time each layer's passes on a sample of configs_per_layer configs (plus the default)
    with the benchmark, into out_dir; return the layers timed now, those with a pass that
    was not there (a layer's passes already there are not timed again).

    Needs a GPU, torch and the benchmark's dependencies (spio-kernels[bench]). graph times
    replays of CUDA graphs (the GPU's time; the benchmark's --cuda-graph). as_launched times
    each tile as the launcher runs it (the benchmark's --as-launched: every pass's row chunks
    cut evenly, and wgrad's walk and kernel improvements, producer warps among them), rows of
    launch "launcher". where: FIELD=V[,V...] conditions that narrow each pass's space before
    the sample is drawn (the benchmark's --where; `config_where`): a campaign aimed at a corner
    of the space, each layer's default still timed beside it. ValueError, before any timing,
    where a condition is malformed or names no field of a pass's configs.
    """
    import spio.jit
    from spio.kernels.conv2d_gw8 import bench

    if where and layers:
        check_where(where, layers[0], passes)
    spio.jit.device_info(0)  # (a clear ValueError where there is no GPU, before torch's)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    done = passes_done(out, passes)
    missing = {layer: tuple(p for p in passes if layer not in done[p]) for layer in layers}
    todo = [layer for layer in layers if missing[layer]]
    # One benchmark run per filter, padding, dtype and passes to time: it takes those once
    # for all shapes.
    groups: dict[tuple[int, int, tuple[int, ...], str, tuple[str, ...]], list[Conv2dGw8Params]]
    groups = {}
    for layer in todo:
        key = (layer.r, layer.s, layer.padding, layer.dtype, missing[layer])
        groups.setdefault(key, []).append(layer)
    for (r, s, padding, dtype, group_passes), group in groups.items():
        argv = ["--shapes", *(f"{p.n}x{p.c}x{p.h}x{p.w}" for p in group)]
        argv += ["--r", str(r), "--s", str(s), "--pad", *(str(v) for v in padding)]
        argv += ["--dtype", dtype, "--passes", *group_passes, "--all-configs"]
        # (No plots: a PNG per sampled layer and pass says nothing about a campaign.)
        argv += ["--sample-configs", str(configs_per_layer), "--out", str(out), "--no-plots"]
        if graph:
            argv.append("--cuda-graph")
        if as_launched:
            argv.append("--as-launched")
        if where:
            argv += ["--where", *where]
        bench.main(argv)
        _keep_table(out)
    return todo


def check_where(where: Sequence[str], layer: Conv2dGw8Params, passes: Sequence[str]) -> None:
    """ValueError where the conditions are malformed or name no field of a pass's configs (on
    layer's config space; compiles nothing)."""
    from spio.kernels.conv2d_gw8 import bench
    from spio.kernels.conv2d_gw8.config_where import ConfigWhere

    bench.check_where(ConfigWhere.parse(where), layer, passes)


def _keep_table(out: Path) -> None:
    """Append the benchmark run's table to out's CAMPAIGN_TABLE and remove the run's own
    (its CSV and JSON), so the folder holds the campaign's tables only."""
    from spio.kernels.conv2d_gw8 import bench
    from spio.kernels.conv2d_gw8.bench_results import read_csv, write_csv

    run = out / bench.CSV_NAME
    if not run.is_file():
        return
    table = out / CAMPAIGN_TABLE
    kept = read_csv(table) if table.is_file() else []
    write_csv([*kept, *read_csv(run)], table)
    run.unlink()
    (out / bench.JSON_NAME).unlink(missing_ok=True)
