"""Run one conv2d_gw8 pass with one config a few times: a process for a tool to watch.

    python -m spio.kernels.conv2d_gw8.run_once PASS NxCxHxW [--r R] [--s S]
        [--padding P [P | P P P]] [--dtype float16|bfloat16] [--bias]
        [--grad-w-dtype float32|float16|bfloat16] [--config FIELD=VALUE ...] [--launches K]

For example, Nsight Compute on fprop's default config, and racecheck on a wgrad config:

    ncu --set full -k regex:conv2d -c 1 -o OUT \\
        python -m spio.kernels.conv2d_gw8.run_once fprop 128x64x64x64
    compute-sanitizer --tool racecheck \\
        python -m spio.kernels.conv2d_gw8.run_once wgrad 3x64x20x18 --config block_n=2

The config is the pass's default on the device (`default_config_on`) with the --config
fields replaced; a config the layer cannot run is refused with the rule it breaks, and a
field or value the pass's configs do not have before any GPU is looked for. Without
--padding the output is as large as the input (`bench_results.same_padding`: 1 for 3 x 3
filters, 0 for 1 x 1). Inputs are random (torch), the launches are synchronized at the
end, and one line names the pass, the layer and the config that ran. A wgrad config with
atomic_sums=1 runs with deterministic=False, as that config needs.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from .bench_results import padding_option
from .params import Conv2dGw8Params

PASSES = ("fprop", "dgrad", "wgrad")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m spio.kernels.conv2d_gw8.run_once", description=__doc__.split("\n")[0]
    )
    parser.add_argument("pass_name", metavar="PASS", choices=PASSES)
    parser.add_argument("shape", metavar="NxCxHxW", type=_shape)
    parser.add_argument("--r", type=int, default=3, help="filter rows (default 3)")
    parser.add_argument("--s", type=int, default=3, help="filter columns (default 3)")
    parser.add_argument(
        "--padding",
        "--pad",
        type=int,
        nargs="+",
        default=None,
        help="1, 2 or 4 ints (default: the output as large as the input, 1 for 3 x 3)",
    )
    parser.add_argument("--dtype", choices=("float16", "bfloat16"), default="float16")
    parser.add_argument(
        "--bias",
        action="store_true",
        help="a layer with a bias (fprop adds it, wgrad its gradient)",
    )
    parser.add_argument(
        "--grad-w-dtype",
        choices=("float32", "float16", "bfloat16"),
        default="float32",
        help="wgrad's grad_w: f32 (default) or the activations' dtype (--dtype)",
    )
    parser.add_argument(
        "--config", nargs="+", default=[], metavar="FIELD=VALUE", help="fields to override"
    )
    parser.add_argument("--launches", type=int, default=3)
    return parser


def _shape(text: str) -> tuple[int, int, int, int]:
    try:
        n, c, h, w = (int(v) for v in text.lower().split("x"))
    except ValueError:
        message = f"a layer is N x C x H x W, e.g. 2x64x20x18; got {text!r}"
        raise argparse.ArgumentTypeError(message) from None
    return n, c, h, w


def layer(args: argparse.Namespace) -> Conv2dGw8Params:
    """The layer of the parsed arguments (ValueError names what is out of scope)."""
    padding = padding_option(args.padding, args.r, args.s, "--padding")
    n, c, h, w = args.shape
    has_bias = args.bias and args.pass_name != "dgrad"
    return Conv2dGw8Params.make(n, c, h, w, args.r, args.s, padding, args.dtype, has_bias)


def field_values(config_type: type, assignments: Sequence[str]) -> dict[str, Any]:
    """The FIELD=VALUE assignments as {field: value} for config_type's fields (ints; bools
    as 0/1 or true/false). ValueError names an unknown field or a value of the wrong kind.
    It needs no config, and so no device: whether the values go together is the config's
    to check."""
    fields = {field.name: field for field in dataclasses.fields(config_type)}
    values: dict[str, Any] = {}
    for assignment in assignments:
        name, sep, text = assignment.partition("=")
        if not sep or name not in fields:
            raise ValueError(
                f"--config takes FIELD=VALUE with FIELD one of {sorted(fields)}, got {assignment!r}"
            )
        # (The specs' annotations are strings: `from __future__ import annotations`.)
        if fields[name].type in (bool, "bool"):
            if text.lower() not in ("0", "1", "false", "true"):
                raise ValueError(f"{name} is 0/1 or false/true, got {text!r}")
            values[name] = text.lower() in ("1", "true")
        else:
            try:
                values[name] = int(text)
            except ValueError:
                raise ValueError(f"{name} is an int, got {text!r}") from None
    return values


def with_fields(config: Any, assignments: Sequence[str]) -> Any:
    """config with the FIELD=VALUE assignments applied (field_values)."""
    return dataclasses.replace(config, **field_values(type(config), assignments))


def _config_type(pass_name: str) -> type:
    from . import FpropConfig, WgradConfig

    return WgradConfig if pass_name == "wgrad" else FpropConfig


def _pass_config(pass_name: str, params: Conv2dGw8Params, assignments: Sequence[str]) -> Any:
    from . import dgrad, dgrad_spec, fprop, fprop_spec, wgrad, wgrad_spec

    passes: dict[str, tuple[Callable[[Conv2dGw8Params], Any], Callable[..., None]]] = {
        "fprop": (fprop.default_config_on, fprop_spec.check_config),
        "dgrad": (dgrad.default_config_on, dgrad_spec.check_config),
        "wgrad": (wgrad.default_config_on, wgrad_spec.check_config),
    }
    default_on, check = passes[pass_name]
    default = default_on(params)
    try:
        config = with_fields(default, assignments)
        check(params, config)
    except ValueError as error:
        # The fields change the device's default, whose placement (wgrad's split filter rows
        # on small layers, say) the caller may not know of: name it.
        raise ValueError(f"{error} (--config changes this default: {default})") from None
    return config


def run(args: argparse.Namespace) -> str:
    """Launch the pass args.launches times and wait for it; return the line that names it."""
    import torch

    from .dgrad import conv2d_gw8_dgrad
    from .fprop import conv2d_gw8_fprop
    from .wgrad import conv2d_gw8_wgrad

    params = layer(args)
    config = _pass_config(args.pass_name, params, args.config)
    dtype = getattr(torch, params.dtype)
    x = torch.randn(params.input_shape, device="cuda").to(dtype)
    grad_y = torch.randn(params.output_shape, device="cuda").to(dtype)
    w = torch.randn(params.weight_shape, device="cuda").to(dtype)
    for _ in range(args.launches):
        if args.pass_name == "fprop":
            bias = torch.randn(params.c, device="cuda") if params.has_bias else None
            y = torch.empty(params.output_shape, device="cuda", dtype=dtype)
            conv2d_gw8_fprop(y, x, w, bias, params, config)
        elif args.pass_name == "dgrad":
            grad_x = torch.empty(params.input_shape, device="cuda", dtype=dtype)
            conv2d_gw8_dgrad(grad_x, grad_y, w, params, config)
        else:
            grad_w_dtype = getattr(torch, args.grad_w_dtype)
            grad_w = torch.empty(params.weight_shape, device="cuda", dtype=grad_w_dtype)
            grad_bias = torch.empty(params.c, device="cuda") if params.has_bias else None
            conv2d_gw8_wgrad(
                grad_w,
                x,
                grad_y,
                params,
                config,
                grad_w_dtype=args.grad_w_dtype,
                grad_bias=grad_bias,
                deterministic=not config.atomic_sums,
            )
    torch.cuda.synchronize()
    return f"{args.pass_name} {params} {config}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.launches < 1:
        parser.error(f"--launches must be at least 1, got {args.launches}")
    try:
        # The layer and the fields first: a mistake in them is said without a GPU.
        layer(args)
        field_values(_config_type(args.pass_name), args.config)
        print(run(args), flush=True)
    except ValueError as error:
        parser.error(str(error))


if __name__ == "__main__":
    main()
