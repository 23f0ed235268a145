"""fprop and dgrad: the shipped models' picks against the heuristic's segments, and against the
picks' own tiles walking segments (GPU).

    python tools/fprop_picks_segments_check.py [--layers NxCxHxWxK ...] [--passes fprop dgrad]

For each layer (K x K filters, padding K // 2; LAYERS where --layers is not given) and pass:
the config the shipped model chooses before choose_config's rules that give way to the
heuristic (`_give_way`: its segments, its narrowed strips) replace it, the heuristic's
config (the launcher's default, segments where fprop_segments' rule says), the model's tile
in one wave of segments (fprop_segments.walks_on), and what segments_or_chunks makes of the
model's pick; each timed alternately in three rounds (CUDA-graph replays, the fastest round
of each).
"""

from __future__ import annotations

import argparse
import math

import spio.jit
from spio.kernels.conv2d_gw8 import Conv2dGw8Params, dgrad_spec, fprop_segments
from spio.perfmodel import _select, heuristic_config, shipped_model
from spio.perfmodel._autotune import time_configs

#: (n, c, h, w, k): the layers where the segments rule replaced a model's pick (H200,
#: fortieth session) and the targets' layer.
LAYERS = [
    (128, 64, 40, 40, 3), (200, 64, 56, 56, 3), (160, 64, 64, 64, 3), (96, 64, 64, 64, 3),
    (100, 128, 32, 32, 3), (80, 64, 64, 64, 3), (160, 128, 32, 32, 3), (100, 64, 48, 48, 3),
    (64, 128, 48, 48, 5), (128, 96, 40, 40, 3), (48, 128, 64, 64, 3), (128, 64, 64, 64, 3),
]  # fmt: skip
ROUNDS = 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", nargs="+", metavar="NxCxHxWxK")
    parser.add_argument("--passes", nargs="+", default=["fprop", "dgrad"])
    args = parser.parse_args()
    shapes = [tuple(int(v) for v in t.split("x")) for t in args.layers] if args.layers else LAYERS
    gpu = spio.jit.device_info(0).name
    # The model's own pick: choose_config's rules without the heuristic's overrides.
    _select._unless_untimed = lambda choice, *_: choice
    gains: dict[str, list[float]] = {"heuristic": [], "pick in segments": [], "rule on pick": []}
    for n, c, h, w, k in shapes:
        params = Conv2dGw8Params.make(n, c, h, w, r=k, s=k, padding=k // 2)
        for pass_name in args.passes:
            model = shipped_model(pass_name, gpu)
            if model is None:
                raise SystemExit(f"no {pass_name} model ships for {gpu}")
            pick = _select._model_or_heuristic(model, params, 0, "shipped").config
            kernel_params = dgrad_spec.to_fprop_params(params) if pass_name == "dgrad" else params

            def slots_of(
                config: object, pass_name: str = pass_name, params: Conv2dGw8Params = params
            ) -> int:
                return fprop_segments.slots_on(pass_name, params, config)  # type: ignore[arg-type]

            named = {
                "pick": pick,
                "heuristic": heuristic_config(pass_name, params),
                "pick in segments": fprop_segments.walks_on(pass_name, params, pick)[-1],
                "rule on pick": fprop_segments.segments_or_chunks(kernel_params, pick, slots_of),
            }
            configs = list(dict.fromkeys(named.values()))
            rounds = [time_configs(pass_name, params, configs) for _ in range(ROUNDS)]
            best = {config: min(r[i] for r in rounds) for i, config in enumerate(configs)}
            pick_us = best[pick]
            parts = []
            for name, config in named.items():
                if name != "pick":
                    gains[name].append(pick_us / best[config])
                walk = f"{config.segments} segments" if config.segments else "chunks"
                parts.append(
                    f"{name} {best[config]:.2f} us ({walk}, p{config.prefetch}, "
                    f"{config.block_q}x{config.block_g}x{config.block_p})"
                )
            print(f"{n}x{c}x{h}x{w} {k}x{k} {pass_name}: " + "; ".join(parts), flush=True)
    for name, ratios in gains.items():
        mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(f"{name} over the pick: {mean:.3f}x geomean, {min(ratios):.3f}-{max(ratios):.3f}x")


if __name__ == "__main__":
    main()
