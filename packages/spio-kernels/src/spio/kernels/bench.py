"""Benchmark a kernel family of spio.kernels: `python -m spio.kernels.bench FAMILY [options]`.

FAMILY names one of FAMILIES; the options are that family's own (`python -m
spio.kernels.bench conv2d_gw8 --help`). Each family's bench module times Spio against the
framework's own implementation and the device's copy bandwidth in one run (the method is in
its docstring). Nothing is imported until a family is chosen, so `--help` works without a
GPU or torch.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

#: Kernel family -> the module whose main(argv) runs its benchmark.
FAMILIES = {
    "conv2d_gw8": "spio.kernels.conv2d_gw8.bench",
    "matmul": "spio.kernels.matmul.bench",
}

USAGE = (
    "usage: python -m spio.kernels.bench FAMILY [options]\n"
    f"FAMILY: one of {', '.join(FAMILIES)}; "
    "`python -m spio.kernels.bench FAMILY --help` lists its options."
)


def main(argv: Sequence[str] | None = None) -> None:
    """Run FAMILY's benchmark with the remaining arguments.

    Exits with status 2 and a message naming the choices when FAMILY is missing or unknown;
    `-h` / `--help` alone prints the usage and exits with status 0.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        print(USAGE)
        raise SystemExit(0)
    if not args:
        print(f"{USAGE}\nerror: name a kernel family", file=sys.stderr)
        raise SystemExit(2)
    family, rest = args[0], args[1:]
    if family not in FAMILIES:
        print(
            f"{USAGE}\nerror: unknown kernel family {family!r}; choose one of: "
            f"{', '.join(FAMILIES)}",
            file=sys.stderr,
        )
        raise SystemExit(2)
    importlib.import_module(FAMILIES[family]).main(rest)


if __name__ == "__main__":
    main()
