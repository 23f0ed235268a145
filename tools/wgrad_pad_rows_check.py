"""Time wgrad with the padding rows' products left out (WgradConfig.skip_pad_rows) against
the same configs without, per layer.

    python tools/wgrad_pad_rows_check.py [--layers NxCxHxWxK ...]

For each layer (NAMED, or --layers' N x C x H x W x K: K x K filters, padding K // 2): the
config a launch without one runs (wgrad.default_config_on) and `choose_config("wgrad",
...)`'s, each without skip_pad_rows and with it; the main kernel's registers, and the share
of the walks' input rows that are padding. Timed in this process, alternating three rounds
(CUDA-graph replays of the whole pass, the fastest round's median), with cuDNN and the copy
bandwidth; each flagged config is checked against the fp32 reference. Needs a GPU.
"""

from __future__ import annotations

import dataclasses

from wgrad_timing import WGRAD_LAYERS, compared, layers_and_copy, max_error, time_alternating

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, WgradConfig, wgrad
from spio.perfmodel import choose_config

NAMED = [
    *WGRAD_LAYERS,
    (256, 256, 14, 14, 3), (128, 256, 16, 16, 5), (64, 512, 16, 16, 5), (256, 512, 7, 7, 7),
    (128, 128, 28, 28, 7),
]  # fmt: skip


def _without(config: WgradConfig) -> WgradConfig:
    return dataclasses.replace(config, skip_pad_rows=False)


def main() -> None:
    layers, copy = layers_and_copy(__doc__.splitlines()[0], NAMED)
    for params in layers:
        configs = {
            "default": _without(wgrad.default_config_on(params)),
            "chosen": _without(choose_config("wgrad", params).config),
        }
        pairs = {
            name: (config, dataclasses.replace(config, skip_pad_rows=True))
            for name, config in configs.items()
        }
        times, cudnn_us = time_alternating(params, [c for pair in pairs.values() for c in pair])
        for name, (plain, skipping) in pairs.items():
            if name == "chosen" and plain == configs["default"]:
                continue
            line = compared(params, name, (plain, skipping), times, copy, cudnn_us)
            print(
                f"{line}; padding rows {_padding_share(params, plain):.1%}; "
                f"err {max_error(params, skipping):.1e}; {plain}",
                flush=True,
            )


def _padding_share(params: Conv2dGw8Params, config: WgradConfig) -> float:
    """The share of a chunked walk's input rows in the padding (a segmented walk's parts
    are whole images' rows: the same share)."""
    chunk = params.p if config.segments else config.block_p
    walked = padded = 0
    for y0 in range(0, params.p, chunk):
        rows = min(chunk, params.p - y0)
        for j in range(rows + params.r - 1):
            y = y0 - params.padding[0] + j
            walked += 1
            padded += not 0 <= y < params.h
    return padded / walked


if __name__ == "__main__":
    main()
