"""The `spio` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from spio.torch import __version__


def _demo(args: argparse.Namespace) -> int:
    from spio.torch import _demo, _report

    out = sys.stdout
    out.write("== Environment\n")
    _report.write_packages(out)
    nvrtc_ok = _report.write_nvrtc(out)
    _report.write_gpus(out)
    if not nvrtc_ok:
        out.write(
            "\nNo usable NVRTC: the demonstration needs it. Install the one for your driver: "
            'pip install "spio-jit[cu13]" (CUDA 13), or "spio-jit[cu12]" (CUDA 12).\n'
        )
        return 1
    out.write("\n== Demonstration: spec -> types.h -> NVRTC -> cubin -> launch\n")
    result = _demo.run_demo(out, size=args.size)
    return 0 if result.checked or result.registers is None else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `spio` command line; return its exit status."""
    parser = argparse.ArgumentParser(
        prog="spio", description="Spio: fast CUDA kernels for PyTorch, written from Python."
    )
    parser.add_argument("--version", action="version", version=f"spio-torch {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo", help="show what Spio sees (packages, NVRTC, GPUs) and run a kernel end to end"
    )
    demo.add_argument(
        "--size", type=int, default=1024, help="matrix size of the demo kernel (multiple of 32)"
    )
    demo.set_defaults(run=_demo)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except (ValueError, TypeError) as error:
        parser.error(str(error))
    return 2


if __name__ == "__main__":
    sys.exit(main())
