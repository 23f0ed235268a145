"""How another NVRTC compiles conv2d_gw8: ptxas's registers, stack and spills of a seeded
sample of configs, written by one environment and compared with another's (no GPU needed).

    python tools/nvrtc_registers.py write OUT.json [--per-layer 8] [--seed 0]
    /other/venv/bin/python tools/nvrtc_registers.py write OTHER.json
    python tools/nvrtc_registers.py compare OUT.json OTHER.json

The latency models were timed on cubins of one NVRTC (the GPU machine's 13.0, which torch
2.11+cu130 pins); a user's environment may load another. `write` compiles, for sm_90 and
without the cache, `--per-layer` configs drawn from each pass's space on each of LAYERS and
records every kernel's report. `compare` counts the configs whose main kernel differs in
registers, in the blocks an SM its registers allow (Hopper's register file; shared memory
may bind first, so this is an upper bound on occupancy changes) and in spill stores, and
lists those whose blocks differ.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import re
from pathlib import Path
from typing import Any

from hopper_occupancy import blocks_per_sm

import spio.jit
from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    dgrad,
    dgrad_spec,
    fprop,
    fprop_spec,
    wgrad,
    wgrad_spec,
)

#: N, C, H = W and the filter's side (padding side // 2): the targets' layers and others.
LAYERS = (
    (128, 64, 64, 3),
    (256, 64, 64, 3),
    (32, 64, 64, 3),
    (64, 128, 32, 3),
    (128, 256, 14, 3),
    (128, 64, 56, 5),
    (32, 128, 16, 7),
    (128, 96, 28, 3),
    (512, 64, 32, 1),
    (16, 1024, 16, 3),
)
PASSES = {"fprop": (fprop, fprop_spec), "dgrad": (dgrad, dgrad_spec), "wgrad": (wgrad, wgrad_spec)}
ARCH = "sm_90"
#: One kernel's lines in ptxas's verbose report.
_REPORT = re.compile(
    r"Function properties for (\S+)\n.*?(\d+) bytes stack frame, (\d+) bytes spill stores"
    r".*?\n.*?Used (\d+) registers",
    re.S,
)


def layer_params(n: int, c: int, side: int, filter_side: int) -> Conv2dGw8Params:
    return Conv2dGw8Params.make(
        n, c, side, side, r=filter_side, s=filter_side, padding=filter_side // 2
    )


def sampled_configs(per_layer: int, seed: int) -> list[tuple[str, tuple[int, int, int, int], Any]]:
    """(pass, layer, config) for per_layer configs of each pass's space on each layer."""
    rng = random.Random(seed)
    sample = []
    for layer in LAYERS:
        params = layer_params(*layer)
        for name, (_, spec) in PASSES.items():
            space = spec.config_space(params)
            sample += [(name, layer, c) for c in rng.sample(space, min(per_layer, len(space)))]
    return sample


def kernel_reports(log: str) -> dict[str, dict[str, int]]:
    """ptxas's report of each kernel in an NVRTC log compiled with -Xptxas=-v."""
    return {
        name: {"stack": int(stack), "spills": int(spills), "registers": int(registers)}
        for name, stack, spills, registers in _REPORT.findall(log)
    }


def write(out: Path, per_layer: int, seed: int) -> None:
    verbose = spio.jit.CompileOptions(extra_flags=("-Xptxas=-v",))
    requests, threads = {}, {}
    for name, layer, config in sampled_configs(per_layer, seed):
        module, spec = PASSES[name]
        params = layer_params(*layer)
        key = f"{name} {'x'.join(map(str, layer))} {config}"
        request = module.compile_request(params, config, ARCH)
        requests[key] = dataclasses.replace(request, options=verbose)
        threads[key] = spec.launch_geometry(params, config).block
    codes = spio.jit.compile_many(requests, cache=False)
    kernels = {
        key: {"threads": threads[key], "kernels": kernel_reports(code.log)}
        for key, code in codes.items()
    }
    build = spio.jit.nvrtc_info().build
    out.write_text(json.dumps({"nvrtc": build, "configs": kernels}))
    print(f"{len(kernels)} configs compiled with NVRTC {build}: {out}")


def main_kernel(kernels: dict[str, dict[str, int]]) -> dict[str, int]:
    """The pass's own kernel of a config's report (wgrad's reduce kernels aside)."""
    for name, report in kernels.items():
        if name.endswith(("_fprop", "_dgrad", "_wgrad")):
            return report
    raise ValueError(f"no conv2d_gw8 pass kernel among {sorted(kernels)}")


def compare(first: dict[str, Any], second: dict[str, Any]) -> list[str]:
    """The comparison's lines: counts, then each config whose blocks an SM differ."""
    counts = {"configs": 0, "registers": 0, "blocks an SM": 0, "spill stores": 0}
    moved = []
    for key, entry in first["configs"].items():
        if key not in second["configs"]:
            continue
        a = main_kernel(entry["kernels"])
        b = main_kernel(second["configs"][key]["kernels"])
        blocks = (
            blocks_per_sm(a["registers"], entry["threads"]),
            blocks_per_sm(b["registers"], entry["threads"]),
        )
        counts["configs"] += 1
        counts["registers"] += a["registers"] != b["registers"]
        counts["spill stores"] += a["spills"] != b["spills"]
        if blocks[0] != blocks[1]:
            counts["blocks an SM"] += 1
            moved.append(
                f"  {key}: {a['registers']} -> {b['registers']} registers, "
                f"{blocks[0]} -> {blocks[1]} blocks an SM"
            )
    head = (
        f"NVRTC {first['nvrtc']} -> {second['nvrtc']}: of {counts['configs']} configs, "
        f"{counts['registers']} differ in registers, {counts['blocks an SM']} in the blocks "
        f"an SM their registers allow, {counts['spill stores']} in spill stores"
    )
    return [head, *moved]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    writing = commands.add_parser("write", help="compile the sample, write the reports")
    writing.add_argument("out", type=Path)
    writing.add_argument("--per-layer", type=int, default=8)
    writing.add_argument("--seed", type=int, default=0)
    comparing = commands.add_parser("compare", help="compare two environments' reports")
    comparing.add_argument("first", type=Path)
    comparing.add_argument("second", type=Path)
    args = parser.parse_args()
    if args.command == "write":
        write(args.out, args.per_layer, args.seed)
    else:
        first, second = (json.loads(path.read_text()) for path in (args.first, args.second))
        print("\n".join(compare(first, second)))


if __name__ == "__main__":
    main()
