"""Time fprop's data movement without its arithmetic, beside torch's copy of the same bytes and
fprop itself, in one process (GPU).

    python tools/fprop_copy_skeleton.py [--n 128] [--variants "alt:ALT=1" "spin 500:SPIN=500"]

The skeleton (fprop_copy_skeleton.cu) walks the rows of fprop's 32-column, 16-row tiles of a
64-channel 64 x 64 image with a 3 x 3 filter's halo, through the same ring of shared-memory
rows, and writes each tile row back out: dst becomes a copy of src, and the bytes moved are a
pass of fprop's (input read, output written). Each variant sets the kernel's macros (the .cu's
header lists them) and is checked to copy every byte. Each line: the time (the fastest round's
median of CUDA-graph replays), the bytes read plus written over it, and its share of the copy
bandwidth. Blocks are held to BLOCKS_PER_SM an SM by their shared memory, as fprop's tile holds
itself by its registers.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

import spio.dims
import spio.jit
from spio.kernels.conv2d_gw8 import Conv2dGw8Params, fprop
from spio.kernels.timing import copy_bandwidth_gbs, time_us

SOURCE = Path(__file__).with_name("fprop_copy_skeleton.cu")

#: The launcher's fprop tile at N = 128 on an H200: 4 blocks an SM (127 registers a thread).
BLOCKS_PER_SM = 4

#: fprop's tile: 32 columns, 16-row chunks, a 3 x 3 filter's halo, 2 rows of prefetch.
TILE = {"BLOCK_Q": 32, "CHUNK_ROWS": 16, "HALO_ROWS": 1, "HALO_COLS": 1, "PREFETCH": 2}

#: name: the macros that differ from TILE's.
VARIANTS: dict[str, dict[str, int]] = {
    "fprop's walk": {},
    "no halo": {"HALO_ROWS": 0, "HALO_COLS": 0},
    "column halo only": {"HALO_ROWS": 0},
    "row halo only": {"HALO_COLS": 0},
    "32-row chunks": {"CHUNK_ROWS": 32},
    "prefetch 1": {"PREFETCH": 1},
    "prefetch 4": {"PREFETCH": 4},
    "odd chunks upward": {"ALT": 1},
    "staged": {"STAGE": 1},
    "weights": {"WEIGHTS": 1},
    "staged, weights": {"STAGE": 1, "WEIGHTS": 1},
    "spin 200": {"SPIN": 200},
    "spin 500": {"SPIN": 500},
    "loading warp": {"PC": 1},
    "loading warp, odd chunks upward": {"PC": 1, "ALT": 1},
    "8-row chunks": {"CHUNK_ROWS": 8},
    "4-row chunks": {"CHUNK_ROWS": 4},
    "2 chunks a block, grid-stride": {"PERSIST": 2},
    "8-row chunks, 4 a block, grid-stride": {"CHUNK_ROWS": 8, "PERSIST": 4},
    "4-row chunks, 8 a block, grid-stride": {"CHUNK_ROWS": 4, "PERSIST": 8},
    "4-row chunks, 8 a block, grid-stride, staged, weights": {
        "CHUNK_ROWS": 4,
        "PERSIST": 8,
        "STAGE": 1,
        "WEIGHTS": 1,
    },
}

IMAGE_SIDE = 64
PIXEL_BYTES = 128
WEIGHT_BYTES = 8 * 8 * 3 * 3 * 8 * 2  # fprop's weights of 8 groups, 3 x 3
WALKERS = 128  # threads that walk the rows (copy_rows_pc adds a loading warp)


#: The macros a variant may set (fprop_copy_skeleton.cu's header says what each does).
MACROS = (*TILE, "ALT", "SPIN", "STAGE", "WEIGHTS", "PC", "PERSIST")


def compile_skeleton(macros: dict[str, int], arch: str) -> Any:
    """The variant's spio.jit.CompiledCode for arch."""
    return spio.jit.compile(
        SOURCE.read_text(encoding="utf-8"),
        include_dirs=(spio.dims.include_dir(),),
        defines={
            "IMAGE_SIDE": IMAGE_SIDE,
            "WALKERS": WALKERS,
            "WEIGHT_BYTES": WEIGHT_BYTES,
            **macros,
        },
        arch=arch,
        name=SOURCE.name,
    )


def kernel_and_threads(macros: dict[str, int]) -> tuple[str, int]:
    """The variant's kernel and its threads a block (the loading warp's walk has a fifth)."""
    return ("copy_rows_pc", WALKERS + 32) if macros.get("PC") else ("copy_rows", WALKERS)


def shared_per_block(smem_per_sm: int) -> int:
    """The dynamic shared memory a block asks for, so that BLOCKS_PER_SM fit on an SM (less
    each block's 1 KiB the driver reserves and the static mbarriers)."""
    return smem_per_sm // BLOCKS_PER_SM - 1024 - 2048


def shared_bytes(macros: dict[str, int]) -> int:
    """Shared memory the variant's walk uses: its ring, two staging rows and the weights."""
    slot = (macros["BLOCK_Q"] + 2 * macros["HALO_COLS"]) * PIXEL_BYTES
    return (macros["PREFETCH"] + 2) * slot + 2 * macros["BLOCK_Q"] * PIXEL_BYTES + WEIGHT_BYTES


def grid_blocks(images: int, macros: dict[str, int], name: str) -> int:
    """The variant's blocks: one a chunk (a strip's rows of an image), or one a PERSIST chunks
    (the loading warp's walk takes one); SystemExit naming the variant where PERSIST does not
    divide the chunks."""
    chunks = images * (IMAGE_SIDE // macros["BLOCK_Q"]) * (IMAGE_SIDE // macros["CHUNK_ROWS"])
    persist = 1 if macros.get("PC") else macros.get("PERSIST", 1)
    if persist < 1 or chunks % persist != 0:
        raise SystemExit(f"{name}: PERSIST = {persist} does not divide the {chunks} chunks")
    return chunks // persist


def check_copies(run: Callable[[], object], dst: Any, src: Any, what: str) -> None:
    """SystemExit unless run() makes dst (zeroed first) a copy of src; what names the kernel."""
    dst.zero_()
    run()
    torch.cuda.synchronize()
    if not torch.equal(dst, src):
        raise SystemExit(f"{what} did not copy every byte")


def parse_variants(texts: list[str]) -> dict[str, dict[str, int]]:
    """--variants' "name:MACRO=V,..." texts; SystemExit names a text that is not one."""
    variants = {}
    for text in texts:
        name, _, fields = text.partition(":")
        changes = {}
        for field in filter(None, fields.split(",")):
            macro, equals, value = field.partition("=")
            if macro not in MACROS or not equals or not value.lstrip("-").isdigit():
                raise SystemExit(
                    f"--variants: {field!r} in {text!r} is not MACRO=integer, MACRO one of "
                    f"{', '.join(MACROS)}"
                )
            changes[macro] = int(value)
        variants[name] = changes
    return variants


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=128, help="images (default 128)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--variants", nargs="+", metavar="NAME:MACRO=V,...", help="instead of VARIANTS"
    )
    args = parser.parse_args()
    arch = spio.jit.device_info(0).arch
    props = torch.cuda.get_device_properties(0)
    nbytes = args.n * IMAGE_SIDE * IMAGE_SIDE * PIXEL_BYTES
    src = torch.randint(0, 255, (nbytes,), dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    weights = torch.zeros(WEIGHT_BYTES, dtype=torch.uint8, device="cuda")
    copy = copy_bandwidth_gbs(20, 9)
    print(f"{props.name}: copy {copy:.0f} GB/s; {args.n} images, {2 * nbytes / 1e6:.1f} MB moved")

    smem_per_sm = props.shared_memory_per_multiprocessor
    shared = shared_per_block(smem_per_sm)
    runs: dict[str, Callable[[], object]] = {"torch copy_": lambda: dst.copy_(src)}
    variants = parse_variants(args.variants) if args.variants else VARIANTS
    for name, changes in variants.items():
        macros = TILE | changes
        if shared_bytes(macros) > shared:
            raise SystemExit(
                f"{name}: its walk needs {shared_bytes(macros)} bytes of shared memory, more than "
                f"the {shared} that hold blocks to {BLOCKS_PER_SM} an SM"
            )
        kernel_name, threads = kernel_and_threads(macros)
        kernel = compile_skeleton(macros, arch).load(device=0).get_kernel(kernel_name)
        grid = grid_blocks(args.n, macros, name)

        def run(kernel: Any = kernel, grid: int = grid, threads: int = threads) -> None:
            kernel.launch(grid, threads, (dst, src, weights), shared, None, True)

        check_copies(run, dst, src, f"{name}: the skeleton")
        runs[name] = run

    params = Conv2dGw8Params(n=args.n, c=64, h=IMAGE_SIDE, w=IMAGE_SIDE)
    config = fprop.default_config_on(params)
    launch = fprop.fprop_launch(params, config)
    x = torch.randn(args.n, IMAGE_SIDE, IMAGE_SIDE, 64, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    w = torch.randn(64, 3, 3, 8, device="cuda", dtype=torch.float16)
    runs[f"fprop, {config}"] = lambda: launch(y, x, w)

    best: dict[str, float] = {}
    for _ in range(args.rounds):
        for name, fn in runs.items():
            best[name] = min(best.get(name, float("inf")), time_us(fn, graph=True))
    for name, us in best.items():
        gbs = 2 * nbytes / us / 1e3
        print(f"{us:8.2f} us {gbs:6.0f} GB/s {gbs / copy:6.1%}  {name}", flush=True)


if __name__ == "__main__":
    main()
