"""What the comparison tools share (wgrad's first, fprop's and dgrad's since): their layer
lists, variants and timing of configs against each other (alternating rounds in one process,
with cuDNN)."""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import torch

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    WgradConfig,
    bench,
    conv2d_gw8_wgrad,
    wgrad_spec,
)
from spio.kernels.conv2d_gw8._tiling import fits
from spio.kernels.conv2d_gw8.reference import wgrad_reference
from spio.kernels.conv2d_gw8.wgrad import wgrad_launch

#: Rounds of timing each config in turn; each config's time is its fastest round's median.
ROUNDS = 3

#: (n, c, h, w, r = s): the targets' layers, small and wide ones, large filters; the layers
#: the placement tools compare on unless they name their own.
WGRAD_LAYERS = [
    (32, 64, 64, 64, 3), (128, 64, 64, 64, 3), (256, 64, 64, 64, 3), (64, 128, 32, 32, 3),
    (128, 128, 32, 32, 3), (64, 64, 64, 64, 3), (512, 256, 14, 14, 3), (8, 64, 56, 56, 3),
    (128, 64, 56, 56, 3), (16, 128, 28, 28, 3), (256, 128, 32, 32, 3), (32, 1024, 16, 16, 3),
    (512, 64, 64, 64, 3), (128, 1024, 16, 16, 3), (32, 256, 16, 16, 5), (16, 64, 56, 56, 7),
]  # fmt: skip


def runnable(params: Conv2dGw8Params, configs: Iterable[WgradConfig]) -> list[WgradConfig]:
    """The configs that can run params (wgrad_spec.check_config), in their order."""
    return [config for config in configs if fits(wgrad_spec.check_config, params, config)]


def named_layers(
    texts: Sequence[str] | None, named: Sequence[tuple[int, ...]]
) -> list[Conv2dGw8Params]:
    """Layers of --layers' N x C x H x W x K texts (K x K filters, padding K // 2), or of the
    tool's named (n, c, h, w, k) tuples where none were given."""
    shapes = [tuple(int(v) for v in text.split("x")) for text in texts] if texts else named
    return [Conv2dGw8Params.make(n, c, h, w, r=k, s=k, padding=k // 2) for n, c, h, w, k in shapes]


def layers_and_copy(
    description: str, named: Sequence[tuple[int, ...]]
) -> tuple[list[Conv2dGw8Params], float]:
    """The layers of the command line's --layers (N x C x H x W x K), else the tool's named
    ones, and the GPU's copy bandwidth (start)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--layers", nargs="+", metavar="NxCxHxWxK", help="instead of NAMED")
    args = parser.parse_args()
    copy = start()
    return named_layers(args.layers, named), copy


def parse_variant(text: str, config_class: type, option: str = "--variants") -> dict[str, Any]:
    """The fields of a "name=value,name=value" variant of a config_class (a config dataclass:
    WgradConfig, FpropConfig; values: integers, True, False; each field's own check in the
    config rejects a value of the wrong kind). Errors name the command line's option."""
    names = {field.name for field in dataclasses.fields(config_class)}
    fields: dict[str, Any] = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        if not sep or name not in names:
            raise SystemExit(
                f"{option}: {item!r} is not name=value of a {config_class.__name__} field"
            )
        if value in ("True", "False"):
            fields[name] = value == "True"
        else:
            try:
                fields[name] = int(value)
            except ValueError:
                raise SystemExit(f"{option}: {item!r}: the value is not an integer") from None
    return fields


def start() -> float:
    """cuDNN's benchmark mode on; print the GPU and return its copy bandwidth (GB/s)."""
    torch.backends.cudnn.benchmark = True
    copy = bench.copy_bandwidth_gbs(20, 9)
    print(f"{torch.cuda.get_device_name()}, copy {copy:.0f} GB/s", flush=True)
    return copy


def time_alternating(
    params: Conv2dGw8Params, configs: Sequence[Any], pass_: str = "wgrad"
) -> tuple[dict[Any, float], float]:
    """Each config's time of pass_ (wgrad unless named) on params and cuDNN's (us): ROUNDS
    rounds of all of them in turn on one set of buffers (CUDA-graph replays), the fastest
    round's median of each."""
    unique = list(dict.fromkeys(configs))
    bench.precompile(params, {pass_: unique})
    buffers = bench.Buffers(params, [pass_], {pass_: unique})
    times: dict[Any, list[float]] = {config: [] for config in unique}
    cudnn = []
    for _ in range(ROUNDS):
        round_times, cudnn_us = bench.bench_pass(pass_, params, unique, buffers, 20, 9, graph=True)
        cudnn.append(cudnn_us)
        for config in unique:
            times[config].append(round_times[config])
    del buffers
    torch.cuda.empty_cache()
    return {config: min(runs) for config, runs in times.items()}, min(cudnn)


def copy_and_cudnn(
    params: Conv2dGw8Params,
    pass_name: Literal["fprop", "dgrad", "wgrad"],
    us: float,
    copy: float,
    cudnn_us: float,
) -> str:
    """ "S% of copy, X.XXx cuDNN" for a report line: a time of params' pass as a share of the
    copy bandwidth (GB/s) and as a speed-up over cuDNN's time."""
    nbytes = params.compulsory_bytes(pass_name) / 1e3
    return f"{nbytes / us / copy:.1%} of copy, {cudnn_us / us:.2f}x cuDNN"


def speed_up(
    params: Conv2dGw8Params, before_us: float, after_us: float, copy: float, cudnn_us: float
) -> str:
    """ "(speed-up; after's share of the copy bandwidth, its speed-up over cuDNN)" for a report
    line comparing two times of params' wgrad pass."""
    shares = copy_and_cudnn(params, "wgrad", after_us, copy, cudnn_us)
    return f"({before_us / after_us:.3f}x; {shares} {cudnn_us:.2f} us)"


def print_geomean(gains: Sequence[float]) -> None:
    """Print the geometric mean and range of a check tool's gains (one per layer-pass)."""
    if gains:
        mean = math.exp(sum(map(math.log, gains)) / len(gains))
        print(f"{len(gains)} layer-passes: {mean:.3f}x geomean, {min(gains):.3f}-{max(gains):.3f}x")


def layer_name(params: Conv2dGw8Params) -> str:
    """ "N x C x H x W R x S" of params, as the tools' lines name a layer."""
    return f"{params.n}x{params.c}x{params.h}x{params.w} {params.r}x{params.s}"


def compared(
    params: Conv2dGw8Params,
    label: str,
    pair: tuple[WgradConfig, WgradConfig],
    times: dict[WgradConfig, float],
    copy: float,
    cudnn_us: float,
) -> str:
    """A report line comparing two configs of params that differ by one field: the layer,
    label, their times (speed_up) and their main kernels' registers."""
    before, after = pair
    registers = [wgrad_launch(params, c).main.attributes.registers for c in pair]
    return (
        f"{layer_name(params)} {label}: {times[before]:.2f} -> {times[after]:.2f} us "
        f"{speed_up(params, times[before], times[after], copy, cudnn_us)}; "
        f"registers {registers[0]} -> {registers[1]}"
    )


def max_error(params: Conv2dGw8Params, config: WgradConfig) -> float:
    """The largest |error| of config's grad_w against the fp32 reference, over the largest
    |reference| (one launch on fresh random inputs, grad_w pre-filled with NaN)."""
    dtype = getattr(torch, params.dtype)
    x = torch.randn(params.input_shape, device="cuda").to(dtype)
    grad_y = torch.randn(params.output_shape, device="cuda").to(dtype)
    grad_w = torch.full(params.weight_shape, float("nan"), device="cuda")
    conv2d_gw8_wgrad(grad_w, x, grad_y, params, config)
    expected = wgrad_reference(x, grad_y, params)
    return float((grad_w - expected).abs().max() / expected.abs().max())


def print_fastest(
    params: Conv2dGw8Params,
    times: dict[WgradConfig, float],
    baseline: WgradConfig,
    copy: float,
    cudnn_us: float,
    shown: int,
    checked: int,
) -> None:
    """A line for each of the `shown` fastest configs of times: its time, its speed-up over
    baseline's (speed_up), its grid and partial sums; the `checked` fastest also with
    max_error."""
    ranked = sorted(times, key=times.__getitem__)
    for rank, config in enumerate(ranked[:shown]):
        against = speed_up(params, times[baseline], times[config], copy, cudnn_us)
        error = f" err {max_error(params, config):.1e}" if rank < checked else ""
        print(
            f"  {times[config]:.2f} us {against}{error} blocks "
            f"{wgrad_spec.grid_blocks(params, config)} partials "
            f"{wgrad_spec.partial_count(params, config)} {config}",
            flush=True,
        )
