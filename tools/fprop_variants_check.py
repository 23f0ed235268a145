"""Time the launcher's fprop and dgrad configs against variants of their tiles named on the
command line, per layer and pass (GPU).

    python tools/fprop_variants_check.py --layers 128x64x48x48x3 \
        --variants "block_q=48,warp_q16=1" "block_q=16,warp_q16=1"

For each layer (--layers' N x C x H x W x K: K x K filters, padding K // 2) and pass: the
config a launch without one runs (default_config_on) and, for each variant, the heuristic's
tile (the pass's spec.default_config) with the variant's fields replaced, placed as the
launcher places its own (fprop.walk_chunks: the walk shortened to even out the waves or
split over one wave, the ring deepened where the SMs hold few blocks; then segments where
fprop_segments says), the block_p and prefetch the variant names kept in those chunks; a
variant naming segments=1 walks one wave of segments instead, as many as fit at once, and one
naming segments=0 keeps its row chunks (as a model's pick runs, placement.placed_config_on).
A variant is the tile it names: it is not deepened as the launcher deepens its own 1 x 1
tiles (fprop.tile_chunks), so "prefetch=2" times the launcher's tile as it ran before that
rule. A variant that cannot run the layer is reported and left out. Timed in this process,
alternating three rounds (CUDA-graph replays of the pass, the fastest round's median), with
cuDNN and the copy bandwidth; each variant's registers, blocks at once and grid are printed,
and the fastest is checked against the fp32 reference.

wgrad_variants_check.py is the same question for wgrad.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from fprop_segments_check import PASSES, max_error
from wgrad_timing import (
    copy_and_cudnn,
    layer_name,
    named_layers,
    parse_variant,
    start,
    time_alternating,
)

import spio.jit
from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig, dgrad_spec, fprop, fprop_spec
from spio.kernels.conv2d_gw8.fprop_segments import segments_or_chunks, slots_on

#: Fields a variant names that the placement keeps as named.
KEPT_FIELDS = ("block_p", "prefetch", "segments")


def placed(pass_: str, params: Conv2dGw8Params, tile: FpropConfig, kept: dict[str, Any]) -> Any:
    """tile as the launcher would place it on this GPU, the fields in kept as they are: one
    wave of segments where kept names segments >= 1, else its row chunks as walk_chunks
    places them with kept's block_p and prefetch, then (unless kept names segments=0)
    segments where fprop_segments says."""
    kernel_params = dgrad_spec.to_fprop_params(params) if pass_ == "dgrad" else params

    def slots_of(config: FpropConfig) -> int:
        return slots_on(pass_, params, config)

    if kept.get("segments"):
        return fprop_spec.stream_config(kernel_params, tile, slots_of(tile))
    sm_count = spio.jit.device_info(0).sm_count
    chunks = fprop.walk_chunks(kernel_params, tile, slots_of(tile), sm_count)
    chunks = dataclasses.replace(chunks, **kept)
    if "segments" in kept:
        return chunks  # segments=0: row chunks, as a model's pick runs
    return segments_or_chunks(kernel_params, chunks, slots_of)


def variants_of(
    pass_: str, params: Conv2dGw8Params, launched: FpropConfig, tile: FpropConfig, texts: list[str]
) -> dict[str, FpropConfig]:
    """The launcher's config and each variant text's: tile (the heuristic's) with the
    variant's fields, placed; those that cannot run params are reported and left out."""
    check_config = PASSES[pass_][0].check_config
    variants = {"launched": launched}
    for text in texts:
        fields = parse_variant(text, FpropConfig)
        kept = {name: value for name, value in fields.items() if name in KEPT_FIELDS}
        try:
            varied = dataclasses.replace(tile, **fields)
            check_config(params, varied)
            config = placed(pass_, params, varied, kept)
            check_config(params, config)
        except ValueError as error:
            print(f"  {pass_} {text}: cannot run: {error}", flush=True)
            continue
        variants[text] = config
    return variants


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", nargs="+", required=True, metavar="NxCxHxWxK")
    parser.add_argument("--variants", nargs="+", required=True, metavar="FIELD=VALUE,...")
    parser.add_argument("--passes", nargs="+", default=list(PASSES), choices=list(PASSES))
    args = parser.parse_args()
    for text in args.variants:
        parse_variant(text, FpropConfig)  # a typo stops the run before anything compiles
    copy = start()
    for params in named_layers(args.layers, []):
        for pass_ in args.passes:
            spec, launch, _, default_on = PASSES[pass_]
            tile = spec.default_config(params, spio.jit.device_info(0).sm_count)
            variants = variants_of(pass_, params, default_on(params), tile, args.variants)
            configs = list(variants.values())
            times, cudnn_us = time_alternating(params, configs, pass_)
            launched = times[variants["launched"]]
            print(f"{layer_name(params)} {pass_}: cuDNN {cudnn_us:.2f} us", flush=True)
            for text, config in variants.items():
                us = times[config]
                print(
                    f"  {text}: {us:.2f} us, {copy_and_cudnn(params, pass_, us, copy, cudnn_us)}, "
                    f"{launched / us:.3f}x the launcher's; "
                    f"registers {launch(params, config).kernel.attributes.registers}, "
                    f"{slots_on(pass_, params, config)} blocks at once, grid "
                    f"{spec.grid_blocks(params, config)}; {config}",
                    flush=True,
                )
            fastest = min(configs, key=times.__getitem__)
            print(f"  fastest error {max_error(pass_, params, fastest):.1e}", flush=True)


if __name__ == "__main__":
    main()
