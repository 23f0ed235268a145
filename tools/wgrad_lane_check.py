"""Time wgrad with the lanes' ldmatrix addresses in registers (WgradConfig.lane_registers)
against the shipped walk, per layer, deterministic and with atomic sums.

    python tools/wgrad_lane_check.py [--layers NxCxHxWxK ...]

For each layer (a named list, or --layers' N x C x H x W x K: K x K filters, padding K // 2),
`choose_config("wgrad", ...)`'s config as the launcher places it, but without lane_registers
(which wgrad.lane_config_on gives it where it fits), and the same config with atomic sums,
each without and with lane_registers; the main kernel's registers. Timed in
this process, alternating three rounds (CUDA-graph replays of the whole pass, the fastest
round's median), with cuDNN and the copy bandwidth. Needs a GPU.
"""

from __future__ import annotations

import dataclasses

from wgrad_timing import compared, layers_and_copy, time_alternating

from spio.perfmodel import choose_config

#: (n, c, h, w, r = s): the targets' layers, small and wide ones, large filters.
NAMED = [
    (32, 64, 64, 64, 3), (128, 64, 64, 64, 3), (256, 64, 64, 64, 3), (64, 128, 32, 32, 3),
    (128, 1024, 16, 16, 3), (512, 256, 14, 14, 3), (32, 1024, 16, 16, 3), (8, 64, 56, 56, 3),
    (32, 256, 16, 16, 5), (16, 64, 56, 56, 7),
]  # fmt: skip


def main() -> None:
    layers, copy = layers_and_copy(__doc__.splitlines()[0], NAMED)
    for params in layers:
        # As the launcher placed it before lane_config_on: the baseline.
        placed = dataclasses.replace(choose_config("wgrad", params).config, lane_registers=False)
        configs = [placed, dataclasses.replace(placed, atomic_sums=True)]
        pairs = [(c, dataclasses.replace(c, lane_registers=True)) for c in configs]
        times, cudnn_us = time_alternating(params, [c for pair in pairs for c in pair])
        for pair, mode in zip(pairs, ("deterministic", "atomic sums"), strict=True):
            line = compared(params, mode, pair, times, copy, cudnn_us)
            print(f"{line}; {pair[0]}", flush=True)


if __name__ == "__main__":
    main()
