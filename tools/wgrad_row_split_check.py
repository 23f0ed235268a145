"""Time wgrad tiles whose blocks split the filter's rows (WgradConfig.block_r) against the
launcher's config on small layers (GPU).

    python tools/wgrad_row_split_check.py [--layers NxCxHxWxK ...]

For each layer (NAMED, or --layers' N x C x H x W x K: K x K filters, padding K // 2): the
heuristic's config as launched (wgrad.default_config_on), the same tile without its filter
rows split (block_r 0: where it is a split short walk, the walk it splits), and tiles of one
filter row per
block (block_r 1): 16 columns (8 of each of two images where the images are at most 8 wide
and the batch has two), block_g 1, 2 or 4 groups of one to a warp, row chunks of 1 to 16
rows (no longer than the image needs), one or two images side by side, and one chunk per
image walking every image where that makes one partial sum; prefetch 4 (or the deepest
valid). Each as the launcher runs it (improved_config_on), deterministic, timed in this
process alternating three rounds (CUDA-graph replays, the fastest round's median) with
cuDNN. Prints the fastest SHOWN with their grids and partial sums; the fastest CHECKED are
checked against the fp32 reference. Which small layers the split pays on, and with what
tile; on wide layers whose default keeps the filter rows together
(wgrad_heuristic.SPLIT_WALK_MAX_SM_SHARE), the heuristic's config is the unsplit tile and
the split tiles are those it passed over.
"""

from __future__ import annotations

import argparse
import dataclasses
from concurrent.futures import ThreadPoolExecutor

from wgrad_timing import named_layers, print_fastest, runnable, start, time_alternating

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    WgradConfig,
    wgrad,
)
from spio.kernels.conv2d_gw8._tiling import next_power_of_two

NAMED = [
    (1, 64, 8, 8, 7), (1, 256, 8, 8, 7), (2, 64, 8, 8, 7), (8, 128, 8, 8, 7),
    (1, 128, 16, 16, 7), (8, 128, 8, 8, 5), (1, 64, 16, 16, 5), (1, 64, 16, 16, 3),
    (1, 256, 8, 8, 3), (4, 64, 32, 32, 3), (1, 64, 56, 56, 3),
]  # fmt: skip
CHUNKS = (1, 2, 4, 8, 16)
PREFETCHES = (4, 2, 1)
SHOWN = 6
CHECKED = 3
PLACING_THREADS = 16


def _deepest_prefetch(params: Conv2dGw8Params, tile: WgradConfig) -> WgradConfig | None:
    """tile at the deepest of PREFETCHES that can run params, or None."""
    tiles = runnable(params, (dataclasses.replace(tile, prefetch=p) for p in PREFETCHES))
    return tiles[0] if tiles else None


def _split_tiles(params: Conv2dGw8Params) -> list[WgradConfig]:
    """The block_r 1 tiles the module doc lists that can run params."""
    paired = params.q <= 8 and params.n >= 2
    columns = [(8, 2), (8, 4)] if paired else [(16, 1), (16, 2)]
    batch = next_power_of_two(params.n)
    tiles = []
    for (block_q, block_n), block_g, block_p in (
        (shape, g, p)
        for shape in columns
        for g in (1, 2, 4)
        for p in CHUNKS
        if p <= max(1, next_power_of_two(params.p))
    ):
        if block_n > batch:
            continue
        walks = [1]
        if block_p >= params.p:
            walks += [w for w in (2, 4, 8) if block_n * w <= batch]
        for walk_n in walks:
            tile = WgradConfig(block_q, block_g, 1, block_p, 4, block_n, walk_n, block_r=1)
            deepest = _deepest_prefetch(params, tile)
            if deepest is not None:
                tiles.append(deepest)
    return tiles


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", nargs="+", metavar="NxCxHxWxK", help="instead of NAMED")
    args = parser.parse_args()
    copy = start()
    for params in named_layers(args.layers, NAMED):
        heuristic = wgrad.default_config_on(params)
        whole = wgrad.improved_config_on(params, dataclasses.replace(heuristic, block_r=0))
        tiles = _split_tiles(params)
        with ThreadPoolExecutor(PLACING_THREADS) as pool:
            split = list(pool.map(wgrad.improved_config_on, [params] * len(tiles), tiles))
        configs = list(dict.fromkeys([heuristic, whole, *split]))
        times, cudnn_us = time_alternating(params, configs)
        ranked = sorted(times, key=times.__getitem__)
        name = f"{params.n}x{params.c}x{params.h}x{params.w} {params.r}x{params.s}"
        print(
            f"{name}: {len(configs)} configs; cuDNN {cudnn_us:.2f} us; heuristic "
            f"{times[heuristic]:.2f} us ({cudnn_us / times[heuristic]:.2f}x cuDNN) ranks "
            f"{ranked.index(heuristic) + 1}; {heuristic}; unsplit {times[whole]:.2f} us "
            f"({cudnn_us / times[whole]:.2f}x cuDNN)",
            flush=True,
        )
        print_fastest(params, times, heuristic, copy, cudnn_us, SHOWN, CHECKED)


if __name__ == "__main__":
    main()
