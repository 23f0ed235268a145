"""fprop and dgrad: the launcher's default against what it ran before fprop_spec.strip_columns
took 16-column strips for images whose 32-column strips end past the edge (GPU).

    python tools/strip_width_check.py [--layers NxCxHxWxK ...] [--passes fprop dgrad]

For each layer (K x K filters, padding K // 2; HELD_OUT where --layers is not given) and pass
whose heuristic tile the rule changed: the default (default_config_on), the same tile two
rows ahead instead of the deeper ring the heuristic gives 16-column tiles, and the default
without the rule (the 32-column tile, placed as the launcher places it: its walk balanced,
then segments where fprop_segments says), timed in alternating rounds in one process
(CUDA-graph replays, the fastest round's median), with cuDNN and the copy bandwidth; the
default checked against the fp32 reference; then the geometric mean of the gains.
"""

from __future__ import annotations

import argparse
from unittest import mock

from fprop_segments_check import PASSES, max_error
from fprop_variants_check import placed
from wgrad_timing import (
    copy_and_cudnn,
    layer_name,
    named_layers,
    print_geomean,
    start,
    time_alternating,
)

import spio.jit
from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig, fprop_spec

#: Layers none of the rule's figures came from, whose images are 40, 48, 72, 80 or 112
#: columns wide: batches from 8 to 256, 3 x 3, 5 x 5 and 7 x 7 filters.
HELD_OUT = [
    (64, 64, 80, 80, 3), (32, 64, 112, 112, 3), (256, 64, 40, 40, 3),
    (128, 64, 48, 48, 5), (64, 128, 40, 40, 3), (8, 256, 72, 72, 3), (64, 32, 112, 112, 3),
    (64, 128, 48, 48, 7), (100, 96, 48, 48, 3),
]  # fmt: skip


def without_rule(spec: object, params: Conv2dGw8Params, sm_count: int) -> FpropConfig:
    """The pass's heuristic tile as it was before strip_columns."""
    with mock.patch.object(fprop_spec, "strip_columns", lambda q, block_q: block_q):
        return spec.default_config(params, sm_count)  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layers", nargs="+", metavar="NxCxHxWxK", help="instead of HELD_OUT")
    parser.add_argument("--passes", nargs="+", default=list(PASSES), choices=list(PASSES))
    args = parser.parse_args()
    copy = start()
    sm_count = spio.jit.device_info(0).sm_count
    gains = []
    for params in named_layers(args.layers, HELD_OUT):
        for pass_ in args.passes:
            spec, _, _, default_on = PASSES[pass_]
            tile = spec.default_config(params, sm_count)
            old_tile = without_rule(spec, params, sm_count)
            if tile.block_q == old_tile.block_q:
                print(f"{layer_name(params)} {pass_}: the rule keeps {tile.block_q} columns")
                continue
            new = default_on(params)
            two_ahead = placed(pass_, params, tile, {"prefetch": 2})
            old = placed(pass_, params, old_tile, {})
            times, cudnn_us = time_alternating(params, [old, new, two_ahead], pass_)
            gains.append(times[old] / times[new])
            error = max_error(pass_, params, new)
            print(
                f"{layer_name(params)} {pass_}: {old_tile.block_q} columns "
                f"({old.segments or 'chunks'}) {times[old]:.2f} us -> {tile.block_q} columns "
                f"({new.segments or 'chunks'}, {new.prefetch} ahead) {times[new]:.2f} us, "
                f"{copy_and_cudnn(params, pass_, times[new], copy, cudnn_us)}: "
                f"{gains[-1]:.3f}x; two ahead {times[two_ahead]:.2f} us "
                f"({times[old] / times[two_ahead]:.3f}x); error {error:.1e}",
                flush=True,
            )
    print_geomean(gains)


if __name__ == "__main__":
    main()
