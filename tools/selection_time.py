"""Time choose_config's choice of a config on this machine's CPU, as TARGETS.md's "selection
once per shape in < 2 ms" asks (no GPU needed).

    python tools/selection_time.py [--gpu "NVIDIA H200"] [--layers 40] [--seed 0]
        [--repeats 5] [--passes fprop dgrad wgrad]

The shipped models of --gpu choose for --layers random 3 x 3 layers (N, C and H = W drawn from
network-like values, so most are layers no campaign timed, where the whole model scores the
space) as on a stand-in of that GPU: spio.jit.device_info answers with its SM count and
arch, and the heuristic a rule may give way to is the spec's default, whose kernel is not
compiled (on a GPU, default_config_on compiles and loads it once per layer, which is the
kernels' cost, not the choice's). Each layer's choice is timed `--repeats` times with the
memo cleared, and the median kept; the output gives the median, p90 and largest of those
per pass, and how many layers took more than 2 ms.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

import spio.jit
from spio.kernels.conv2d_gw8 import Conv2dGw8Params, fprop_segments, placement, wgrad
from spio.perfmodel import PASSES, _select

#: The stand-ins' SM counts and archs, by the GPU names models ship for.
GPUS = {"NVIDIA H200": (132, "sm_90"), "NVIDIA H100 80GB HBM3": (132, "sm_90")}
BATCHES = (1, 4, 16, 48, 96, 160, 320)
CHANNELS = (64, 96, 160, 192, 384, 768)
SIDES = (7, 12, 14, 20, 28, 40, 56)
TARGET_MS = 2.0


def stand_in(gpu: str, patch: Callable[[object, str, object], None] = setattr) -> None:
    """Make this process choose as on a `gpu` without one (see the module's docstring);
    patch sets each attribute (a test's monkeypatch.setattr, to undo them)."""
    sm_count, arch = GPUS[gpu]
    device = SimpleNamespace(name=gpu, sm_count=sm_count, arch=arch)
    patch(spio.jit, "device_info", lambda index=0: device)

    def spec_default(name: str) -> Callable[[Conv2dGw8Params, int], Any]:
        return lambda params, device: PASSES[name].default_config(params, sm_count)

    heuristics = {name: spec_default(name) for name in PASSES}
    heuristics["wgrad"] = wgrad.default_tile_on
    patch(_select, "_heuristics", lambda: heuristics)
    patch(placement, "placed_config_on", lambda name, p, c, d=0: c)
    patch(fprop_segments, "slots_on", lambda name, p, c, d=0: 1 << 30)


def random_layers(count: int, seed: int) -> list[Conv2dGw8Params]:
    rng = np.random.default_rng(seed)
    return [
        Conv2dGw8Params.make(int(rng.choice(BATCHES)), int(rng.choice(CHANNELS)), side, side)
        for side in (int(rng.choice(SIDES)) for _ in range(count))
    ]


def choice_ms(pass_name: str, params: Conv2dGw8Params, repeats: int) -> float:
    """The median time of choose_config's choice for params, the memo cleared each time."""
    times = []
    for _ in range(repeats):
        _select._choose_shipped.cache_clear()
        start = time.perf_counter()
        _select.choose_config(pass_name, params)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main(
    argv: list[str] | None = None, patch: Callable[[object, str, object], None] = setattr
) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpu", choices=sorted(GPUS), default="NVIDIA H200")
    parser.add_argument("--layers", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--passes", nargs="+", choices=sorted(PASSES), default=sorted(PASSES))
    args = parser.parse_args(argv)
    stand_in(args.gpu, patch)
    layers = random_layers(args.layers, args.seed)
    print(f"{args.gpu} stand-in, {len(layers)} layers (seed {args.seed}), ms per choice:")
    for pass_name in args.passes:
        choice_ms(pass_name, Conv2dGw8Params.make(8, 64, 32, 32), 1)  # loads the model
        times = sorted(choice_ms(pass_name, params, args.repeats) for params in layers)
        p90 = times[min(len(times) - 1, int(0.9 * len(times)))]
        over = sum(t > TARGET_MS for t in times)
        print(
            f"  {pass_name}: median {statistics.median(times):.2f}, p90 {p90:.2f}, "
            f"largest {times[-1]:.2f}; {over} of {len(times)} over {TARGET_MS:g} ms"
        )


if __name__ == "__main__":
    main()
