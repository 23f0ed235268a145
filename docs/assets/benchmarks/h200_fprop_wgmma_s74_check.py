"""Time h200_fprop_wgmma_s74.cu (fprop on wgmma over whole 64-pixel rows; the seventy-fourth
session's experiment, docs/benchmarks.md) against the shipped fprop, in one process,
alternating; outputs checked against the fp32 reference, without and with a bias. Run from the
repository root (the session ran it as scratch_s74/wgmma_check.py beside the source as
fprop_wgmma.cu):

    python docs/assets/benchmarks/h200_fprop_wgmma_s74_check.py --layers 128x64x64x64 \
        --variants "tm8:CHUNK=32,RING=8,PAIRS=2,STORE_MODE=1"

A variant is NAME:MACRO=VALUE,... (the source's macros; L2 = 0-3 is the input map's L2
promotion, BLOCKS caps the blocks an SM through the dynamic shared memory). --compile-only
prints ptxas's registers, spills and wgmma serialization notes (CPU). With ONCE=1 in the
environment each variant runs once, untimed (for Nsight Compute).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2] / "tools"))
sys.path.insert(0, str(HERE))

from h200_fprop_tma_producer_s73_check import parse_variant, shipped_launch  # noqa: E402

import spio.dims  # noqa: E402
import spio.jit  # noqa: E402
from spio.kernels.conv2d_gw8 import Conv2dGw8Params, fprop  # noqa: E402

ROUNDS = 3
ONCE = bool(os.environ.get("ONCE"))
SOURCE = (HERE / "h200_fprop_wgmma_s74.cu").read_text()
SLOT = (66 * 128 + 1023) // 1024 * 1024


def smem_bytes(macros: dict[str, str]) -> int:
    ring = int(macros.get("RING", "6"))
    return 1024 + ring * SLOT + 9 * 4 * 512 + 8 * 2048


def request(macros: dict[str, str], h: int) -> Any:
    defines = [f"#define {k} {v}\n" for k, v in macros.items() if k not in ("BLOCKS", "L2")]
    defines.append(f"#define IMG_H {h}\n")
    return spio.jit.CompileRequest(
        "".join(defines) + SOURCE,
        include_dirs=(spio.dims.include_dir(),),
        arch="sm_90a",
        name="fprop_wgmma.cu",
        options=spio.jit.CompileOptions(extra_flags=("-Xptxas=-v",)),
    )


def ptxas_report(log: str) -> str:
    regs = re.findall(r"Used (\d+) registers", log)
    frames = re.findall(r"(\d+) bytes stack frame, (\d+) bytes spill stores", log)
    notes = ("arning", "C75", "erializ")
    warn = [line for line in log.splitlines() if any(n in line for n in notes)]
    return f"registers {regs}, stack/spills {frames} {warn}"


def row_map(pointer: int, shape: tuple[int, int, int, int], pixels: int, l2: int) -> Any:
    """The map nhwc_row_map (spio.kernels.conv2d_gw8._tensor_maps) makes of rows of `pixels`
    64-channel pixels, 128-byte swizzled, with L2 promotion l2 (0 none, 1-3: 64, 128, 256
    bytes), which nhwc_row_map does not take."""
    import numpy as np
    from cuda.core import TensorMapDescriptorOptions
    from cuda.core.utils import StridedMemoryView

    from spio.kernels._tma import swizzle_mode
    from spio.kernels.conv2d_gw8._tensor_maps import _Nhwc

    promotion = type(TensorMapDescriptorOptions(box_dim=(1,)).l2_promotion)
    view = StridedMemoryView.from_cuda_array_interface(_Nhwc(pointer, shape), stream_ptr=-1)
    return view.as_tensor_map(
        box_dim=(1, 1, pixels, 64),
        swizzle=swizzle_mode(128),
        data_type=np.dtype(np.uint16),
        l2_promotion=list(promotion)[l2],
    )


def compare_layer(text: str, variants: list[tuple[str, dict[str, str]]], copy: float) -> None:
    import torch

    from spio.kernels.conv2d_gw8.bench import Buffers
    from spio.kernels.conv2d_gw8.reference import fprop_reference
    from spio.kernels.timing import time_us

    n, c, h, w = (int(v) for v in text.split("x"))
    params = Conv2dGw8Params(n=n, c=c, h=h, w=w)
    arch = spio.jit.device_info(0).arch
    config = fprop.default_config_on(params)
    buffers = Buffers(params, ["fprop"], {"fprop": []})
    bias = torch.randn(c, device="cuda") * 0.1
    expected = fprop_reference(buffers.x, buffers.w, None, params)
    expected_bias = expected + bias
    scale = float(expected.abs().max())
    shipped = shipped_launch(params, config, arch)
    shape = (n, h, w, c)
    y_map = row_map(buffers.y.data_ptr(), shape, 16, 0)
    codes = spio.jit.compile_many(
        {name: request(macros, h) for name, macros in variants}, cache=False
    )
    runs = {"shipped": lambda: shipped(buffers.y, buffers.x, buffers.w, None)}
    with_bias = {}
    for name, macros in variants:
        kernel = codes[name].load(device=0).get_kernel("fprop_wgmma")
        chunk = int(macros.get("CHUNK", "16"))
        grid = n * -(-h // chunk)
        shared = smem_bytes(macros)
        if "BLOCKS" in macros:
            shared = max(shared, 228 * 1024 // int(macros["BLOCKS"]) - 1024)
        pixels = int(macros.get("BOXW", "66")) // int(macros.get("SPLIT", "1"))
        x_map = row_map(buffers.x.data_ptr(), shape, pixels, int(macros.get("L2", "0")))
        args = (buffers.y, buffers.x, buffers.w, 0, x_map, y_map)
        runs[name] = lambda k=kernel, g=grid, s=shared, a=args: k.launch(g, 128, a, s, None, True)
        bias_args = (buffers.y, buffers.x, buffers.w, bias, x_map, y_map)
        with_bias[name] = lambda k=kernel, g=grid, s=shared, a=bias_args: k.launch(
            g, 128, a, s, None, True
        )
        print(f"  {name}: {ptxas_report(codes[name].log)}, grid {grid}, smem {shared}")
    outputs = {}
    for tag, run in runs.items():
        buffers.y.fill_(float("nan"))
        run()
        torch.cuda.synchronize()
        outputs[tag] = buffers.y.clone()
    bias_errors = {}
    for tag, run in with_bias.items():
        buffers.y.fill_(float("nan"))
        run()
        torch.cuda.synchronize()
        bias_errors[tag] = float((buffers.y.float() - expected_bias).abs().max()) / scale
    if ONCE:
        return
    times: dict[str, list[float]] = {tag: [] for tag in runs}
    for _ in range(ROUNDS):
        for tag, run in runs.items():
            times[tag].append(time_us(run, 20, 9, graph=True))
    megabytes = params.compulsory_bytes("fprop") / 1e3
    base = min(times["shipped"])
    for tag, values in times.items():
        us = min(values)
        error = float((outputs[tag].float() - expected).abs().max()) / scale
        nans = int(outputs[tag].isnan().sum())
        extra = f", bias error {bias_errors[tag]:.1e}" if tag in bias_errors else ""
        print(
            f"{text} {tag}: {us:.2f} us ({megabytes / us / copy:.1%} of copy), "
            f"{base / us:.3f}x shipped, rounds {[round(v, 2) for v in values]}, "
            f"error {error:.1e}, unwritten {nans}{extra}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layers", nargs="+", default=["128x64x64x64"], metavar="NxCxHxW")
    parser.add_argument("--variants", nargs="+", default=["base:"], metavar="NAME:MACRO=V,...")
    parser.add_argument("--compile-only", action="store_true")
    args = parser.parse_args()
    variants = [parse_variant(v) for v in args.variants]
    if args.compile_only:
        for name, macros in variants:
            code = spio.jit.compile_many({0: request(macros, 64)}, cache=False)[0]
            print(name, ptxas_report(code.log), smem_bytes(macros), flush=True)
        return

    from wgrad_timing import start

    copy = start()
    for layer in args.layers:
        compare_layer(layer, variants, copy)


if __name__ == "__main__":
    main()
