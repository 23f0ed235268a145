"""Time `model` mode's wgrad config with and without the kernel's improvements, per layer.

    python tools/wgrad_improvements_check.py [--layers NxCxHxWxK ...]

For each layer (a named list, or --layers' N x C x H x W x K: K x K filters, padding K // 2),
`choose_config("wgrad", ...)` in the default `model` mode, placed as the launcher places it
(segments by the wave rule, then spio.kernels' wgrad.improved_config_on: producer warps where
its rows arrive by TMA, padded slabs, each where it fits), against the same walk without
them and with producer warps alone. All are timed in this process, alternating three rounds
(CUDA-graph replays of the whole pass, the fastest round's median), with cuDNN and the copy
bandwidth. Needs a GPU.
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
        plain = dataclasses.replace(placed, producer=False, padded_slabs=False)
        variants = {"without": plain}
        if placed.producer:
            variants["producer"] = dataclasses.replace(plain, producer=True)
        variants["placed"] = placed
        times, cudnn_us = time_alternating(params, list(variants.values()))
        us = {name: times[config] for name, config in variants.items()}
        nbytes = params.compulsory_bytes("wgrad")
        steps = ", ".join(
            f"{name} {value:.2f} us ({us['without'] / value:.3f}x)"
            for name, value in us.items()
            if name != "without"
        )
        print(
            f"{params.n}x{params.c}x{params.h}x{params.w} {params.r}x{params.s}: without "
            f"{us['without']:.2f} us, {steps}; placed: {nbytes / 1e3 / us['placed'] / copy:.1%} "
            f"of copy, {cudnn_us / us['placed']:.2f}x cuDNN {cudnn_us:.2f} us; {placed}",
            flush=True,
        )


if __name__ == "__main__":
    main()
