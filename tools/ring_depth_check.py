"""fprop and dgrad: the launcher's default against the same walk one row ahead, where
ring_depth's rule gave its tile a deeper ring (GPU).

    python tools/ring_depth_check.py [--layers NxCxHxWxK ...] [--passes fprop dgrad]

For each layer (K x K filters, padding K // 2; HELD_OUT where --layers is not given) and pass
whose default the rule changed: the default (default_config_on: two rows ahead, then
segments where fprop_segments says) and what it was before the rule (its row chunks one row
ahead, then segments where fprop_segments says), timed in alternating rounds in one process
(CUDA-graph replays, the fastest round's median), with cuDNN and the copy bandwidth; then the
geometric mean of the gains.
"""

from __future__ import annotations

import argparse
import dataclasses

from wgrad_timing import (
    copy_and_cudnn,
    layer_name,
    named_layers,
    print_geomean,
    start,
    time_alternating,
)

import spio.jit
from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    FpropConfig,
    dgrad,
    dgrad_spec,
    fprop,
    fprop_segments,
    fprop_spec,
)
from spio.kernels.conv2d_gw8.ring_depth import DEEPER_PREFETCH

#: Layers of one-row-ahead tiles none of the rule's figures came from: grids of fewer than
#: three blocks an SM, and of more than one wave (132 SMs), 3 x 3 and 5 x 5.
HELD_OUT = [
    (4, 96, 40, 40, 3), (8, 128, 32, 32, 3), (8, 192, 24, 24, 3), (12, 64, 56, 56, 3),
    (12, 512, 12, 12, 3), (24, 256, 16, 16, 3), (48, 512, 8, 8, 3), (24, 64, 64, 64, 3),
    (48, 128, 28, 28, 3), (24, 96, 40, 40, 3), (100, 128, 20, 20, 3), (100, 256, 14, 14, 3),
    (8, 64, 64, 64, 5), (12, 128, 28, 28, 5), (48, 128, 32, 32, 5), (100, 256, 16, 16, 5),
]  # fmt: skip

PASSES = {"fprop": fprop, "dgrad": dgrad}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layers", nargs="+", metavar="NxCxHxWxK", help="instead of HELD_OUT")
    parser.add_argument("--passes", nargs="+", default=list(PASSES), choices=list(PASSES))
    args = parser.parse_args()
    copy = start()
    gains = []
    for params in named_layers(args.layers, HELD_OUT):
        for pass_ in args.passes:
            module = PASSES[pass_]
            chunks = module.chunks_config_on(params)
            kernel_params = dgrad_spec.to_fprop_params(params) if pass_ == "dgrad" else params
            spec = dgrad_spec if pass_ == "dgrad" else fprop_spec
            spec_default = spec.default_config(params, spio.jit.device_info(0).sm_count)
            if chunks.prefetch != DEEPER_PREFETCH or spec_default.prefetch != 1:
                print(f"{layer_name(params)} {pass_}: the rule keeps {chunks.prefetch} rows ahead")
                continue
            new = module.default_config_on(params)

            def slots_of(config: FpropConfig, p: Conv2dGw8Params = params, n: str = pass_) -> int:
                return fprop_segments.slots_on(n, p, config)

            old = fprop_segments.segments_or_chunks(
                kernel_params, dataclasses.replace(chunks, prefetch=1), slots_of
            )
            times, cudnn_us = time_alternating(params, [old, new], pass_)
            gains.append(times[old] / times[new])
            print(
                f"{layer_name(params)} {pass_}: one row ahead ({old.segments or 'chunks'}) "
                f"{times[old]:.2f} us -> two ({new.segments or 'chunks'}) {times[new]:.2f} us, "
                f"{copy_and_cudnn(params, pass_, times[new], copy, cudnn_us)}: "
                f"{gains[-1]:.3f}x",
                flush=True,
            )
    print_geomean(gains)


if __name__ == "__main__":
    main()
