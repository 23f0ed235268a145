"""Time wgrad with its partial sums dropped from L2 after the reduction
(WgradConfig.discard_partials) against the same config keeping them, per layer.

    python tools/wgrad_discard_check.py [--layers NxCxHxWxK ...]

For each layer (a named list, or --layers' N x C x H x W x K: K x K filters, padding K // 2),
`choose_config("wgrad", ...)`'s config as the launcher places it, without and with
discard_partials whatever wgrad.discard_config_on would say (it takes tiles of
DISCARD_MIN_GROUPS groups or more), and whether it takes it. Timed in this process,
alternating three rounds (CUDA-graph replays of the whole pass, the fastest round's
median), with cuDNN and the copy bandwidth. Needs a GPU.
"""

from __future__ import annotations

import dataclasses

from wgrad_timing import WGRAD_LAYERS, layers_and_copy, speed_up, time_alternating

from spio.kernels.conv2d_gw8 import wgrad
from spio.perfmodel import choose_config

#: The placement tools' layers and four more, two of them with 5 x 5 and 7 x 7 filters.
NAMED = [
    *WGRAD_LAYERS,
    (64, 64, 56, 56, 7), (32, 128, 28, 28, 5), (128, 256, 14, 14, 3), (4, 64, 32, 32, 3),
]  # fmt: skip


def main() -> None:
    layers, copy = layers_and_copy(__doc__.splitlines()[0], NAMED)
    for params in layers:
        chosen = choose_config("wgrad", params).config
        kept = dataclasses.replace(chosen, discard_partials=False)
        discarded = dataclasses.replace(chosen, discard_partials=True)
        times, cudnn_us = time_alternating(params, [kept, discarded])
        before, after = times[kept], times[discarded]
        taken = wgrad.discard_config_on(kept).discard_partials
        print(
            f"{params.n}x{params.c}x{params.h}x{params.w} {params.r}x{params.s}: "
            f"{before:.2f} -> {after:.2f} us {speed_up(params, before, after, copy, cudnn_us)}; "
            f"{chosen.block_g} groups a block, discard_config_on takes it: {taken}; {kept}",
            flush=True,
        )


if __name__ == "__main__":
    main()
