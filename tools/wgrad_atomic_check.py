"""Time wgrad with atomic sums (deterministic=False) against the deterministic pass, per layer.

    python tools/wgrad_atomic_check.py [--layers NxCxHxWxK ...]

For each layer (a named list, or --layers' N x C x H x W x K: K x K filters, padding K // 2),
`choose_config("wgrad", ...)`'s config as the launcher places it, against the same config
with atomic sums (WgradConfig.atomic_sums: the blocks add into one sum that a zero kernel
clears, instead of writing partial sums for the reduce kernel), whether or not
`wgrad.atomic_config_on` would take them; both kernels' registers; and whether it takes
them. Timed in this process, alternating three rounds (CUDA-graph replays of the whole
pass, the fastest round's median), with cuDNN and the copy bandwidth. Needs a GPU.
"""

from __future__ import annotations

import dataclasses

from wgrad_timing import WGRAD_LAYERS, layers_and_copy, time_alternating

from spio.kernels.conv2d_gw8 import wgrad
from spio.perfmodel import choose_config


def main() -> None:
    layers, copy = layers_and_copy(__doc__.splitlines()[0], WGRAD_LAYERS)
    for params in layers:
        placed = choose_config("wgrad", params).config
        atomic = dataclasses.replace(placed, atomic_sums=True)
        taken = wgrad.atomic_config_on(params, placed).atomic_sums
        registers = [
            wgrad.wgrad_launch(params, c).main.attributes.registers for c in (placed, atomic)
        ]
        times, cudnn_us = time_alternating(params, [placed, atomic])
        nbytes = params.compulsory_bytes("wgrad")
        plain, summed = times[placed], times[atomic]
        print(
            f"{params.n}x{params.c}x{params.h}x{params.w} {params.r}x{params.s}: deterministic "
            f"{plain:.2f} us ({nbytes / 1e3 / plain / copy:.1%} of copy), atomic sums "
            f"{summed:.2f} us ({nbytes / 1e3 / summed / copy:.1%}, {plain / summed:.3f}x, "
            f"{cudnn_us / summed:.2f}x cuDNN {cudnn_us:.2f} us); registers {registers[0]} -> "
            f"{registers[1]}; atomic_config_on takes them: {taken}; {placed}",
            flush=True,
        )


if __name__ == "__main__":
    main()
