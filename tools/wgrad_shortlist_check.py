"""Time the launcher's deterministic wgrad config against a long shortlist of others (GPU).

    python tools/wgrad_shortlist_check.py [--top K] [--layers NxCxHxWxK ...]

For each layer (the N = 32 target's layer, or --layers' N x C x H x W x K: K x K filters,
padding K // 2): the shipped model's K best-predicted tiles (default 40, ten times what
autotuning times), each in every walk of its tile as the launcher would run it
(spio.kernels' wgrad_walks.walks_on: chunks, segments, deeper prefetch, with the placement
fields), and `choose_config("wgrad", ...)`'s config, all deterministic (no atomic sums).
Timed in this process, alternating three rounds (CUDA-graph replays, the fastest round's
median), with cuDNN and the copy bandwidth. Prints the fastest 15 and the launcher's rank:
whether another tile would beat the launcher's, rather than the kernel itself being what
limits the layer.
"""

from __future__ import annotations

import argparse
import time

from wgrad_timing import named_layers, speed_up, start, time_alternating

import spio.jit
from spio.kernels.conv2d_gw8 import wgrad_walks
from spio.perfmodel import choose_config, shipped_model

#: (n, c, h, w, r = s): the layer of the N = 32 target (<= 10 us a pass).
NAMED = [(32, 64, 64, 64, 3)]
#: Configs printed, fastest first.
SHOWN = 15


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=40, help="the model's best-predicted tiles")
    parser.add_argument("--layers", nargs="+", metavar="NxCxHxWxK", help="instead of NAMED")
    args = parser.parse_args()
    copy = start()
    gpu = spio.jit.device_info(0).name
    model = shipped_model("wgrad", gpu)
    if model is None:
        raise SystemExit(f"no wgrad model ships for {gpu}")
    for params in named_layers(args.layers, NAMED):
        launcher = choose_config("wgrad", params).config
        began = time.perf_counter()
        configs = [launcher]
        for tile in model.top_configs(params, args.top):
            configs += wgrad_walks.walks_on(params, tile, 0)
        configs = [config for config in dict.fromkeys(configs) if not config.atomic_sums]
        placed_s = time.perf_counter() - began
        times, cudnn_us = time_alternating(params, configs)
        ranked = sorted(times, key=times.__getitem__)
        print(
            f"{params.n}x{params.c}x{params.h}x{params.w} {params.r}x{params.s}: "
            f"{len(configs)} configs (placed in {placed_s:.0f} s); the launcher's "
            f"{times[launcher]:.2f} us ranks {ranked.index(launcher) + 1}; {launcher}",
            flush=True,
        )
        for config in ranked[:SHOWN]:
            against = speed_up(params, times[launcher], times[config], copy, cudnn_us)
            print(f"  {times[config]:.2f} us {against} {config}", flush=True)


if __name__ == "__main__":
    main()
