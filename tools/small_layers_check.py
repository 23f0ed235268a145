"""Time conv2d_gw8 on small layers against cuDNN, and search wgrad's walks there (GPU).

    python tools/small_layers_check.py [--layers NxCxHxWxK ...] [--passes fprop dgrad wgrad]

For each layer (NAMED: batches of one and two at 8 x 8 to 32 x 32, or --layers' N x C x H x W
x K: K x K filters, padding K // 2):
- fprop and dgrad: the heuristic's config (default_config_on) and choose_config's, against
  cuDNN;
- wgrad: choose_config's config, every tile of the config space in every walk the launcher
  could run (wgrad_walks.walks_on: its chunks, its segments, deeper prefetch), and tiles of
  shorter row chunks than the space holds (block_p in SHORT_CHUNKS) at prefetch 1 to
  MAX_WALK_PREFETCH, each as the launcher runs it (improved_config_on); all deterministic.
  The fastest SHOWN are printed, and the fastest CHECKED are checked against the fp32
  reference.
Timed in this process, alternating three rounds (CUDA-graph replays, the fastest round's
median), with cuDNN and the copy bandwidth. Whether a layer small enough to be bound by the
latency of a block's walk can beat cuDNN with a config the space does not hold yet.
"""

from __future__ import annotations

import argparse
import dataclasses
from concurrent.futures import ThreadPoolExecutor

from wgrad_timing import named_layers, print_fastest, runnable, start, time_alternating

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    WgradConfig,
    bench,
    wgrad,
    wgrad_spec,
    wgrad_walks,
)
from spio.perfmodel import choose_config

NAMED = [
    (1, 64, 16, 16, 5), (1, 64, 16, 16, 3), (1, 64, 16, 16, 7), (1, 128, 16, 16, 5),
    (1, 64, 8, 8, 5), (1, 256, 8, 8, 3), (1, 1024, 8, 8, 3),
]  # fmt: skip
#: Row chunks shorter than the config space's (it starts at 8).
SHORT_CHUNKS = (1, 2, 4)
SHOWN = 10
PLACING_THREADS = 8
CHECKED = 3


def _short_chunk_tiles(params: Conv2dGw8Params) -> list[WgradConfig]:
    """The space's unwalked one-image-step tiles of 8-row chunks with block_p of SHORT_CHUNKS
    and each prefetch up to MAX_WALK_PREFETCH, where the layer can run them."""
    tiles = (
        dataclasses.replace(tile, block_p=block_p, prefetch=prefetch)
        for tile in wgrad_spec.config_space(params)
        if tile.block_p == 8 and tile.walk_n == 1 and tile.prefetch == 1
        for block_p in SHORT_CHUNKS
        for prefetch in range(1, wgrad_walks.MAX_WALK_PREFETCH + 1)
    )
    return runnable(params, tiles)


def _wgrad_candidates(params: Conv2dGw8Params) -> tuple[WgradConfig, list[WgradConfig]]:
    launcher = choose_config("wgrad", params).config
    configs = [launcher]
    # Placing a config compiles its kernels (NVRTC lets go of the GIL).
    with ThreadPoolExecutor(PLACING_THREADS) as pool:
        for walks in pool.map(
            lambda tile: wgrad_walks.walks_on(params, tile, 0), wgrad_spec.config_space(params)
        ):
            configs += walks
        configs += pool.map(
            lambda tile: wgrad.improved_config_on(params, tile, 0), _short_chunk_tiles(params)
        )
    return launcher, [c for c in dict.fromkeys(configs) if not c.atomic_sums]


def _wgrad(params: Conv2dGw8Params, copy: float, name: str) -> None:
    launcher, configs = _wgrad_candidates(params)
    times, cudnn_us = time_alternating(params, configs)
    ranked = sorted(times, key=times.__getitem__)
    print(
        f"{name} wgrad: {len(configs)} configs; cuDNN {cudnn_us:.2f} us; choose_config's "
        f"{times[launcher]:.2f} us ({cudnn_us / times[launcher]:.2f}x cuDNN) ranks "
        f"{ranked.index(launcher) + 1}; {launcher}",
        flush=True,
    )
    print_fastest(params, times, launcher, copy, cudnn_us, SHOWN, CHECKED)


def _forward_like(pass_: str, params: Conv2dGw8Params, name: str) -> None:
    heuristic = bench.PASS_CONFIGS[pass_][1](params)
    chosen = choose_config(pass_, params).config
    best, cudnn_us = time_alternating(params, [heuristic, chosen], pass_)
    print(
        f"{name} {pass_}: heuristic {best[heuristic]:.2f} us ({cudnn_us / best[heuristic]:.2f}x), "
        f"chosen {best[chosen]:.2f} us ({cudnn_us / best[chosen]:.2f}x), cuDNN {cudnn_us:.2f}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", nargs="+", metavar="NxCxHxWxK", help="instead of NAMED")
    parser.add_argument("--passes", nargs="+", default=["fprop", "dgrad", "wgrad"])
    args = parser.parse_args()
    copy = start()
    for params in named_layers(args.layers, NAMED):
        name = f"{params.n}x{params.c}x{params.h}x{params.w} {params.r}x{params.s}"
        for pass_ in args.passes:
            if pass_ == "wgrad":
                _wgrad(params, copy, name)
            else:
                _forward_like(pass_, params, name)


if __name__ == "__main__":
    main()
