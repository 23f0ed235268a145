"""Time the configs two versions of a GPU's latency models choose, where they differ.

    python tools/model_picks_check.py OLD_DIR [--passes fprop dgrad] [--layers 20 --seed 1]

OLD_DIR holds the other version's model files (<pass>.ubj, as in spio-perfmodel's models
folder); the shipped models of this GPU are the new version. The layers: the targets'
named ones, then `campaign_layers(--layers, --seed)` (fresh layers where the seed is one no
campaign trained on). For each layer and pass, choose_config's rule with each model
(`_model_or_heuristic`: measured, the model's pick or the heuristic's); where the two
configs differ, both timed alternately, three rounds, the fastest of each. Needs a GPU.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import spio.jit
from spio.kernels.conv2d_gw8 import Conv2dGw8Params
from spio.perfmodel import shipped_model
from spio.perfmodel._autotune import time_configs
from spio.perfmodel._campaign import campaign_layers
from spio.perfmodel._model import LatencyModel
from spio.perfmodel._select import _model_or_heuristic

#: (n, c, h, w) of 3 x 3 layers: the targets' and the 14 x 14 family.
NAMED = [
    (512, 256, 14, 14), (256, 256, 14, 14), (128, 512, 14, 14), (256, 1024, 14, 14),
    (128, 1024, 16, 16), (128, 64, 64, 64), (32, 64, 64, 64), (64, 128, 32, 32),
]  # fmt: skip
ROUNDS = 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old_dir", type=Path)
    parser.add_argument("--passes", nargs="+", default=["fprop", "dgrad", "wgrad"])
    parser.add_argument("--layers", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    gpu = spio.jit.device_info(0).name
    layers = [Conv2dGw8Params.make(*shape) for shape in NAMED]
    layers += list(campaign_layers(args.layers, args.seed))
    for pass_name in args.passes:
        old = LatencyModel.load(args.old_dir / f"{pass_name}.ubj")
        new = shipped_model(pass_name, gpu)
        if new is None:
            raise SystemExit(f"no {pass_name} model ships for {gpu}")
        ratios = []
        for params in layers:
            before = _model_or_heuristic(old, params, 0, "old")
            after = _model_or_heuristic(new, params, 0, "new")
            if before.config == after.config:
                continue
            pair = [before.config, after.config]
            rounds = [time_configs(pass_name, params, pair) for _ in range(ROUNDS)]
            old_us, new_us = (min(r[i] for r in rounds) for i in (0, 1))
            ratios.append(old_us / new_us)
            print(
                f"{pass_name} {params}: old {old_us:.2f} us ({before.source}) -> new "
                f"{new_us:.2f} us ({after.source}), {old_us / new_us:.3f}x",
                flush=True,
            )
        if ratios:
            mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
            print(
                f"{pass_name}: {len(ratios)} of {len(layers)} layers changed; new over old "
                f"{mean:.3f}x in geometric mean, {min(ratios):.3f}-{max(ratios):.3f}x",
                flush=True,
            )


if __name__ == "__main__":
    main()
