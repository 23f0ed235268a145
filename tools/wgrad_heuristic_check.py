"""Time the wgrad heuristic's config on a GPU with TMA (wgrad_tma_tile.tma_tile) against the
same heuristic without that rule, per layer.

    python tools/wgrad_heuristic_check.py [--layers NxCxHxWxK ...]

For each layer (WGRAD_LAYERS and a few more 5 x 5 and N = 32 layers, or --layers' N x C x H
x W x K: K x K filters, padding K // 2): the heuristic's tile as the launcher runs it without
the TMA rule (wgrad.balanced_config_on of wgrad_heuristic.default_config), what a launch without a
config runs now (wgrad.default_config_on), and, where the rule also deepened the prefetch,
its tile at the old prefetch. Timed in this process, alternating three rounds (CUDA-graph
replays of the whole pass, the fastest round's median), with cuDNN and the copy bandwidth.
Needs a GPU.
"""

from __future__ import annotations

import dataclasses

from wgrad_timing import WGRAD_LAYERS, layers_and_copy, speed_up, time_alternating

import spio.jit
from spio.kernels.conv2d_gw8 import wgrad, wgrad_heuristic

NAMED = [
    *WGRAD_LAYERS,
    (128, 256, 16, 16, 5), (64, 512, 16, 16, 5), (32, 128, 32, 32, 3), (32, 512, 16, 16, 3),
    (64, 256, 28, 28, 3), (256, 256, 14, 14, 3),
]  # fmt: skip


def main() -> None:
    layers, copy = layers_and_copy(__doc__.splitlines()[0], NAMED)
    sm_count = spio.jit.device_info(0).sm_count
    for params in layers:
        before = wgrad.balanced_config_on(params, wgrad_heuristic.default_config(params, sm_count))
        now = wgrad.default_config_on(params)
        configs = [before, now]
        if now.prefetch != before.prefetch and now.tma != before.tma:
            configs.append(dataclasses.replace(now, prefetch=before.prefetch))
        times, cudnn_us = time_alternating(params, configs)
        line = (
            f"{params.n}x{params.c}x{params.h}x{params.w} {params.r}x{params.s}: "
            f"{times[before]:.2f} -> {times[now]:.2f} us "
            f"{speed_up(params, times[before], times[now], copy, cudnn_us)}"
        )
        if len(configs) > 2:
            line += f"; at prefetch {before.prefetch} {times[configs[2]]:.2f}"
        print(f"{line}; {before} -> {now}", flush=True)


if __name__ == "__main__":
    main()
