"""Time fprop's and dgrad's kernel compiled from another source against the shipped one: the
same configs, alternating in one process, outputs compared bit for bit (GPU).

    python tools/fprop_source_check.py --source OTHER.cu --passes fprop dgrad \
        --layers 128x64x64x64x3 32x128x16x16x7 [--config block_q=64,mma_k=8]

For each layer (--layers' N x C x H x W x K: K x K filters, padding K // 2) and pass, the
config a launch without one runs (default_config_on, which places the shipped source's
tiles), compiled from the shipped `conv2d_gw8_fprop.cu` and from --source (with the same
generated types.h), each timed ROUNDS times in turn by CUDA-graph replays, the fastest
round's median. A line per layer and pass gives both times, their shares of the copy
bandwidth, the shipped time over the other (above 1: the other source is faster), whether the
two outputs are the same bits, each output's largest error against the fp32 reference over
the reference's largest magnitude (what checks a change that sums in another order; NaN
where it left an element unwritten), and the blocks of each that fit on the GPU at once
(registers move them). A text change to the kernel is timed this way before it lands; `git show
REV:packages/spio-kernels/src/spio/kernels/conv2d_gw8/conv2d_gw8_fprop.cu > OLD.cu` times an
earlier version against today's.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from wgrad_timing import layer_name, named_layers, parse_variant, print_geomean, start

import spio.jit
from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    FpropConfig,
    dgrad,
    dgrad_spec,
    fprop,
    fprop_spec,
)
from spio.kernels.conv2d_gw8._tiling import spread_over_sms
from spio.kernels.conv2d_gw8.bench import Buffers
from spio.kernels.conv2d_gw8.reference import dgrad_reference, fprop_reference
from spio.kernels.timing import time_us

#: Alternating rounds of the two kernels.
ROUNDS = 3


def source_request(
    pass_: str, params: Conv2dGw8Params, config: Any, source: str, arch: str
) -> tuple[Any, str, Any]:
    """The spio.jit.CompileRequest of pass_'s kernel on params with config, compiled from
    source for arch, with its entry point and launch geometry."""
    if pass_ == "dgrad":
        types_h = dgrad_spec.generate_types(params, config)
        name, geometry = dgrad_spec.KERNEL_NAME, dgrad_spec.launch_geometry(params, config)
    else:
        types_h = fprop_spec.generate_types(params, config)
        name, geometry = fprop_spec.KERNEL_NAME, fprop_spec.launch_geometry(params, config)
    return fprop.types_request(fprop.SOURCE_NAME, source, types_h, arch), name, geometry


def source_launch(pass_: str, params: Conv2dGw8Params, config: Any, source: str) -> Any:
    """The ConvLaunch of pass_ on params with config, its kernel compiled from source."""
    arch = spio.jit.device_info(0).arch
    request, name, geometry = source_request(pass_, params, config, source, arch)
    kernel = fprop.compile_requested(request).load(device=0).get_kernel(name)
    return fprop.ConvLaunch(kernel, spread_over_sms(kernel, geometry), params.has_bias)


def chosen_config(pass_: str, params: Conv2dGw8Params, fields: dict[str, Any]) -> Any:
    """The launcher's config of pass_ on params with fields replaced; ValueError where the
    result cannot run params."""
    module, spec = (dgrad, dgrad_spec) if pass_ == "dgrad" else (fprop, fprop_spec)
    config = dataclasses.replace(module.default_config_on(params), **fields)
    spec.check_config(params, config)
    return config


def reference_errors(
    pass_: str, params: Conv2dGw8Params, buffers: Buffers, outputs: dict[str, Any]
) -> dict[str, float]:
    """Each output's largest difference from pass_'s fp32 reference, over the reference's
    largest magnitude (NaN where an element was left unwritten: the outputs start as NaN)."""
    if pass_ == "fprop":
        expected = fprop_reference(buffers.x, buffers.w, buffers.bias, params)
    else:
        expected = dgrad_reference(buffers.grad_y, buffers.w, params)
    scale = float(expected.abs().max())
    return {
        tag: float((got.float() - expected).abs().max()) / scale for tag, got in outputs.items()
    }


def compare(
    pass_: str, params: Conv2dGw8Params, other: str, copy: float, fields: dict[str, Any]
) -> float | None:
    """Print the line of one layer and pass; return the shipped time over the other's, None
    where the config cannot run the layer."""
    import torch

    try:
        config = chosen_config(pass_, params, fields)
    except ValueError as error:
        print(f"{layer_name(params)} {pass_}: left out: {error}", flush=True)
        return None
    buffers = Buffers(params, [pass_], {pass_: []})
    sources = {"shipped": fprop.kernel_source(), "other": other}
    runs, outputs, slots = {}, {}, {}
    for tag, source in sources.items():
        launch = source_launch(pass_, params, config, source)
        if pass_ == "fprop":
            out = buffers.y

            def run(launch: Any = launch) -> None:
                launch(buffers.y, buffers.x, buffers.w, buffers.bias)
        else:
            out = buffers.grad_x

            def run(launch: Any = launch) -> None:
                launch(buffers.grad_x, buffers.grad_y, buffers.w)

        out.fill_(float("nan"))
        run()
        torch.cuda.synchronize()
        outputs[tag] = out.clone()
        runs[tag] = run
        slots[tag] = fprop.resident_slots(launch.kernel, launch.geometry)
    times: dict[str, list[float]] = {tag: [] for tag in runs}
    for _ in range(ROUNDS):
        for tag, run in runs.items():
            times[tag].append(time_us(run, 20, 9, graph=True))
    best = {tag: min(values) for tag, values in times.items()}
    megabytes = params.compulsory_bytes("dgrad" if pass_ == "dgrad" else "fprop") / 1e3
    shares = ", ".join(
        f"{tag} {us:.2f} us ({megabytes / us / copy:.1%} of copy)" for tag, us in best.items()
    )
    gain = best["shipped"] / best["other"]
    same = torch.equal(outputs["shipped"], outputs["other"])
    errors = reference_errors(pass_, params, buffers, outputs)
    print(
        f"{layer_name(params)} {pass_}: {shares}; {gain:.3f}x; same bits {same}; "
        f"error {errors['shipped']:.1e} and {errors['other']:.1e}; "
        f"blocks at once {slots['shipped']} and {slots['other']}; {config}",
        flush=True,
    )
    return gain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", type=Path, required=True, help="the other kernel source")
    parser.add_argument("--passes", nargs="+", choices=("fprop", "dgrad"), default=["fprop"])
    parser.add_argument("--layers", nargs="+", required=True, metavar="NxCxHxWxK")
    parser.add_argument(
        "--config", default="", metavar="NAME=VALUE,...", help="fields replaced in the launcher's"
    )
    args = parser.parse_args()
    other = args.source.read_text(encoding="utf-8")
    fields = parse_variant(args.config, FpropConfig, "--config") if args.config else {}
    copy = start()
    gains = [
        compare(pass_, params, other, copy, fields)
        for params in named_layers(args.layers, [])
        for pass_ in args.passes
    ]
    print_geomean([gain for gain in gains if gain is not None])


if __name__ == "__main__":
    main()
