"""From the campaigns' wgrad rows: how walking steps of images (walk_n > 1) times against the
same config walking one step, split by whether the walked grid leaves SMs without a block
(no GPU needed).

    python tools/wgrad_walk_blocks_data.py packages/spio-perfmodel/data/nvidia_h200 --sms 132

Pairs each walked row with the row of the same layer, kernel version and config but
walk_n 1, both timed as tiles (launch "tile"), and reports per side of `--sms` blocks: the
pairs, the walk's speed-up in geometric mean (the unwalked time over the walked) and the
share of pairs the walk made faster. wgrad_heuristic._walked's rule (a walk keeps a block on
every SM) came from a GPU run; this is the campaigns' view of it.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from pathlib import Path

from spio.kernels.conv2d_gw8 import wgrad_spec
from spio.perfmodel._data import ConfigTime, read_config_times


def walk_speed_ups(rows: list[ConfigTime], sms: int) -> dict[bool, list[float]]:
    """The walk's speed-ups (unwalked time / walked time) of every walked row with an
    unwalked twin, keyed by whether the walked grid has fewer than `sms` blocks."""
    times = {(row.kernel, row.params, row.config): row.median_us for row in rows}
    speed_ups: dict[bool, list[float]] = {True: [], False: []}
    for row in rows:
        if row.config.walk_n == 1:
            continue
        unwalked = times.get((row.kernel, row.params, dataclasses.replace(row.config, walk_n=1)))
        if unwalked is None:
            continue
        too_few = wgrad_spec.grid_blocks(row.params, row.config) < sms
        speed_ups[too_few].append(unwalked / row.median_us)
    return speed_ups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gpu_dir", type=Path, help="a GPU's folder of campaign CSVs")
    parser.add_argument("--sms", type=int, required=True, help="the GPU's SM count")
    args = parser.parse_args()
    paths = sorted(args.gpu_dir.glob("seed*/conv2d_gw8_configs_wgrad.csv"))
    if not paths:
        parser.error(f"no seed*/conv2d_gw8_configs_wgrad.csv under {args.gpu_dir}")
    rows = list(read_config_times(paths).select("wgrad", launch="tile").rows)
    for too_few, speed_ups in walk_speed_ups(rows, args.sms).items():
        side = f"under {args.sms} blocks" if too_few else f"{args.sms} blocks or more"
        if not speed_ups:
            print(f"walked grids {side}: no pairs")
            continue
        geomean = math.exp(sum(map(math.log, speed_ups)) / len(speed_ups))
        faster = sum(s > 1 for s in speed_ups) / len(speed_ups)
        print(
            f"walked grids {side}: {len(speed_ups)} pairs, walking {geomean:.3f}x in "
            f"geometric mean, faster in {faster:.0%}"
        )


if __name__ == "__main__":
    main()
