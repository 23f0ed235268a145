"""Time plain copy kernels of several shapes beside torch's copy_ of the same bytes, in one
process (GPU): how fast can a kernel on the SMs move the bytes of a pass, and with which
pattern of loads and stores?

    python tools/copy_patterns.py [--mib 64 128 1024] [--rounds 3] [--fprop]

Each kernel of copy_patterns.cu runs in the variants below and is checked to copy every byte.
Each line: the time (the fastest round's median of CUDA-graph replays), the bytes read plus
written over it, and its share of the copy bandwidth (a 1 GiB copy_, as every benchmark's).
With --fprop, fprop at 128x64x64x64 (the launcher's config: 64 MiB in, 64 MiB out) joins the
64 MiB table.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from fprop_copy_skeleton import check_copies

import spio.dims
import spio.jit
from spio.kernels.conv2d_gw8 import Conv2dGw8Params, fprop
from spio.kernels.timing import copy_bandwidth_gbs, time_us

SOURCE = Path(__file__).with_name("copy_patterns.cu")
CELL = 16  # bytes a thread moves at once
WALK_IMAGE_CELLS = 64 * 8192 // CELL  # walk's images: 64 rows of 64 pixels of 128 bytes


def walk(burst: int, ahead: int, chunk_rows: int = 16) -> Variant:
    """fprop's walk of rows without halo or arithmetic, 4 blocks an SM."""
    macros = {"BURST": burst, "AHEAD": ahead, "CHUNK_ROWS": chunk_rows}
    return Variant("walk", 128, macros, blocks_per_sm=4)


@dataclass(frozen=True)
class Variant:
    """A kernel of copy_patterns.cu with its macros and launch shape."""

    kernel: str
    threads: int
    macros: dict[str, int] = field(default_factory=dict)
    #: grid_stride, own_region, claimed and bulk: blocks an SM; block_chunks: one block per
    #: threads * UNROLL cells.
    blocks_per_sm: int = 0
    #: block_chunks: place the chunks of neighbouring blocks far apart.
    spread: bool = False

    def grid(self, cells: int, sms: int) -> int:
        if self.kernel == "walk":
            # Images of 64 rows of 8 KB: chunks x 2 strips each.
            return cells // WALK_IMAGE_CELLS * (64 // self.macros["CHUNK_ROWS"]) * 2
        if self.kernel == "block_chunks":
            per_block = self.threads * self.macros.get("UNROLL", 4)
            return -(-cells // per_block)
        return sms * self.blocks_per_sm

    def args(self, dst: torch.Tensor, src: torch.Tensor, tickets: torch.Tensor) -> tuple:
        """The kernel's arguments for a copy of src to dst (tickets: claimed's counter)."""
        cells = src.numel() // CELL
        if self.kernel == "block_chunks":
            blocks = self.grid(cells, 1)
            return (dst, src, cells, odd_spread(blocks) if self.spread else 1)
        if self.kernel == "claimed":
            return (dst, src, cells, tickets)
        return (dst, src, cells)

    def shared(self, smem_per_sm: int) -> int:
        if self.kernel == "bulk":
            return self.macros["CHUNK"] * self.macros["STAGES"]
        if self.kernel == "walk":
            # The ring, padded so that blocks_per_sm blocks fit on an SM, as fprop's registers
            # hold its tile to 4 (less the 1 KiB a block the driver reserves).
            ring = self.macros["BURST"] * (self.macros["AHEAD"] + 1) * 4096
            padded = smem_per_sm // self.blocks_per_sm - 1024
            if ring > padded:
                raise SystemExit(f"{self}: a ring of {ring} bytes holds fewer blocks an SM")
            return padded
        return 0


VARIANTS: dict[str, Variant] = {
    "grid-stride 512 x 4/SM, 1 cell": Variant("grid_stride", 512, {"UNROLL": 1}, 4),
    "grid-stride 512 x 4/SM, 4 cells": Variant("grid_stride", 512, {"UNROLL": 4}, 4),
    "grid-stride 512 x 2/SM, 8 cells": Variant("grid_stride", 512, {"UNROLL": 8}, 2),
    "grid-stride 512 x 4/SM, 4 cells, .cs": Variant("grid_stride", 512, {"UNROLL": 4, "CS": 1}, 4),
    "blocks of 128 x 4 cells (8 KB)": Variant("block_chunks", 128, {"UNROLL": 4}),
    "blocks of 128 x 8 cells (16 KB)": Variant("block_chunks", 128, {"UNROLL": 8}),
    "blocks of 256 x 8 cells (32 KB)": Variant("block_chunks", 256, {"UNROLL": 8}),
    "blocks of 512 x 2 cells (16 KB)": Variant("block_chunks", 512, {"UNROLL": 2}),
    "blocks of 128 x 4 cells, .cs": Variant("block_chunks", 128, {"UNROLL": 4, "CS": 1}),
    "blocks of 512 x 2 cells, spread": Variant("block_chunks", 512, {"UNROLL": 2}, spread=True),
    "blocks of 128 x 4 cells, spread": Variant("block_chunks", 128, {"UNROLL": 4}, spread=True),
    "own regions, 512 x 4/SM, 2 cells": Variant("own_region", 512, {"UNROLL": 2}, 4),
    "own regions, 128 x 16/SM, 4 cells": Variant("own_region", 128, {"UNROLL": 4}, 16),
    "claimed, 512 x 4/SM, 2 cells": Variant("claimed", 512, {"UNROLL": 2}, 4),
    "claimed, 128 x 16/SM, 4 cells": Variant("claimed", 128, {"UNROLL": 4}, 16),
    "walk, 1 row at a time, 2 ahead (fprop's)": walk(1, 2),
    "walk, 1 row at a time, 4 ahead": walk(1, 4),
    "walk, 2 rows at a time, 1 ahead": walk(2, 1),
    "walk, 2 rows at a time, 2 ahead": walk(2, 2),
    "walk, 4 rows at a time, 1 ahead": walk(4, 1),
    "walk, 4 rows at a time, 2 ahead": walk(4, 2),
    "walk, 8 rows at a time, 0 ahead": walk(8, 0),
    "walk 32 rows, 1 row at a time, 2 ahead": walk(1, 2, 32),
    "walk 32 rows, 4 rows at a time, 2 ahead": walk(4, 2, 32),
    "bulk 4 KB x 8 stages, 4/SM": Variant("bulk", 32, {"CHUNK": 4096, "STAGES": 8}, 4),
    "bulk 8 KB x 8 stages, 2/SM": Variant("bulk", 32, {"CHUNK": 8192, "STAGES": 8}, 2),
    "bulk 16 KB x 4 stages, 2/SM": Variant("bulk", 32, {"CHUNK": 16384, "STAGES": 4}, 2),
    "bulk 32 KB x 6 stages, 1/SM": Variant("bulk", 32, {"CHUNK": 32768, "STAGES": 6}, 1),
}


def odd_spread(blocks: int) -> int:
    """An odd multiplier near 0.618 x blocks, for a grid of a power of two blocks (coprime to
    it, so every chunk is copied once): neighbouring blocks' chunks land far apart."""
    if blocks & (blocks - 1):
        raise SystemExit(f"a spread grid needs a power of two blocks, got {blocks}")
    return int(blocks * 0.618) | 1


def load_kernel(variant: Variant, arch: str) -> Any:
    """The variant's kernel, compiled for arch and loaded on device 0."""
    code = spio.jit.compile(
        SOURCE.read_text(encoding="utf-8"),
        include_dirs=(spio.dims.include_dir(),),
        defines=variant.macros,
        arch=arch,
        name=SOURCE.name,
    )
    return code.load(device=0).get_kernel(variant.kernel)


def fprop_run(n: int) -> tuple[str, Callable[[], object]]:
    """fprop at nx64x64x64 with the launcher's config, as a launch to time."""
    params = Conv2dGw8Params(n=n, c=64, h=64, w=64)
    config = fprop.default_config_on(params)
    launch = fprop.fprop_launch(params, config)
    x = torch.randn(n, 64, 64, 64, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    w = torch.randn(64, 3, 3, 8, device="cuda", dtype=torch.float16)
    return f"fprop {n}x64x64x64, {config}", lambda: launch(y, x, w)


def copy_runs(
    kernels: dict[str, Any], nbytes: int, sms: int, smem_per_sm: int
) -> dict[str, Callable[[], object]]:
    """torch's copy_ and every variant's launch, copying the same nbytes; each variant checked
    to copy every byte."""
    cells = nbytes // CELL
    src = torch.randint(0, 255, (nbytes,), dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    runs: dict[str, Callable[[], object]] = {"torch copy_": lambda: dst.copy_(src)}
    for name, variant in VARIANTS.items():
        # Each variant its own counter: its tickets wrap at its own chunks + grid.
        tickets = torch.zeros(1, dtype=torch.int64, device="cuda")
        launch = functools.partial(
            kernels[name].launch,
            variant.grid(cells, sms),
            variant.threads,
            variant.args(dst, src, tickets),
            variant.shared(smem_per_sm),
            None,
        )
        check_copies(launch, dst, src, f"{name} ({nbytes} bytes)")
        runs[name] = launch
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, nargs="+", default=[64, 128, 1024])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fprop", action="store_true", help="fprop at N = 128 in the 64 MiB table")
    args = parser.parse_args()
    arch = spio.jit.device_info(0).arch
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    kernels = {name: load_kernel(v, arch) for name, v in VARIANTS.items()}
    copy = copy_bandwidth_gbs(20, 9)
    print(f"{props.name}, {sms} SMs: copy {copy:.0f} GB/s")

    for mib in args.mib:
        nbytes = mib << 20
        runs = copy_runs(kernels, nbytes, sms, props.shared_memory_per_multiprocessor)
        if args.fprop and mib == 64:
            name, fn = fprop_run(128)
            runs[name] = fn
        best: dict[str, float] = {}
        for _ in range(args.rounds):
            for name, fn in runs.items():
                best[name] = min(best.get(name, float("inf")), time_us(fn, graph=True))
        print(f"\n{mib} MiB ({2 * nbytes / 1e6:.1f} MB read plus written)")
        for name, us in best.items():
            gbs = 2 * nbytes / us / 1e3
            print(f"{us:9.2f} us {gbs:6.0f} GB/s {gbs / copy:6.1%}  {name}", flush=True)
        del runs
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
