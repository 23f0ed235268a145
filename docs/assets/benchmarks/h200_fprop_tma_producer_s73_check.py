"""Time h200_fprop_tma_producer_s73.cu (fprop's rows by TMA from a loading warp; the seventy-third
session's experiment, docs/benchmarks.md) against the shipped fprop, in one process, alternating;
outputs compared with the shipped kernel's and the fp32 reference. Run from the repository root
(the session ran it as scratch_s73/tma_check.py beside the source as fprop_tma.cu):

    python docs/assets/benchmarks/h200_fprop_tma_producer_s73_check.py \
        --layers 128x64x64x64 --variants "w4:WARP_STORES=1" "b3:MIN_BLOCKS=3,BLOCK_P=32"

A variant is NAME:MACRO=VALUE,...: the macros are defined ahead of the source, except BLOCK_P,
which replaces the launcher's block_p. --compile-only prints ptxas's registers and spills (CPU).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2] / "tools"))

import spio.jit  # noqa: E402
from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig, fprop, fprop_spec  # noqa: E402
from spio.kernels.conv2d_gw8._tensor_maps import nhwc_row_map  # noqa: E402
from spio.kernels.conv2d_gw8._tiling import ceil_div, spread_over_sms  # noqa: E402
from spio.kernels.conv2d_gw8.fprop_spec import LaunchGeometry  # noqa: E402

ROUNDS = 3
SOURCE = (HERE / "h200_fprop_tma_producer_s73.cu").read_text()


def parse_layer(text: str) -> Conv2dGw8Params:
    n, c, h, w = (int(v) for v in text.split("x"))
    return Conv2dGw8Params(n=n, c=c, h=h, w=w)


def parse_variant(text: str) -> tuple[str, dict[str, str]]:
    name, _, macros = text.partition(":")
    fields = {}
    for item in filter(None, macros.split(",")):
        key, _, value = item.partition("=")
        fields[key] = value
    return name, fields


def tma_geometry(params: Conv2dGw8Params, config: FpropConfig, macros: dict[str, str]) -> Any:
    base = fprop_spec.launch_geometry(params, config)
    ring = int(macros.get("TMA_RING", "6"))
    row_bytes = fprop_spec.smem_columns(params, config) * config.block_g * 16
    slot = ceil_div(row_bytes, 1024) * 1024  # slots start on the 128-byte swizzle's repeat
    input_ring = fprop_spec.ring_rows(params, config) * row_bytes
    rest = fprop_spec.shared_mem_bytes(params, config) - input_ring
    rest += (int(macros.get("STAGE_BUFS", "2")) - 2) * config.block_q * config.block_g * 16
    extra = 128 if "SETMAXNREG" in macros else 32  # a loading warpgroup, or warp
    return LaunchGeometry(base.grid, base.block + extra, 1024 + ring * slot + rest)


def source_with(macros: dict[str, str]) -> str:
    defines = [f"#define {k} {v}\n" for k, v in macros.items() if k != "BLOCK_P"]
    return "".join(defines) + SOURCE


def request(params: Conv2dGw8Params, config: FpropConfig, macros: dict[str, str], arch: str) -> Any:
    if "SETMAXNREG" in macros:
        arch = arch.rstrip("a") + "a"  # setmaxnreg is sm_90a's
    verbose = spio.jit.CompileOptions(extra_flags=("-Xptxas=-v",))
    types_h = fprop_spec.generate_types(params, config)
    req = fprop.types_request("fprop_tma.cu", source_with(macros), types_h, arch)
    return dataclasses.replace(req, options=verbose)


def ptxas_report(log: str) -> str:
    regs = re.findall(r"Used (\d+) registers", log)
    frames = re.findall(r"(\d+) bytes stack frame, (\d+) bytes spill stores", log)
    return f"registers {regs}, stack/spills {frames}"


def shipped_launch(params: Conv2dGw8Params, config: FpropConfig, arch: str) -> Any:
    """The shipped fprop's launch of config, placed as the launcher places it."""
    kernel = fprop.compile_fprop(params, config, arch).load(device=0).get_kernel("conv2d_gw8_fprop")
    geometry = spread_over_sms(kernel, fprop_spec.launch_geometry(params, config))
    return fprop.ConvLaunch(kernel, geometry)


def compare_layer(
    params: Conv2dGw8Params, variants: list[tuple[str, dict[str, str]]], copy: float, arch: str
) -> None:
    """Print the shipped fprop's line and each variant's on one layer."""
    import torch

    from spio.kernels.conv2d_gw8.bench import Buffers
    from spio.kernels.conv2d_gw8.reference import fprop_reference
    from spio.kernels.timing import time_us

    config = fprop.default_config_on(params)
    if config.segments or config.block_g != 8 or config.block_q < 16:
        config = dataclasses.replace(config, segments=0)
        print(f"{params}: the launcher's config has segments; using {config}", flush=True)
    buffers = Buffers(params, ["fprop"], {"fprop": []})
    expected = fprop_reference(buffers.x, buffers.w, buffers.bias, params)
    scale = float(expected.abs().max())
    shipped = shipped_launch(params, config, arch)
    shape = (params.n, params.h, params.w, params.c)
    x_map = nhwc_row_map(
        buffers.x.data_ptr(), shape, fprop_spec.smem_columns(params, config), config.block_g
    )
    y_map = nhwc_row_map(buffers.y.data_ptr(), shape, 32, 2)
    configs = {
        name: dataclasses.replace(config, block_p=int(macros["BLOCK_P"]))
        if "BLOCK_P" in macros
        else config
        for name, macros in variants
    }
    codes = spio.jit.compile_many(
        {name: request(params, configs[name], macros, arch) for name, macros in variants},
        cache=False,
    )
    runs = {"shipped": lambda: shipped(buffers.y, buffers.x, buffers.w, None)}
    slots = {"shipped": fprop.resident_slots(shipped.kernel, shipped.geometry)}
    args = (buffers.y, buffers.x, buffers.w, 0, x_map, y_map)
    for name, macros in variants:
        kernel = codes[name].load(device=0).get_kernel("conv2d_gw8_fprop_tma")
        geometry = spread_over_sms(kernel, tma_geometry(params, configs[name], macros))
        runs[name] = lambda k=kernel, g=geometry: k.launch(
            g.grid, g.block, args, g.shared_mem, None, True
        )
        slots[name] = fprop.resident_slots(kernel, geometry)
        print(
            f"  {name}: {ptxas_report(codes[name].log)}, {geometry}, blocks at once {slots[name]}"
        )
    outputs = {}
    for tag, run in runs.items():
        buffers.y.fill_(float("nan"))
        run()
        torch.cuda.synchronize()
        outputs[tag] = buffers.y.clone()
    times: dict[str, list[float]] = {tag: [] for tag in runs}
    for _ in range(ROUNDS):
        for tag, run in runs.items():
            times[tag].append(time_us(run, 20, 9, graph=True))
    megabytes = params.compulsory_bytes("fprop") / 1e3
    base = min(times["shipped"])
    for tag, values in times.items():
        us = min(values)
        error = float((outputs[tag].float() - expected).abs().max()) / scale
        same = torch.equal(outputs[tag], outputs["shipped"])
        print(
            f"{params.n}x{params.c}x{params.h}x{params.w} {tag}: {us:.2f} us "
            f"({megabytes / us / copy:.1%} of copy), {base / us:.3f}x shipped, "
            f"rounds {[round(v, 2) for v in values]}, error {error:.1e}, same bits {same}, "
            f"blocks {slots[tag]}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layers", nargs="+", default=["128x64x64x64"], metavar="NxCxHxW")
    parser.add_argument("--variants", nargs="+", default=["base:"], metavar="NAME:MACRO=V,...")
    parser.add_argument("--compile-only", action="store_true")
    parser.add_argument("--arch", default="sm_90")
    args = parser.parse_args()
    variants = [parse_variant(v) for v in args.variants]
    if args.compile_only:
        for layer in args.layers:
            params = parse_layer(layer)
            config = fprop_spec.default_config(params, 132)
            for name, macros in variants:
                code = spio.jit.compile_many(
                    {0: request(params, config, macros, args.arch)}, cache=False
                )[0]
                print(layer, config, name, ptxas_report(code.log), flush=True)
        return

    from wgrad_timing import start

    copy = start()
    arch = spio.jit.device_info(0).arch
    for layer in args.layers:
        compare_layer(parse_layer(layer), variants, copy, arch)


if __name__ == "__main__":
    main()
