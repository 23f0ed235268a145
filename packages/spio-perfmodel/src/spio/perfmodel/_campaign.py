"""Collecting training data: which layers to time, and timing them with the benchmark.

A campaign is a seeded sample of layers over the ranges Spio's targets name (C from 64 to
1024, H = W from 7 to 112, N from 1 to 512, R = S of 1, 3, 5 or 7, fp16 and some bf16), with
the benchmark's standard layers always in. Each layer's passes are timed on a sample of
their configs (`spio.kernels.bench --all-configs --sample-configs K`), because every config
compiles separately per layer: the full spaces of a few dozen layers would take hours of GPU
time, a sample of 40 a few minutes. The rows go to the benchmark's per-pass config-times
CSVs in one directory; a layer already there is skipped, so an interrupted campaign resumes.
Beside them, CAMPAIGN_TABLE keeps the benchmark's table of every layer timed: the default
config of each pass against cuDNN, whether Spio is faster everywhere.
"""

from __future__ import annotations

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
    MAX_ACTIVATION_BYTES is not sampled.
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
    attempts = 0
    while len(layers) < count:
        attempts += 1
        if attempts > 1000 * count:
            raise ValueError(f"could not sample {count} distinct layers")
        n, c, side = rng.choice(list(batches)), rng.choice(list(channels)), rng.choice(list(sides))
        if n * c * side * side * 2 > MAX_ACTIVATION_BYTES:
            continue
        extent = rng.choice(FILTERS)
        extent = min(extent, side)  # a filter no larger than the image
        dtype: Dtype = "bfloat16" if rng.random() < BF16_SHARE else "float16"
        layer = Conv2dGw8Params.make(
            n, c, side, side, r=extent, s=extent, padding=extent // 2, dtype=dtype
        )
        layers[layer] = None
    return list(layers)


def _is_positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def config_times_path(out_dir: Path, pass_name: str) -> Path:
    """The config-times CSV of pass_name that the benchmark writes into out_dir."""
    from spio.kernels.conv2d_gw8.bench import CONFIGS_CSV_NAME

    return out_dir / CONFIGS_CSV_NAME.format(pass_name=pass_name)


def layers_done(out_dir: Path, passes: Sequence[str]) -> set[Conv2dGw8Params]:
    """Layers with rows of every pass in out_dir's config-times CSVs."""
    done: set[Conv2dGw8Params] | None = None
    for pass_name in passes:
        path = config_times_path(out_dir, pass_name)
        have = set(read_config_times(path).select(pass_name).by_layer()) if path.exists() else set()
        done = have if done is None else done & have
    return done or set()


def collect(
    out_dir: str | Path,
    layers: Sequence[Conv2dGw8Params],
    configs_per_layer: int,
    passes: Sequence[str] = tuple(PASSES),
    graph: bool = True,
    as_launched: bool = False,
) -> list[Conv2dGw8Params]:
    """Time each layer's passes on a sample of configs_per_layer configs (plus the default)
    with the benchmark, into out_dir; return the layers timed now (not those already there).

    Needs a GPU, torch and the benchmark's dependencies (spio-kernels[bench]). graph times
    replays of CUDA graphs (the GPU's time; the benchmark's --cuda-graph). as_launched times
    each tile as the launcher runs it (the benchmark's --as-launched: every pass's row chunks
    cut evenly, and wgrad's walk and kernel improvements, producer warps among them), rows of
    launch "launcher".
    """
    import spio.jit
    from spio.kernels.conv2d_gw8 import bench

    spio.jit.device_info(0)  # (a clear ValueError where there is no GPU, before torch's)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    done = layers_done(out, passes)
    todo = [layer for layer in layers if layer not in done]
    # One benchmark run per filter, padding and dtype: it takes those once for all shapes.
    groups: dict[tuple[int, int, tuple[int, ...], str], list[Conv2dGw8Params]] = {}
    for layer in todo:
        groups.setdefault((layer.r, layer.s, layer.padding, layer.dtype), []).append(layer)
    for (r, s, padding, dtype), group in groups.items():
        argv = ["--shapes", *(f"{p.n}x{p.c}x{p.h}x{p.w}" for p in group)]
        argv += ["--r", str(r), "--s", str(s), "--pad", *(str(v) for v in padding)]
        argv += ["--dtype", dtype, "--passes", *passes, "--all-configs"]
        # (No plots: a PNG per sampled layer and pass says nothing about a campaign.)
        argv += ["--sample-configs", str(configs_per_layer), "--out", str(out), "--no-plots"]
        if graph:
            argv.append("--cuda-graph")
        if as_launched:
            argv.append("--as-launched")
        bench.main(argv)
        _keep_table(out)
    return todo


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
