"""fprop and dgrad: the launcher's row chunks against the heuristic's tile walking segments
of each column strip's stream of rows, one wave of equal walks (GPU).

    python tools/fprop_segments_check.py [--layers NxCxHxWxK ...] [--passes fprop dgrad]

For each layer (K x K filters, padding K // 2; NAMED where --layers is not given) and pass:
the config a launch without one runs without segments (fprop.chunks_config_on: the
heuristic's tile, its walk balanced over the waves) and that tile walking segments for the
blocks that fit on the GPU at once (fprop_spec.stream_config), timed in this process in
alternating rounds (CUDA-graph replays, the fastest round's median), with cuDNN, the copy
bandwidth, both kernels' registers and blocks a wave, whether the launcher's default
(fprop_segments' rule) takes the segments, and their largest error against the fp32
reference. --held-out times HELD_OUT's layers instead of NAMED's. --prefetch D ... also
times the segments of the tile at those prefetch depths (each with its own slots) and the
row chunks at D rows ahead, in the same rounds.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

import torch
from wgrad_timing import layer_name, named_layers, start, time_alternating

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    conv2d_gw8_dgrad,
    conv2d_gw8_fprop,
    dgrad,
    dgrad_spec,
    fprop,
    fprop_segments,
    fprop_spec,
)
from spio.kernels.conv2d_gw8.reference import dgrad_reference, fprop_reference

#: The batch sweep of the target layer (uneven waves at 96 and 192) and layers of the
#: targets' other shapes.
NAMED = [
    *((n, 64, 64, 64, 3) for n in (64, 96, 128, 192, 256, 512)),
    (128, 128, 32, 32, 3),
    (256, 256, 16, 16, 3),
    (128, 1024, 16, 16, 3),
    (512, 256, 14, 14, 3),
    (128, 64, 56, 56, 5),
    (64, 256, 28, 28, 7),
    (128, 256, 28, 28, 1),
    (100, 128, 32, 32, 3),
]

PASSES: dict[str, tuple[Any, Any, Any, Any]] = {
    "fprop": (fprop_spec, fprop.fprop_launch, fprop.chunks_config_on, fprop.default_config_on),
    "dgrad": (dgrad_spec, dgrad.dgrad_launch, dgrad.chunks_config_on, dgrad.default_config_on),
}
#: Layers none of the rule's figures came from (fprop_segments): batches and images of 3 x 3
#: layers whose chunks the rule replaces or keeps, a 5 x 5 filter on 48 rows, bf16.
HELD_OUT = [
    (80, 64, 64, 64, 3),
    (160, 64, 64, 64, 3),
    (300, 64, 64, 64, 3),
    (200, 64, 56, 56, 3),
    (128, 64, 56, 56, 3),
    (100, 64, 48, 48, 3),
    (160, 128, 32, 32, 3),
    (96, 256, 32, 32, 3),
    (128, 96, 40, 40, 3),
    (64, 128, 48, 48, 5),
    (48, 128, 64, 64, 3),
]


def _kernel_params(pass_: str, params: Conv2dGw8Params) -> Conv2dGw8Params:
    return dgrad_spec.to_fprop_params(params) if pass_ == "dgrad" else params


def segmented(pass_: str, params: Conv2dGw8Params, tile: Any) -> tuple[Any, int]:
    """tile walking segments for the blocks of it that fit on the GPU at once, and that
    many blocks."""
    slots = fprop_segments.slots_on(pass_, params, dataclasses.replace(tile, segments=1))
    return fprop_spec.stream_config(_kernel_params(pass_, params), tile, slots), slots


def max_error(pass_: str, params: Conv2dGw8Params, config: Any) -> float:
    """config's largest |error| against the fp32 reference over the largest |reference|
    (output pre-filled with NaN)."""
    dtype = getattr(torch, params.dtype)
    w = (torch.randn(params.weight_shape, device="cuda") / (8 * params.r * params.s)).to(dtype)
    if pass_ == "fprop":
        x = torch.randn(params.input_shape, device="cuda").to(dtype)
        out = torch.full(params.output_shape, float("nan"), device="cuda", dtype=dtype)
        conv2d_gw8_fprop(out, x, w, None, params, config)
        expected = fprop_reference(x, w, None, params)
    else:
        grad_y = torch.randn(params.output_shape, device="cuda").to(dtype)
        out = torch.full(params.input_shape, float("nan"), device="cuda", dtype=dtype)
        conv2d_gw8_dgrad(out, grad_y, w, params, config)
        expected = dgrad_reference(grad_y, w, params)
    return float((out.float() - expected).abs().max() / expected.abs().max())


def _deeper(pass_: str, params: Conv2dGw8Params, tile: Any, chunks: Any, depth: int) -> list[Any]:
    """chunks and tile's segments at `depth` rows ahead, where the tile can hold them."""
    configs = []
    for config in (chunks, tile):
        deeper = dataclasses.replace(config, prefetch=depth)
        try:
            PASSES[pass_][0].check_config(params, deeper)
        except ValueError:
            continue
        configs.append(deeper if config is chunks else segmented(pass_, params, deeper)[0])
    return configs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layers", nargs="+", metavar="NxCxHxWxK", help="instead of NAMED")
    parser.add_argument("--passes", nargs="+", default=list(PASSES), choices=list(PASSES))
    parser.add_argument("--held-out", action="store_true", help="time HELD_OUT's layers")
    parser.add_argument("--prefetch", nargs="+", type=int, default=[], metavar="D")
    args = parser.parse_args()
    copy = start()
    sm_count = torch.cuda.get_device_properties(0).multi_processor_count
    for params in named_layers(args.layers, HELD_OUT if args.held_out else NAMED):
        for pass_ in args.passes:
            spec, launch, chunks_on, default_on = PASSES[pass_]
            tile = spec.default_config(params, sm_count)
            if tile.block_q < fprop_spec.TILE_Q:
                print(f"{layer_name(params)} {pass_}: images side by side, no segments")
                continue
            chunks = chunks_on(params)
            segments, slots = segmented(pass_, params, tile)
            rule = "takes segments" if default_on(params).segments else "keeps chunks"
            deeper = [
                config
                for depth in args.prefetch
                for config in _deeper(pass_, params, tile, chunks, depth)
            ]
            times, cudnn_us = time_alternating(params, [chunks, segments, *deeper], pass_)
            registers = [launch(params, c).kernel.attributes.registers for c in (chunks, segments)]
            blocks = [spec.grid_blocks(params, c) for c in (chunks, segments)]
            nbytes = params.compulsory_bytes(pass_) / 1e3
            shares = [nbytes / times[c] / copy for c in (chunks, segments)]
            print(
                f"{layer_name(params)} {pass_}: chunks (block_p {chunks.block_p}, {blocks[0]} "
                f"blocks, {registers[0]} registers) {times[chunks]:.2f} us {shares[0]:.1%}, "
                f"{cudnn_us / times[chunks]:.2f}x cuDNN -> {segments.segments} segments "
                f"({blocks[1]} blocks, {slots} slots, {registers[1]} registers) "
                f"{times[segments]:.2f} us {shares[1]:.1%}, {cudnn_us / times[segments]:.2f}x "
                f"cuDNN: {times[chunks] / times[segments]:.3f}x ({rule}); error "
                f"{max_error(pass_, params, segments):.1e}",
                flush=True,
            )
            for config in deeper:
                walk = f"{config.segments} segments" if config.segments else "chunks"
                print(
                    f"    prefetch {config.prefetch} {walk}: {times[config]:.2f} us "
                    f"{nbytes / times[config] / copy:.1%}, {times[chunks] / times[config]:.3f}x "
                    f"the chunks; error {max_error(pass_, params, config):.1e}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
