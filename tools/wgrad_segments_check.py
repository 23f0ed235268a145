"""Time wgrad's choice with and without its placement in segments, where they differ (GPU).

    python tools/wgrad_segments_check.py [--campaign-layers 24] [--layers NxCxHxWxK ...]

For each layer (a named list, or --layers' N x C x H x W x K (K x K filters, padding K // 2),
then layers of a campaign draw), `choose_config("wgrad", ...)`
with its placement (`wgrad.balanced_config_on`: segments where the tile's waves would leave
SMs idle) against the same tile in row chunks (the choice before placement). Where the two
differ, both are timed in this process, alternating three rounds (CUDA-graph replays, the
fastest round's median), with cuDNN and the copy bandwidth.
"""

from __future__ import annotations

import argparse
import math

from wgrad_timing import named_layers, start, time_alternating

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, WgradConfig
from spio.perfmodel import choose_config, selection_mode
from spio.perfmodel._campaign import campaign_layers
from spio.perfmodel._select import _choose_shipped

#: (n, c, h, w, r = s): batches whose grids fill their waves badly and well, small layers.
NAMED = [
    (128, 64, 64, 64, 3), (256, 64, 64, 64, 3), (32, 64, 64, 64, 3), (96, 64, 64, 64, 3),
    (160, 64, 64, 64, 3), (300, 64, 64, 64, 3), (192, 64, 64, 64, 3), (320, 64, 64, 64, 3),
    (64, 128, 32, 32, 3), (100, 128, 32, 32, 3), (1, 64, 56, 56, 3), (8, 64, 56, 56, 3),
    (256, 512, 7, 7, 7), (4, 64, 112, 112, 7), (200, 64, 56, 56, 3), (48, 256, 14, 14, 3),
    (24, 1024, 8, 8, 3), (3, 128, 28, 28, 3), (130, 64, 32, 32, 5),
]  # fmt: skip
#: Campaign layers larger than this (input bytes) are left out: they take long to time.
MAX_INPUT_BYTES = 96 * 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--campaign-layers", type=int, default=24)
    parser.add_argument("--layers", nargs="+", metavar="NxCxHxWxK", help="instead of NAMED")
    args = parser.parse_args()
    copy = start()
    layers = named_layers(args.layers, NAMED)
    drawn = campaign_layers(120, seed=41)
    small = [
        layer for layer in drawn if layer.n * layer.c * layer.h * layer.w * 2 <= MAX_INPUT_BYTES
    ]
    layers += small[: args.campaign_layers]
    ratios = []
    for params in layers:
        chunked = _choose_shipped("wgrad", params, 0, selection_mode())
        placed = choose_config("wgrad", params)
        if placed.config != chunked.config:
            ratios.append(_compare(params, chunked.config, placed.config, chunked.source, copy))
    if ratios:
        mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(
            f"placed in segments on {len(ratios)} of {len(layers)} layers: geometric mean "
            f"{mean:.3f}x, {min(ratios):.3f}x to {max(ratios):.3f}x"
        )
    else:
        print(f"no layer of {len(layers)} placed in segments")


def _compare(
    params: Conv2dGw8Params, chunked: WgradConfig, placed: WgradConfig, source: str, copy: float
) -> float:
    times, cudnn_us = time_alternating(params, [chunked, placed])
    before, after = times[chunked], times[placed]
    gbs = params.compulsory_bytes("wgrad") / 1e3 / after
    print(
        f"{params.n}x{params.c}x{params.h}x{params.w} {params.r}x{params.s} {params.dtype} "
        f"({source}): chunks {before:.2f} us, segments {after:.2f} us "
        f"({placed.segments} a strip; {before / after:.3f}x), {gbs / copy:.1%} of copy, "
        f"cuDNN {cudnn_us:.2f} us ({cudnn_us / after:.2f}x)",
        flush=True,
    )
    return before / after


if __name__ == "__main__":
    main()
