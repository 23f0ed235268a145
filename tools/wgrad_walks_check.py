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

import argparse
import time

import torch

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, WgradConfig, bench
from spio.perfmodel import choose_config, tune_config

#: (n, c, h, w, r = s): the targets' layers and large batches, where walks differ most.
NAMED = [
    (256, 64, 64, 64, 3), (192, 64, 64, 64, 3), (384, 64, 64, 64, 3), (512, 64, 64, 64, 3),
    (128, 64, 64, 64, 3), (32, 64, 64, 64, 3), (256, 128, 32, 32, 3), (512, 256, 14, 14, 3),
    (256, 64, 56, 56, 3), (128, 1024, 16, 16, 3),
]  # fmt: skip
ROUNDS = 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", nargs="+", metavar="NxCxHxWxK", help="instead of NAMED")
    args = parser.parse_args()
    named = (
        [tuple(int(v) for v in text.split("x")) for text in args.layers] if args.layers else NAMED
    )
    torch.backends.cudnn.benchmark = True
    copy = bench.copy_bandwidth_gbs(20, 9)
    print(f"{torch.cuda.get_device_name()}, copy {copy:.0f} GB/s", flush=True)
    for n, c, h, w, k in named:
        params = Conv2dGw8Params.make(n, c, h, w, r=k, s=k, padding=k // 2)
        model = choose_config("wgrad", params).config
        start = time.perf_counter()
        tuned = tune_config("wgrad", params)
        tuning_s = time.perf_counter() - start
        _compare(params, model, tuned.config, tuning_s, copy)


def _compare(
    params: Conv2dGw8Params, model: WgradConfig, tuned: WgradConfig, tuning_s: float, copy: float
) -> None:
    configs = list(dict.fromkeys([model, tuned]))
    buffers = bench.Buffers(params, ["wgrad"], {"wgrad": configs})
    times: dict[WgradConfig, list[float]] = {config: [] for config in configs}
    cudnn = []
    for _ in range(ROUNDS):
        round_times, cudnn_us = bench.bench_pass(
            "wgrad", params, configs, buffers, 20, 9, graph=True
        )
        cudnn.append(cudnn_us)
        for config in configs:
            times[config].append(round_times[config])
    model_us, tuned_us, cudnn_us = min(times[model]), min(times[tuned]), min(cudnn)
    nbytes = params.compulsory_bytes("wgrad")
    print(
        f"{params.n}x{params.c}x{params.h}x{params.w} {params.r}x{params.s}: model "
        f"{model_us:.2f} us, autotuned {tuned_us:.2f} us ({model_us / tuned_us:.3f}x, "
        f"{nbytes / 1e3 / tuned_us / copy:.1%} of copy, {cudnn_us / tuned_us:.2f}x cuDNN "
        f"{cudnn_us:.2f} us); tuning {tuning_s:.1f} s; {tuned}",
        flush=True,
    )
    del buffers
    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
