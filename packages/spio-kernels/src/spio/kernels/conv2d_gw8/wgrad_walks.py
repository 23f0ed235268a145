"""The walks of a wgrad tile worth timing on a GPU: its row chunks, its segments, and its
segments with more rows in flight per block, each with the kernel improvements the launcher
would give it (wgrad.improved_config_on: producer warps, padded slabs, the lanes' addresses
in registers).

Which walk of a tile is fastest does not follow a rule that held on every layer. On an H200
(2026-11-24, one process, the models' tiles; chunks -> segments -> segments with prefetch 3
-> 4, us): 256x64x64x64 71.6 -> 70.7 -> 69.2 -> 69.4, 192x64x64x64 59.6 -> 59.6 -> 59.4 ->
57.6, 384x64x64x64 114.1 -> 110.2 -> 110.8 -> 115.0, but 512x64x64x64 144.0 -> 150.5 ->
161.2 -> 161.1 and 64x64x64x64 24.3 -> 25.5 -> 25.5 -> 26.1. So the launcher's own placement
(wgrad.balanced_config_on) stays a rule of waves, and autotuning times the walks instead
(spio-perfmodel's tune_config).

Not one of the files that decide what a config compiles to (sources_digest.PASS_FILES): it
only lists configs.
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor

from ._tiling import fits, grid_slots
from .even_chunks import even_chunks
from .params import Conv2dGw8Params
from .wgrad import improved_config_on, stream_config_on, wgrad_launch
from .wgrad_spec import WgradConfig, check_config, launch_geometry

#: The deepest prefetch a segmented walk is timed with: rows each block keeps loading ahead
#: of the one in use (the config space's tiles stop at 2).
MAX_WALK_PREFETCH = 4


def walks_on(params: Conv2dGw8Params, config: WgradConfig, device: int = 0) -> list[WgradConfig]:
    """Return config (its rows in even chunks, as the launcher cuts them: even_chunks) and
    the other walks of its tile on device, without repeats: its segments
    (stream_config_on), then its segments with each deeper prefetch up to MAX_WALK_PREFETCH
    while the kernel still runs the layer (shared memory, rows per step) and fits as many
    blocks per SM as the segments at config's prefetch; each as the launcher runs it, with
    the improvements improved_config_on gives it.

    Compiles and loads each walk's kernel (spio.jit's cache); ValueError where config
    cannot run params."""
    check_config(params, config)
    # Each depth's segments compile side by side (NVRTC lets go of the GIL; finding a
    # segmented kernel's occupancy compiles it, up to twice): one after another they made a
    # wgrad tuning's first run on the H200 take 7-9 s.
    prefetches = range(config.prefetch, max(config.prefetch, MAX_WALK_PREFETCH) + 1)
    with ThreadPoolExecutor(len(prefetches)) as pool:
        segmented = list(
            pool.map(
                lambda prefetch: _segmented(
                    params, dataclasses.replace(config, prefetch=prefetch), device
                ),
                prefetches,
            )
        )
    first, deeper = segmented[0], segmented[1:]
    walks = [even_chunks(params, config)]
    if first is not None:
        walks.append(first)
        slots = slots_on(params, first, device)
        for walk in deeper:
            if walk is None or slots_on(params, walk, device) < slots:
                break
            walks.append(walk)
    walks = list(dict.fromkeys(walks))
    with ThreadPoolExecutor(len(walks)) as pool:
        placed = list(pool.map(lambda walk: improved_config_on(params, walk, device), walks))
    return list(dict.fromkeys(placed))


def _segmented(params: Conv2dGw8Params, config: WgradConfig, device: int) -> WgradConfig | None:
    """config's tile in segments on device, or None where that walk cannot run params."""
    chunked = dataclasses.replace(config, segments=0)
    if not fits(check_config, params, chunked):
        return None
    try:
        return stream_config_on(params, chunked, device)
    except ValueError:  # segments this deep need more rows per step than the layer has
        return None


def slots_on(params: Conv2dGw8Params, config: WgradConfig, device: int = 0) -> int:
    """Blocks of config's main kernel that fit on device at once (compiles and loads it)."""
    return grid_slots(wgrad_launch(params, config, device).main, launch_geometry(params, config))
