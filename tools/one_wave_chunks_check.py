"""fprop and dgrad on layers whose default grid is one wave at most: the default against the
same tile walking half as many rows (GPU).

    python tools/one_wave_chunks_check.py [--seeds 0 1 ...] [--min-mb 16] [--passes fprop dgrad]

_tiling.balance_waves keeps a grid of one wave or less as it is: it spreads over every SM
(spread_over_sms) and so "fills" it. At
128x64x64x64 dgrad, the same tile with half the rows a block (two waves) ran 1.023x faster
(H200, thirty-seventh session). This tool asks whether that holds wherever the default grid
is one wave: for the target layers and the campaign layers of --seeds (campaign_layers(44,
seed)) whose activations hold at least --min-mb MB (bound by DRAM, not by the walk's
latency), each pass's spec-level default (default_config) against shorter_walk of it where
its grid is one wave, timed in this process in alternating rounds (CUDA-graph replays, the
fastest round's median), with the grid's share of the GPU's block slots and whether
one_wave.split_one_wave, the rule default_config_on now applies, halves it.
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

from wgrad_timing import layer_name, start, time_alternating

import spio.jit
from spio.kernels.conv2d_gw8 import Conv2dGw8Params, dgrad, dgrad_spec, fprop, fprop_spec
from spio.kernels.conv2d_gw8.one_wave import split_one_wave
from spio.perfmodel._campaign import campaign_layers

TARGETS = [Conv2dGw8Params.make(n, 64, 64, 64, r=3, s=3, padding=1) for n in (128, 256, 96, 64)]
#: Grids of more blocks than this per SM are passed over before anything compiles: the
#: ladder's first tiles (4 warps, about 128 registers) fit 4 an SM. A tile that fits more is
#: left out of the comparison, not mistimed.
MAX_SLOTS_PER_SM = 4
#: Layers no campaign seed holds whose default is one wave of 32-row chunks (512 blocks of
#: the ladder's tile on 132 SMs): filters of 1 to 3 rows, images of 32 to 128 rows, some
#: of which 32 does not divide (48, 40): --held-out times these instead.
HELD_OUT = [
    Conv2dGw8Params.make(n, c, side, side, r=k, s=k, padding=(0, 1, 0, 1) if k == 2 else k // 2)
    for n, c, side, k in [
        (256, 128, 32, 1), (256, 128, 32, 3), (64, 512, 32, 3), (64, 512, 32, 2),
        (128, 64, 64, 1), (32, 256, 64, 2), (16, 512, 64, 3), (32, 256, 64, 3),
        (8, 256, 128, 3), (32, 64, 128, 3), (2, 1024, 128, 1),
        (128, 64, 48, 3), (32, 256, 48, 3), (8, 1024, 48, 1), (16, 512, 40, 3), (64, 128, 40, 1),
    ]
]  # fmt: skip
PASSES: dict[str, Any] = {
    "fprop": (fprop_spec, fprop.fprop_launch, fprop.compile_request),
    "dgrad": (dgrad_spec, dgrad.dgrad_launch, dgrad.compile_request),
}


def _layers(seeds: list[int], min_mb: float) -> list[Conv2dGw8Params]:
    """TARGETS and the seeds' campaign layers whose activations (half fprop's compulsory
    bytes) hold min_mb MB or more and whose default may be one wave."""
    sampled = [layer for seed in seeds for layer in campaign_layers(44, seed)]
    return [
        layer
        for layer in dict.fromkeys([*TARGETS, *sampled])
        if layer.compulsory_bytes("fprop") / 2 >= min_mb * 1e6
        and any(_may_fit_one_wave(layer, pass_) for pass_ in PASSES)
    ]


def _may_fit_one_wave(params: Conv2dGw8Params, pass_: str) -> bool:
    """Whether pass_'s spec-level default could be one wave (MAX_SLOTS_PER_SM blocks an SM at
    most) and has a shorter walk: the layers worth compiling."""
    spec = PASSES[pass_][0]
    sm_count = spio.jit.device_info(0).sm_count
    config = spec.default_config(params, sm_count)
    one_wave = spec.grid_blocks(params, config) <= MAX_SLOTS_PER_SM * sm_count
    return one_wave and spec.shorter_walk(params, config) is not None


def _precompile(layers: list[Conv2dGw8Params], passes: list[str]) -> None:
    """Compile every layer's spec-level default and its shorter walk in one parallel batch."""
    arch = spio.jit.device_info(0).arch
    sm_count = spio.jit.device_info(0).sm_count
    requests = {}
    for params in layers:
        for pass_ in passes:
            spec, _, request = PASSES[pass_]
            config = spec.default_config(params, sm_count)
            for candidate in (config, spec.shorter_walk(params, config)):
                if candidate is not None:
                    requests[(pass_, params, candidate)] = request(params, candidate, arch)
    spio.jit.compile_many(requests)


def _kernel_params(pass_: str, params: Conv2dGw8Params) -> Conv2dGw8Params:
    """The params of the problem pass_'s kernel solves (dgrad's: to_fprop_params)."""
    return dgrad_spec.to_fprop_params(params) if pass_ == "dgrad" else params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", nargs="+", type=int, default=list(range(14)))
    parser.add_argument("--min-mb", type=float, default=16.0)
    parser.add_argument("--held-out", action="store_true", help="time HELD_OUT's layers")
    parser.add_argument("--passes", nargs="+", default=["fprop", "dgrad"], choices=PASSES)
    args = parser.parse_args()
    copy = start()
    sm_count = spio.jit.device_info(0).sm_count
    layers = HELD_OUT if args.held_out else _layers(args.seeds, args.min_mb)
    _precompile(layers, args.passes)
    halved: dict[str, list[float]] = {pass_: [] for pass_ in args.passes}
    by_rule: dict[str, list[float]] = {pass_: [] for pass_ in args.passes}
    for params in layers:
        for pass_ in args.passes:
            spec, launch, _ = PASSES[pass_]
            config = spec.default_config(params, sm_count)
            shorter = spec.shorter_walk(params, config)
            placed = launch(params, config)
            slots = fprop.resident_slots(placed.kernel, placed.geometry)
            blocks = spec.grid_blocks(params, config)
            if shorter is None or blocks > slots:
                continue
            rule_halves = split_one_wave(_kernel_params(pass_, params), config) == shorter
            times, cudnn_us = time_alternating(params, [config, shorter], pass_)
            gain = times[config] / times[shorter]
            halved[pass_].append(gain)
            by_rule[pass_].append(gain if rule_halves else 1.0)
            share = params.compulsory_bytes(pass_) / 1e3 / times[config] / copy
            print(
                f"{layer_name(params)} {params.dtype} {pass_}: blocks {blocks} of {slots} "
                f"slots; block_p {config.block_p} {times[config]:.2f} us ({share:.1%} of copy, "
                f"{cudnn_us / times[config]:.2f}x cuDNN) -> block_p {shorter.block_p} "
                f"{times[shorter]:.2f} us: {gain:.3f}x; the rule "
                f"{'halves' if rule_halves else 'keeps'}",
                flush=True,
            )
    for pass_, values in halved.items():
        if values:
            print(
                f"{pass_}: {len(values)} layers; halved {statistics.geometric_mean(values):.3f}x "
                f"in geometric mean ({min(values):.3f}-{max(values):.3f}x), the rule's choice "
                f"{statistics.geometric_mean(by_rule[pass_]):.3f}x "
                f"({min(by_rule[pass_]):.3f}-{max(by_rule[pass_]):.3f}x)",
                flush=True,
            )


if __name__ == "__main__":
    main()
