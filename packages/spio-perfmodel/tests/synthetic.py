"""Synthetic config times for the perfmodel tests: a made-up but structured latency law.

It is written from the kernel specs directly (not from spio.perfmodel's features), so a
model that learns it has learned from features that line up with what they describe: a
column mix-up between training and prediction, or features that miss the grid, shows as
regret on held-out layers.
"""

from __future__ import annotations

import math
import random

from spio.kernels.conv2d_gw8.params import Conv2dGw8Params
from spio.perfmodel import PASSES, ConfigTime

GPU = "Synthetic GPU"


def synthetic_us(pass_name: str, params: Conv2dGw8Params, config: object) -> float:
    """Stream time stretched by the re-read halo and by an uneven last wave, plus a cost per
    wave and a penalty for one row in flight."""
    geometry = PASSES[pass_name].launch_geometry(params, config)
    per_sm = min(32, 2048 // geometry.block, (228 * 1024) // (geometry.shared_mem + 1024))
    slots = 132 * max(1, per_sm)
    waves = math.ceil(geometry.grid / slots)
    stream_us = params.compulsory_bytes(pass_name) / 3.0e6  # type: ignore[arg-type]  # 3 TB/s
    halo = (config.block_q + params.s - 1) / config.block_q  # type: ignore[attr-defined]
    uneven = (waves * slots / geometry.grid) ** 0.5
    one_row = 0.6 if config.prefetch == 1 else 0.0  # type: ignore[attr-defined]
    return stream_us * halo * uneven + 1.5 * waves + one_row


def synthetic_rows(
    pass_name: str, layers: list[Conv2dGw8Params], per_layer: int, seed: int = 0
) -> list[ConfigTime]:
    """per_layer configs of each layer (a seeded sample of its space), timed by the law."""
    rng = random.Random(seed)
    rows = []
    for params in layers:
        space = PASSES[pass_name].config_space(params)
        for config in rng.sample(space, min(per_layer, len(space))):
            us = synthetic_us(pass_name, params, config)
            rows.append(ConfigTime(GPU, pass_name, params, config, us))
    return rows


LAYERS = [
    Conv2dGw8Params.make(n, c, h, h)
    for n, c, h in [
        (128, 64, 64), (32, 64, 64), (256, 64, 32), (64, 128, 32), (16, 64, 56),
        (128, 256, 16), (8, 64, 64), (512, 128, 16), (96, 64, 64), (64, 64, 28),
    ]
]  # fmt: skip
