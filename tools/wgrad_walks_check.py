"""Time wgrad's autotuned choice (tiles x walks) against `model` mode's, per layer (GPU).

    python tools/wgrad_walks_check.py [--layers NxCxHxWxK ...]

For each layer (a named list, or --layers' N x C x H x W x K: K x K filters, padding K // 2),
`tune_config("wgrad", ...)` (the model's shortlist, each tile in each of its walks,
spio.kernels' wgrad_walks) against `choose_config("wgrad", ...)` in the default `model`
mode (the model's pick, placed by the launcher's wave rule). Both are timed in this
process, alternating three rounds (CUDA-graph replays, the fastest round's median), with
cuDNN and the copy bandwidth; the tuning's own wall time is printed too.
"""

from __future__ import annotations

import time

from wgrad_timing import layers_and_copy, speed_up, time_alternating

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, WgradConfig
from spio.perfmodel import choose_config, tune_config

#: (n, c, h, w, r = s): the targets' layers and large batches, where walks differ most.
NAMED = [
    (256, 64, 64, 64, 3), (192, 64, 64, 64, 3), (384, 64, 64, 64, 3), (512, 64, 64, 64, 3),
    (128, 64, 64, 64, 3), (32, 64, 64, 64, 3), (256, 128, 32, 32, 3), (512, 256, 14, 14, 3),
    (256, 64, 56, 56, 3), (128, 1024, 16, 16, 3),
]  # fmt: skip


def main() -> None:
    layers, copy = layers_and_copy(__doc__.splitlines()[0], NAMED)
    for params in layers:
        model = choose_config("wgrad", params).config
        began = time.perf_counter()
        tuned = tune_config("wgrad", params)
        _report(params, model, tuned.config, time.perf_counter() - began, copy)


def _report(
    params: Conv2dGw8Params, model: WgradConfig, tuned: WgradConfig, tuning_s: float, copy: float
) -> None:
    times, cudnn_us = time_alternating(params, [model, tuned])
    model_us, tuned_us = times[model], times[tuned]
    print(
        f"{params.n}x{params.c}x{params.h}x{params.w} {params.r}x{params.s}: model "
        f"{model_us:.2f} us, autotuned {tuned_us:.2f} us "
        f"{speed_up(params, model_us, tuned_us, copy, cudnn_us)}; tuning {tuning_s:.1f} s; "
        f"{tuned}",
        flush=True,
    )


if __name__ == "__main__":
    main()
