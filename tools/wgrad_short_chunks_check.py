"""Time wgrad tiles of short row chunks (block_p 1, 2, 4) against the launcher's configs on
layers from tiny to mid-sized (GPU).

    python tools/wgrad_short_chunks_check.py [--layers NxCxHxWxK ...]

For each layer (NAMED, or --layers' N x C x H x W x K: K x K filters, padding K // 2): the
heuristic's config as launched (wgrad.default_config_on), choose_config's, and the tiles
(16 columns, block_g 2 or 4 groups of one to a warp, one image) of each short chunk at
prefetch 2 and 4, each as the launcher runs it (improved_config_on); all deterministic.
Timed in this process, alternating three rounds (CUDA-graph replays, the fastest round's
median), with cuDNN. One line per layer: where short chunks pay, by how much, and with what
grid, so that a rule can say which layers get them.
"""

from __future__ import annotations

import argparse
from concurrent.futures import ThreadPoolExecutor

from wgrad_timing import named_layers, runnable, start, time_alternating

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, WgradConfig, wgrad, wgrad_spec
from spio.perfmodel import choose_config

NAMED = [
    (1, 64, 16, 16, 1), (1, 64, 16, 16, 3), (1, 64, 16, 16, 5), (1, 64, 16, 16, 7),
    (1, 64, 8, 8, 3), (1, 64, 8, 8, 5), (1, 64, 4, 4, 3), (1, 128, 16, 16, 3),
    (1, 256, 8, 8, 3), (1, 256, 8, 8, 5), (1, 1024, 8, 8, 3), (1, 64, 32, 32, 3),
    (1, 64, 32, 32, 5), (1, 256, 16, 16, 3), (1, 512, 7, 7, 3), (1, 64, 28, 28, 3),
    (2, 64, 16, 16, 3), (2, 64, 16, 16, 5), (2, 128, 32, 32, 3), (4, 64, 16, 16, 3),
    (4, 64, 16, 16, 5), (4, 256, 8, 8, 3), (4, 64, 32, 32, 3), (8, 64, 16, 16, 3),
    (8, 128, 8, 8, 3), (16, 64, 8, 8, 3), (1, 64, 56, 56, 3), (2, 64, 8, 8, 7),
]  # fmt: skip
SHORT_CHUNKS = (1, 2, 4)
PLACING_THREADS = 16


def _short_tiles(params: Conv2dGw8Params) -> list[WgradConfig]:
    tiles = (
        WgradConfig(16, block_g, 1, block_p, prefetch, 1, 1)
        for block_g in (2, 4)
        for block_p in SHORT_CHUNKS
        if block_p < params.p
        for prefetch in (2, 4)
    )
    return runnable(params, tiles)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", nargs="+", metavar="NxCxHxWxK", help="instead of NAMED")
    args = parser.parse_args()
    start()
    for params in named_layers(args.layers, NAMED):
        heuristic = wgrad.default_config_on(params)
        chosen = choose_config("wgrad", params).config
        with ThreadPoolExecutor(PLACING_THREADS) as pool:
            tiles = _short_tiles(params)
            short = list(pool.map(wgrad.improved_config_on, [params] * len(tiles), tiles))
        times, cudnn_us = time_alternating(params, [heuristic, chosen, *short])
        name = f"{params.n}x{params.c}x{params.h}x{params.w} {params.r}x{params.s}"
        line = (
            f"{name}: cuDNN {cudnn_us:.2f} heuristic {times[heuristic]:.2f} "
            f"(bp {heuristic.block_p} g {heuristic.block_g} blocks "
            f"{wgrad_spec.grid_blocks(params, heuristic)}) chosen {times[chosen]:.2f}"
        )
        for config in short:
            line += (
                f" | g{config.block_g} bp{config.block_p} pf{config.prefetch} "
                f"{times[config]:.2f} ({wgrad_spec.grid_blocks(params, config)})"
            )
        print(line, flush=True)


if __name__ == "__main__":
    main()
