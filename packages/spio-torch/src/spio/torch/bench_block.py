"""The GPU's time for one training step of a network block, converted to Spio against torch.

    python -m spio.torch.bench_block [--blocks convfirst mbconv] [--shapes 128x64x64x64 ...]
                                     [--kernel-size 3] [--expansion 4]
                                     [--dtype float16|bfloat16] [--rounds 3]
                                     [--compile] [--nondeterministic] [--out FILE.csv]

A layer timed alone (spio.kernels' bench, spio.torch.bench_step) shows what the kernel
does; a block shows what a network gains. For each block and N x C x H x W (C: the block's
width), torch's block (nn.Conv2d layers with cuDNN, cudnn.benchmark on; batch norms; all in
channels_last memory) and a copy of it with its grouped convolution converted
(`spio.torch.convert`) run one training step each: forward, then backward of a fixed
output gradient into every gradient. The blocks (spio.torch._bench_blocks):

- convfirst: the grouped convolution first, at the block's width, then a batch norm and a
  pointwise MLP widened --expansion times, with a residual;
- mbconv: an inverted bottleneck, its grouped convolution at --expansion times the block's
  width between two pointwise convolutions, each followed by a batch norm, with a residual.

Both steps are captured in CUDA graphs and replayed, alternating for --rounds rounds in one
process, each given its fastest round's median (spio.torch.bench_step's method). Prints a
line per block and layer: microseconds per step for Spio's block and torch's, torch's time
over Spio's, and the step's time Spio saved as a share of torch's. --out writes the same
rows as CSV, with the GPU, torch and cuDNN versions. --compile runs both blocks through
`torch.compile` (inductor), which fuses the batch norms, activations and residual adds into
few kernels, as a compiled model's training would; Spio's operators stay what they are, one
op each. --nondeterministic runs Spio's steps after
`spio.torch.set_wgrad_deterministic(False)`.
"""

from __future__ import annotations

import argparse
import copy
import csv
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .bench_overhead import _shape, layer_name, start_on_cuda
from .bench_step import (
    DTYPES,
    fastest_alternating,
    rounds_argument,
    training_step,
    whole_number_argument,
)

BLOCK_NAMES = ("convfirst", "mbconv")
DEFAULT_SHAPES = ("32x64x64x64", "128x64x64x64", "128x128x32x32", "128x256x16x16")
#: Filter sizes Spio's grouped convolution runs (R = S, odd, so that padding keeps the size).
KERNEL_SIZES = (1, 3, 5, 7)


@dataclass(frozen=True)
class BlockTime:
    """One block's training step: Spio's and torch's GPU microseconds."""

    block: str
    layer: str
    kernel_size: int
    expansion: int
    grouped_channels: int
    compiled: bool
    spio_us: float
    torch_us: float

    @property
    def speedup(self) -> float:
        """torch's time over Spio's: above 1 where Spio's block is faster."""
        return self.torch_us / self.spio_us

    @property
    def saved(self) -> float:
        """The share of torch's step time that Spio's block saves."""
        return 1.0 - self.spio_us / self.torch_us


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m spio.torch.bench_block", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--blocks", nargs="+", choices=BLOCK_NAMES, default=list(BLOCK_NAMES))
    parser.add_argument(
        "--shapes", nargs="+", type=_shape, default=list(map(_shape, DEFAULT_SHAPES))
    )
    parser.add_argument("--kernel-size", type=int, choices=KERNEL_SIZES, default=3)
    parser.add_argument(
        "--expansion",
        type=whole_number_argument("--expansion"),
        default=4,
        help="the MLP's or bottleneck's widening",
    )
    parser.add_argument("--dtype", choices=DTYPES, default=DTYPES[0])
    parser.add_argument("--rounds", type=rounds_argument, default=3, help="alternating rounds")
    parser.add_argument("--compile", action="store_true", help="both blocks torch.compile'd")
    parser.add_argument(
        "--nondeterministic",
        action="store_true",
        help="Spio's weight gradients from atomic sums where they pay (their last bits vary)",
    )
    parser.add_argument("--out", type=Path, help="CSV file to write")
    return parser


def block_pair(
    block: str,
    channels: int,
    kernel_size: int,
    expansion: int,
    device: Any = None,
    dtype: Any = None,
) -> tuple[Any, Any]:
    """(Spio's block, torch's block): torch's in channels_last memory, and a copy of it with
    its grouped convolution converted to Spio's, so both start from the same parameters.
    ValueError where the block converts no layer (a width Spio does not run)."""
    import torch

    from ._bench_blocks import BLOCKS
    from ._modules import convert

    torch_block = BLOCKS[block](channels, kernel_size, expansion, device=device, dtype=dtype).to(
        memory_format=torch.channels_last
    )
    spio_block = copy.deepcopy(torch_block)
    if not convert(spio_block):
        raise ValueError(
            f"{block} with channels={channels} and kernel_size={kernel_size} has no layer Spio runs"
        )
    return spio_block, torch_block


def block_step_us(
    block: str,
    shape: tuple[int, int, int, int],
    kernel_size: int,
    expansion: int,
    dtype_name: str,
    rounds: int,
    compiled: bool = False,
) -> BlockTime:
    """Time one training step of Spio's and torch's block on one N x C x H x W input
    (compiled: each through torch.compile first)."""
    import torch

    from ._bench_blocks import grouped_width

    n, c, h, w = shape
    dtype = getattr(torch, dtype_name)
    spio_block, torch_block = block_pair(block, c, kernel_size, expansion, "cuda", dtype)
    if compiled:
        spio_block, torch_block = torch.compile(spio_block), torch.compile(torch_block)
    x = torch.randn(n, c, h, w, device="cuda", dtype=dtype)
    x = x.contiguous(memory_format=torch.channels_last).requires_grad_()
    grad_y = torch.randn_like(x)
    spio_us, torch_us = fastest_alternating(
        [training_step(spio_block, x, grad_y), training_step(torch_block, x, grad_y)], rounds
    )
    return BlockTime(
        block,
        layer_name(shape),
        kernel_size,
        expansion,
        grouped_width(block, c, expansion),
        compiled,
        spio_us,
        torch_us,
    )


def write_csv(rows: Sequence[BlockTime], path: Path, environment: dict[str, str]) -> None:
    """Write rows to path as CSV, each with environment's columns (GPU and versions)."""
    fields = [*environment, *asdict(rows[0]), "speedup", "saved"] if rows else []
    with path.open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=fields)
        writer.writeheader()
        for row in rows:
            writer.writerow(
                {**environment, **asdict(row), "speedup": row.speedup, "saved": row.saved}
            )


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print a line per block and layer."""
    args = build_parser().parse_args(argv)
    start_on_cuda("bench_block")
    import torch

    from ._determinism import set_wgrad_deterministic

    wgrad = "nondeterministic" if args.nondeterministic else "deterministic"
    gpu = torch.cuda.get_device_name()
    size = f"{args.kernel_size} x {args.kernel_size}"
    mode = "torch.compile'd" if args.compile else "eager"
    print(
        f"{gpu}, {args.dtype}, {size}, expansion {args.expansion}, {mode}, Spio's wgrad "
        f"{wgrad}; GPU us per training step"
    )
    print(f"{'block':>9} {'layer':>14} {'grouped C':>9} {'spio':>9} {'torch':>9} "
          f"{'speed-up':>8} {'saved':>6}")  # fmt: skip
    rows = []
    set_wgrad_deterministic(not args.nondeterministic)
    try:
        for block in args.blocks:
            for shape in args.shapes:
                row = block_step_us(
                    block,
                    shape,
                    args.kernel_size,
                    args.expansion,
                    args.dtype,
                    args.rounds,
                    args.compile,
                )
                rows.append(row)
                print(f"{block:>9} {row.layer:>14} {row.grouped_channels:>9} "
                      f"{row.spio_us:>9.1f} {row.torch_us:>9.1f} {row.speedup:>7.2f}x "
                      f"{row.saved:>6.1%}")  # fmt: skip
    finally:
        set_wgrad_deterministic(True)  # the default, for whatever runs next in the process
    if args.out is not None:
        environment = {
            "gpu": gpu,
            "torch": torch.__version__,
            "cudnn": str(torch.backends.cudnn.version()),
            "dtype": args.dtype,
            "wgrad": wgrad,
        }
        write_csv(rows, args.out, environment)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
