"""Run one matmul with one config a few times: a process for a tool to watch.

    python -m spio.kernels.matmul.run_once MxNxK [--dtype float16|bfloat16] [--b-layout kn|nk]
        [--a-layout mk|km] [--bias] [--kernel auto|mma|wgmma] [--config FIELD=VALUE ...]
        [--launches K]

For example, Nsight Compute on the default config, and racecheck on an mma.sync config:

    ncu --set full -k regex:spio_matmul -c 1 -o OUT \\
        python -m spio.kernels.matmul.run_once 8192x8192x8192
    compute-sanitizer --tool racecheck \\
        python -m spio.kernels.matmul.run_once 300x520x264 --kernel mma --config stages=2

The config is the kernel's default on the device (--kernel auto: `default_config_on`) with
the --config fields replaced; a config the shape cannot run is refused with the rule it
breaks. --bias adds a bias vector to C's rows. Inputs are random (torch), the launches are
synchronized at the end, and one line names the shape and the config that ran.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence

from .bench import parse_shape
from .launch import Config, default_config_on, matmul
from .params import A_LAYOUTS, B_LAYOUTS, DTYPES, MatmulParams
from .spec import default_config as mma_default
from .wgmma_spec import default_config as wgmma_default


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m spio.kernels.matmul.run_once", description=__doc__.split("\n")[0]
    )
    parser.add_argument("shape", metavar="MxNxK")
    parser.add_argument("--dtype", choices=DTYPES, default="float16")
    parser.add_argument("--b-layout", choices=B_LAYOUTS, default="kn")
    parser.add_argument("--a-layout", choices=A_LAYOUTS, default="mk")
    parser.add_argument("--bias", action="store_true", help="add a bias vector to C's rows")
    parser.add_argument("--kernel", choices=("auto", "mma", "wgmma"), default="auto")
    parser.add_argument(
        "--config", nargs="+", default=[], metavar="FIELD=VALUE", help="fields to override"
    )
    parser.add_argument("--launches", type=int, default=3)
    return parser


def _config(params: MatmulParams, kernel: str, fields: Sequence[str]) -> Config:
    """The kernel's default for params on device 0 with fields (FIELD=VALUE) replaced;
    ValueError naming a malformed or unknown field, or the rule a value breaks."""
    import spio.jit

    info = spio.jit.device_info(0)
    base: Config
    if kernel == "auto":
        base = default_config_on(params)
    elif kernel == "wgmma":
        base = wgmma_default(params, info.sm_count)
    else:
        base = mma_default(params, info.sm_count, info.max_shared_per_block_optin)
    names = {field.name for field in dataclasses.fields(base)}
    changes = {}
    for text in fields:
        name, _, value = text.partition("=")
        if name not in names or not value.lstrip("-").isdigit():
            raise ValueError(
                f"--config takes FIELD=VALUE with FIELD one of {sorted(names)} and an int "
                f"VALUE, got {text!r}"
            )
        changes[name] = int(value)
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def main(argv: Sequence[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        params = parse_shape(args.shape, args.dtype, args.b_layout, args.a_layout)
        params = dataclasses.replace(params, bias=args.bias)
    except argparse.ArgumentTypeError as error:
        parser.error(str(error))
    import torch

    try:
        config = _config(params, args.kernel, args.config)
    except ValueError as error:
        parser.error(str(error))
    dtype = getattr(torch, params.dtype)
    a = torch.randn(params.a_shape, device="cuda").to(dtype)
    b = torch.randn(params.b_shape, device="cuda").to(dtype)
    c = torch.empty(params.c_shape, device="cuda", dtype=dtype)
    bias = torch.randn(params.n, device="cuda").to(dtype) if params.bias else None
    for _ in range(args.launches):
        matmul(c, a, b, params, config, bias=bias)
    torch.cuda.synchronize()
    print(f"ran {args.launches} x {params} with {config}")


if __name__ == "__main__":
    main()
