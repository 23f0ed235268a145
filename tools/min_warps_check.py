"""Time each pass's launcher default against the defaults its heuristic would pick with other
warps-per-SM thresholds, per layer and pass (GPU).

    python tools/min_warps_check.py --layers 24x64x64x64x3 16x128x40x40x3 \
        --thresholds MIN_WARPS_PER_SM=10 LONG_WALK_MIN_WARPS_PER_SM=13

The thresholds decide where a heuristic steps down its ladder of tiles to fill the GPU with
more, smaller blocks (fprop's and dgrad's: 16-row chunks of four warps to 8-row ones), and
for wgrad also how many steps of images its blocks walk (wgrad_heuristic.MIN_WARPS_PER_SM,
LARGE_FILTER_MIN_WARPS_PER_SM for 5 x 5 filters and wider, and EIGHT_GROUP_MIN_WARPS_PER_SM
for the eight-group TMA tile). For each layer (--layers' N x C x H x W x K: K x K filters,
padding K // 2) and pass: the config a launch without one runs, and
for each --thresholds item (constants NAME=VALUE of the pass's heuristic module, several
joined by commas: fprop_spec for fprop and dgrad, wgrad_heuristic for wgrad) the heuristic's
tile with those values, placed as the launcher places its own (fprop and dgrad:
fprop_variants_check.placed; wgrad: wgrad.balanced_config_on). Items that pick the same
config are timed once. Timed in this process, alternating three rounds (CUDA-graph
replays), with cuDNN and the copy bandwidth; each config's warps per SM are printed, and the
fastest is checked against the fp32 reference.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import fprop_segments_check
from fprop_variants_check import placed
from wgrad_timing import (
    copy_and_cudnn,
    layer_name,
    named_layers,
    print_geomean,
    start,
    time_alternating,
)
from wgrad_timing import max_error as wgrad_max_error

import spio.jit
from spio.kernels.conv2d_gw8 import Conv2dGw8Params, fprop_spec, wgrad, wgrad_heuristic, wgrad_spec

#: fprop's and dgrad's thresholds (fprop_spec).
FPROP_THRESHOLDS = ("MIN_WARPS_PER_SM", "LONG_WALK_MIN_WARPS_PER_SM", "LONG_WALK_GROUP_ROWS")
#: Each pass's heuristic module, whose constants a --thresholds item sets, and the names it
#: may set.
HEURISTICS: dict[str, tuple[ModuleType, tuple[str, ...]]] = {
    "fprop": (fprop_spec, FPROP_THRESHOLDS),
    "dgrad": (fprop_spec, FPROP_THRESHOLDS),
    "wgrad": (
        wgrad_heuristic,
        ("MIN_WARPS_PER_SM", "LARGE_FILTER_MIN_WARPS_PER_SM", "EIGHT_GROUP_MIN_WARPS_PER_SM"),
    ),
}


def parse_thresholds(text: str, pass_: str) -> dict[str, int]:
    """The constants of a "NAME=VALUE,NAME=VALUE" --thresholds item for pass_'s heuristic."""
    names = HEURISTICS[pass_][1]
    values = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        if not sep or name not in names or not value.isdigit():
            raise SystemExit(
                f"--thresholds: {item!r} is not NAME=N with NAME one of {names} ({pass_})"
            )
        values[name] = int(value)
    return values


@contextlib.contextmanager
def thresholds_set(module: ModuleType, values: dict[str, int]) -> Iterator[None]:
    """module's constants set to values inside the block (the heuristics read them at each
    call)."""
    kept = {name: getattr(module, name) for name in values}
    for name, value in values.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in kept.items():
            setattr(module, name, value)


def launched_and_placer(pass_: str, params: Conv2dGw8Params) -> tuple[Any, Any]:
    """pass_'s launcher config for params, and how to place the heuristic's tile as the
    launcher does (a function of nothing: it reads the heuristic's constants when called)."""
    if pass_ == "wgrad":
        return wgrad.default_config_on(params), lambda: wgrad.balanced_config_on(
            params, wgrad.default_tile_on(params)
        )
    spec, _, _, default_on = fprop_segments_check.PASSES[pass_]
    sm_count = spio.jit.device_info(0).sm_count
    return default_on(params), lambda: placed(
        pass_, params, spec.default_config(params, sm_count), {}
    )


def configs_at(pass_: str, params: Conv2dGw8Params, thresholds: list[str]) -> dict[str, Any]:
    """The launcher's config, then for each --thresholds item the heuristic's tile with its
    values, placed as the launcher places its own; the launcher's tile placed that way must
    be the launcher's config (else this comparison would not be the launcher's, and it
    stops)."""
    launched, place = launched_and_placer(pass_, params)
    if place() != launched:
        raise SystemExit(
            f"{layer_name(params)} {pass_}: placement differs: {place()} != {launched}"
        )
    configs = {"launched": launched}
    for text in thresholds:
        with thresholds_set(HEURISTICS[pass_][0], parse_thresholds(text, pass_)):
            configs[text] = place()
    return configs


def warps_per_sm(pass_: str, params: Conv2dGw8Params, config: Any) -> float:
    """config's grid's warps per SM of this GPU."""
    spec = wgrad_spec if pass_ == "wgrad" else fprop_segments_check.PASSES[pass_][0]
    return spec.grid_blocks(params, config) * config.warps / spio.jit.device_info(0).sm_count


def max_error(pass_: str, params: Conv2dGw8Params, config: Any) -> float:
    """config's largest |error| against the fp32 reference, over the largest |reference|."""
    if pass_ == "wgrad":
        return wgrad_max_error(params, config)
    return fprop_segments_check.max_error(pass_, params, config)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", nargs="+", required=True, metavar="NxCxHxWxK")
    parser.add_argument("--thresholds", nargs="+", required=True, metavar="NAME=N,...")
    parser.add_argument("--passes", nargs="+", default=["fprop", "dgrad"], choices=HEURISTICS)
    args = parser.parse_args()
    for text in args.thresholds:
        for pass_ in args.passes:
            parse_thresholds(text, pass_)  # a typo stops the run before anything compiles
    copy = start()
    gains: dict[str, list[float]] = {text: [] for text in args.thresholds}
    for params in named_layers(args.layers, []):
        for pass_ in args.passes:
            configs = configs_at(pass_, params, args.thresholds)
            launched = configs["launched"]
            if len(set(configs.values())) == 1:
                print(f"{layer_name(params)} {pass_}: every threshold picks {launched}")
                continue
            times, cudnn_us = time_alternating(params, list(configs.values()), pass_)
            print(f"{layer_name(params)} {pass_}: cuDNN {cudnn_us:.2f} us", flush=True)
            for label, config in configs.items():
                us = times[config]
                ratio = times[launched] / us
                if label in gains:
                    gains[label].append(ratio)
                print(
                    f"  {label}: {us:.2f} us, "
                    f"{copy_and_cudnn(params, pass_, us, copy, cudnn_us)}, {ratio:.3f}x the "
                    f"launcher's; {warps_per_sm(pass_, params, config):.1f} warps an SM; {config}",
                    flush=True,
                )
            fastest = min(times, key=times.__getitem__)
            print(f"  fastest error {max_error(pass_, params, fastest):.1e}", flush=True)
    for label, ratios in gains.items():
        print(f"{label} against the launcher's:", end=" ")
        print_geomean(ratios)


if __name__ == "__main__":
    main()
