"""Time the launcher's wgrad config against the same walk with more (or fewer) rows loading
ahead of the one in use (WgradConfig.prefetch), per layer (GPU).

    python tools/wgrad_prefetch_check.py [--layers NxCxHxWxK ...]

For each layer (NAMED, or --layers' N x C x H x W x K: K x K filters, padding K // 2): the
config a launch without one runs (wgrad.default_config_on) and that config at each prefetch
of PREFETCHES that can run the layer and keeps as many blocks per SM, with the kernel
improvements the launcher gives it (wgrad.improved_config_on). Timed in this process,
alternating three rounds (CUDA-graph replays of the whole pass, the fastest round's
median), with cuDNN and the copy bandwidth; the fastest is checked against the fp32
reference.

Why: Nsight Compute on the launcher's configs of 512x256x14x14 and 128x1024x16x16 (H200)
found 43-45% of the walking warps' stall samples at the wait for a row's TMA loads, with two
rows loading per block and two blocks per SM. The config space stops at two rows for row
chunks (wgrad_spec.PREFETCH_VALUES).
"""

from __future__ import annotations

import dataclasses

from wgrad_timing import (
    WGRAD_LAYERS,
    layer_name,
    layers_and_copy,
    max_error,
    speed_up,
    time_alternating,
)

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, WgradConfig, wgrad, wgrad_spec
from spio.kernels.conv2d_gw8._tiling import fits
from spio.kernels.conv2d_gw8.wgrad_walks import slots_on

NAMED = [*WGRAD_LAYERS, (256, 256, 14, 14, 3), (128, 256, 16, 16, 3), (128, 256, 16, 16, 5)]
PREFETCHES = (1, 2, 3, 4, 6)


def _variants(params: Conv2dGw8Params, launched: WgradConfig) -> list[WgradConfig]:
    """launched and its walk at each of PREFETCHES that runs params at launched's blocks per
    SM, as the launcher places it."""
    slots = slots_on(params, launched)
    variants = [launched]
    for prefetch in PREFETCHES:
        tile = dataclasses.replace(launched, prefetch=prefetch)
        if tile == launched or not fits(wgrad_spec.check_config, params, tile):
            continue
        placed = wgrad.improved_config_on(params, tile)
        if slots_on(params, placed) >= slots:
            variants.append(placed)
    return variants


def main() -> None:
    layers, copy = layers_and_copy(__doc__.splitlines()[0], NAMED)
    for params in layers:
        launched = wgrad.default_config_on(params)
        configs = _variants(params, launched)
        times, cudnn_us = time_alternating(params, configs)
        name = layer_name(params)
        fastest = min(configs, key=times.__getitem__)
        print(
            f"{name}: launched (prefetch {launched.prefetch}) {times[launched]:.2f} us; "
            + ", ".join(f"prefetch {c.prefetch} {times[c]:.2f}" for c in configs[1:])
            + f"; fastest prefetch {fastest.prefetch} "
            f"{speed_up(params, times[launched], times[fastest], copy, cudnn_us)} "
            f"err {max_error(params, fastest):.1e}; {launched}",
            flush=True,
        )


if __name__ == "__main__":
    main()
