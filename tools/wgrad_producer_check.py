"""Time `model` mode's wgrad config with and without producer warps, per layer (GPU).

    python tools/wgrad_producer_check.py [--layers NxCxHxWxK ...]

For each layer (a named list, or --layers' N x C x H x W x K: K x K filters, padding K // 2),
`choose_config("wgrad", ...)` in the default `model` mode, placed as the launcher places it
(segments by the wave rule, producer warps where its rows arrive by TMA and they fit:
spio.kernels' wgrad.producer_config_on), against the same config without producer warps.
Both are timed in this process, alternating three rounds (CUDA-graph replays of the whole
pass, the fastest round's median), with cuDNN and the copy bandwidth.
"""

from __future__ import annotations

import dataclasses

from wgrad_timing import layers_and_copy, time_alternating

from spio.perfmodel import choose_config

#: (n, c, h, w, r = s): the targets' layers, small and wide ones, large filters.
NAMED = [
    (32, 64, 64, 64, 3), (128, 64, 64, 64, 3), (256, 64, 64, 64, 3), (64, 64, 64, 64, 3),
    (64, 128, 32, 32, 3), (128, 1024, 16, 16, 3), (512, 256, 14, 14, 3), (8, 64, 56, 56, 3),
    (128, 64, 56, 56, 3), (32, 256, 16, 16, 5), (16, 64, 56, 56, 7), (16, 128, 28, 28, 3),
]  # fmt: skip


def main() -> None:
    layers, copy = layers_and_copy(__doc__.splitlines()[0], NAMED)
    for params in layers:
        placed = choose_config("wgrad", params).config
        shape = f"{params.n}x{params.c}x{params.h}x{params.w} {params.r}x{params.s}"
        if not placed.producer:
            print(f"{shape}: no producer warps placed ({placed})", flush=True)
            continue
        plain = dataclasses.replace(placed, producer=False)
        times, cudnn_us = time_alternating(params, [plain, placed])
        nbytes = params.compulsory_bytes("wgrad")
        print(
            f"{shape}: without {times[plain]:.2f} us, with {times[placed]:.2f} us "
            f"({times[plain] / times[placed]:.3f}x, {nbytes / 1e3 / times[placed] / copy:.1%} "
            f"of copy, {cudnn_us / times[placed]:.2f}x cuDNN {cudnn_us:.2f} us); {placed}",
            flush=True,
        )


if __name__ == "__main__":
    main()
