"""Time the launcher's wgrad config against variants of it named on the command line, per
layer (GPU).

    python tools/wgrad_variants_check.py --layers 512x256x14x14x3 \
        --variants image_sync=True "block_n=1,walk_n=8" tma=True

For each layer (--layers' N x C x H x W x K: K x K filters, padding K // 2, or NAMED): the
config a launch without one runs (wgrad.default_config_on) and, for each variant, the tile
it places (wgrad.default_tile_on) with the variant's fields replaced, then placed as a
launch given that tile places it (wgrad.balanced_config_on: walking segments where its
waves leave SMs idle or fewer partial sums pay, then producer warps where its rows come by
TMA, ...), except the placement fields the variant names, which keep its values
(skip_pad_rows=False times the launcher's config without that flag; a variant naming
segments keeps that walk: segments=0 runs row chunks).
A variant that cannot run the layer is reported with the reason and left out. Timed in this
process, alternating three rounds (CUDA-graph replays of the whole pass, the fastest round's
median), with cuDNN and the copy bandwidth; each variant's registers and blocks per SM are
printed, and the fastest (with --check-all every variant) is checked against the fp32
reference.

The other check tools each compare one field; this one is for a question that is not yet a
field's rule (which walk, barrier or tile a layer under its target wants).
"""

from __future__ import annotations

import argparse
import dataclasses

from wgrad_timing import (
    layer_name,
    max_error,
    named_layers,
    parse_variant,
    speed_up,
    start,
    time_alternating,
)

import spio.kernels.conv2d_gw8._tiling as tiling
from spio.kernels.conv2d_gw8 import Conv2dGw8Params, WgradConfig, wgrad, wgrad_spec
from spio.kernels.conv2d_gw8.wgrad import wgrad_launch
from spio.kernels.conv2d_gw8.wgrad_walks import slots_on

#: The large-batch 3 x 3 layers whose wgrad is under 2.5x cuDNN (thirty-fifth session).
NAMED = [(512, 256, 14, 14, 3), (128, 1024, 16, 16, 3), (128, 128, 32, 32, 3)]


def variants_of(
    params: Conv2dGw8Params, launched: WgradConfig, tile: WgradConfig, texts: list[str]
) -> dict[str, WgradConfig]:
    """Each variant text's config as a launch given its tile places it, the placement fields
    it names kept as it names them; those that cannot run params are reported and left out."""
    variants = {"launched": launched}
    for text in texts:
        fields = parse_variant(text, WgradConfig)
        pinned = {k: v for k, v in fields.items() if k in WgradConfig.PLACEMENT_FIELDS}
        try:
            varied = dataclasses.replace(tile, **fields)
            wgrad_spec.check_config(params, varied)
            # (A walk the variant names is kept: balancing it would replace its segments.)
            place = wgrad.improved_config_on if "segments" in pinned else wgrad.balanced_config_on
            placed = dataclasses.replace(place(params, varied), **pinned)
            wgrad_spec.check_config(params, placed)
        except ValueError as error:
            print(f"  {text}: cannot run: {error}", flush=True)
            continue
        variants[text] = placed
    return variants


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", nargs="+", metavar="NxCxHxWxK", help="instead of NAMED")
    parser.add_argument("--variants", nargs="+", required=True, metavar="FIELD=VALUE,...")
    parser.add_argument(
        "--shared-mem-cap",
        type=int,
        metavar="BYTES",
        help="the configs' shared-memory limit instead of _tiling.MAX_SHARED_MEM (e.g. 232448, "
        "sm_90's 227 KiB, for rings deeper than the portable limit allows)",
    )
    parser.add_argument(
        "--check-all",
        action="store_true",
        help="check every variant against the fp32 reference, not only the fastest (for "
        "tiles no config space has held)",
    )
    args = parser.parse_args()
    if args.shared_mem_cap is not None:
        tiling.MAX_SHARED_MEM = args.shared_mem_cap
    for text in args.variants:
        parse_variant(text, WgradConfig)  # a typo stops the run before anything compiles
    copy = start()
    for params in named_layers(args.layers, NAMED):
        print(f"{layer_name(params)}:", flush=True)
        variants = variants_of(
            params, wgrad.default_config_on(params), wgrad.default_tile_on(params), args.variants
        )
        configs = list(variants.values())
        times, cudnn_us = time_alternating(params, configs)
        launched = variants["launched"]
        for text, config in variants.items():
            main_kernel = wgrad_launch(params, config).main
            print(
                f"  {text}: {times[config]:.2f} us "
                f"{speed_up(params, times[launched], times[config], copy, cudnn_us)} "
                f"registers {main_kernel.attributes.registers}, {slots_on(params, config)} "
                f"blocks at once, grid {wgrad_spec.grid_blocks(params, config)}; {config}",
                flush=True,
            )
        if args.check_all:
            for text, config in variants.items():
                print(f"  {text}: err {max_error(params, config):.1e}", flush=True)
        else:
            fastest = min(configs, key=times.__getitem__)
            print(f"  fastest err {max_error(params, fastest):.1e}", flush=True)


if __name__ == "__main__":
    main()
