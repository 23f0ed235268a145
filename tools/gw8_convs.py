"""A grouped conv2d of group width 8 (3 x 3 filter, padding 1, a bias) three ways, for the
tools that time or check Spio's gradients against torch's: Spio's, torch's (cuDNN) and fp32;
and the tools' command line and layers."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import torch
import torch.nn.functional as F  # noqa: N812

import spio.functional as spio_f


def spio_conv(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return spio_f.conv2d_gw8(x, w, b, padding=1)


def torch_conv(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """torch's conv2d in the activations' dtype (the bias cast to it, as nn.Conv2d's is)."""
    return F.conv2d(x, w, b.to(x.dtype), padding=1, groups=x.shape[1] // 8)


def fp32_conv(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The fp32 reference."""
    return F.conv2d(x.float(), w.float(), b.float(), padding=1, groups=x.shape[1] // 8)


def parse_arguments(description: str, layers: list[str]) -> tuple[list[str], torch.dtype]:
    """--layers (NxCxHxW, default layers) and --dtype from the command line; prints the GPU."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--layers", nargs="+", default=layers)
    parser.add_argument("--dtype", choices=("float16", "bfloat16"), default="float16")
    args = parser.parse_args()
    torch.backends.cudnn.benchmark = True
    print(torch.cuda.get_device_name(), args.dtype)
    return args.layers, getattr(torch, args.dtype)


def layer_tensors(layer: str, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
    """Random input (channels_last), 3 x 3 weight in dtype and fp32 bias of layer NxCxHxW."""
    n, c, h, w = (int(v) for v in layer.split("x"))
    x = torch.randn(n, c, h, w, device="cuda").to(dtype)
    x = x.contiguous(memory_format=torch.channels_last)
    weight = (torch.randn(c, 8, 3, 3, device="cuda") / 9).to(dtype)
    return x, weight, torch.randn(c, device="cuda")


def relative_errors(got: Sequence[torch.Tensor], want: Sequence[torch.Tensor]) -> list[float]:
    """Each result's largest error against the reference's, relative to its largest value."""
    return [
        ((g.float() - e).abs().max() / e.abs().max()).item() for g, e in zip(got, want, strict=True)
    ]
