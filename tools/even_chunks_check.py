"""Every pass: the launcher's default with its row chunks cut evenly (even_chunks) against the
default as it was before, chunks of the tile's block_p and a short last one (GPU).

    python tools/even_chunks_check.py [--layers NxCxHxWxK ...] [--passes fprop dgrad wgrad]

For each layer (K x K filters, padding K // 2; NAMED where --layers is not given) and pass,
the config a launch without one runs (default_config_on) and the one it ran before the rule
(the same choice with even_chunks left out of fprop's and wgrad's launchers: what the
segments rules then made of the uneven chunks included). Layers where the two are the same
are listed, not timed. The others are timed in this process in alternating rounds
(CUDA-graph replays, the fastest round's median), with cuDNN and the copy bandwidth, and
both are checked against the fp32 reference.
A geometric mean over the timed layer-passes ends the report.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import fprop_segments_check
import wgrad_timing
from wgrad_timing import (
    copy_and_cudnn,
    layer_name,
    named_layers,
    print_geomean,
    start,
    time_alternating,
)

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, dgrad, fprop, wgrad

#: Each pass's default on a device (memoised).
DEFAULTS = {
    "fprop": fprop.default_config_on,
    "dgrad": dgrad.default_config_on,
    "wgrad": wgrad.default_config_on,
}

#: Layers none of the rule's figures came from: images whose rows the tiles' chunks do not
#: divide (14 to 112 rows), filters of 1 to 7 rows, small and large batches.
NAMED = [
    (32, 64, 112, 112, 3),
    (16, 128, 112, 112, 3),
    (64, 128, 28, 28, 3),
    (32, 256, 28, 28, 3),
    (16, 64, 56, 56, 3),
    (8, 64, 56, 56, 3),
    (256, 128, 28, 28, 3),
    (128, 64, 40, 40, 3),
    (64, 128, 24, 24, 3),
    (128, 64, 20, 20, 3),
    (64, 64, 100, 100, 3),
    (128, 64, 60, 60, 3),
    (64, 64, 50, 50, 3),
    (32, 64, 56, 56, 5),
    (64, 128, 28, 28, 5),
    (128, 64, 28, 28, 5),
    (64, 64, 56, 56, 5),
    (32, 64, 56, 56, 7),
    (64, 64, 28, 28, 7),
    (16, 128, 56, 56, 7),
    (128, 256, 28, 28, 1),
    (64, 64, 56, 56, 1),
    (64, 128, 56, 56, 2),
]

_CACHED = (fprop.default_config_on, fprop.chunks_config_on, dgrad.default_config_on,
           dgrad.chunks_config_on, wgrad.default_config_on, wgrad.balanced_config_on)  # fmt: skip


@contextmanager
def uneven_chunks() -> Iterator[None]:
    """The launchers' choices as they were before the rule: fprop.walk_chunks and
    wgrad.balanced_config_on without even_chunks (the memoised choices cleared on the way in
    and out)."""

    def as_given(params: Conv2dGw8Params, config: Any) -> Any:
        return config

    for cached in _CACHED:
        cached.cache_clear()
    try:
        with (
            mock.patch.object(fprop, "even_chunks", as_given),
            mock.patch.object(wgrad, "even_chunks", as_given),
        ):
            yield
    finally:
        for cached in _CACHED:
            cached.cache_clear()


def max_error(pass_: str, params: Conv2dGw8Params, config: Any) -> float:
    """config's largest |error| against the fp32 reference, over the largest |reference|."""
    if pass_ == "wgrad":
        return wgrad_timing.max_error(params, config)
    return fprop_segments_check.max_error(pass_, params, config)


def defaults(pass_: str, params: Conv2dGw8Params) -> tuple[Any, Any]:
    """The pass's default on params before the rule and with it."""
    default_on = DEFAULTS[pass_]
    with uneven_chunks():
        before = default_on(params)
    return before, default_on(params)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", nargs="+", metavar="NxCxHxWxK", help="instead of NAMED")
    parser.add_argument("--passes", nargs="+", default=list(DEFAULTS), choices=list(DEFAULTS))
    args = parser.parse_args()
    copy = start()
    gains = []
    for params in named_layers(args.layers, NAMED):
        for pass_ in args.passes:
            before, after = defaults(pass_, params)
            name = f"{layer_name(params)} {pass_}"
            if before == after:
                print(f"{name}: unchanged, {after}", flush=True)
                continue
            times, cudnn_us = time_alternating(params, [before, after], pass_)
            gains.append(times[before] / times[after])
            errors = [max_error(pass_, params, config) for config in (before, after)]
            print(
                f"{name}: {times[before]:.2f} -> {times[after]:.2f} us ({gains[-1]:.3f}x; "
                f"{copy_and_cudnn(params, pass_, times[after], copy, cudnn_us)}), errors "
                f"{errors[0]:.1e} {errors[1]:.1e}\n  before {before}\n  after  {after}",
                flush=True,
            )
    print_geomean(gains)


if __name__ == "__main__":
    main()
