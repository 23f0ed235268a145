"""The network blocks bench_block times: a grouped convolution of group width 8 where real
ConvNets put one, with the layers around it that share its memory traffic.

Both are plain torch modules (nn.Conv2d, nn.BatchNorm2d); `spio.torch.convert` swaps their
grouped convolution for Spio's and leaves the pointwise convolutions, whose groups are the
whole width, to torch.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from ._cuda_passes import GROUP_WIDTH


def grouped_conv(channels: int, kernel_size: int, **factory: Any) -> nn.Conv2d:
    """A same-size kernel_size x kernel_size convolution with groups of GROUP_WIDTH
    channels, no bias (a batch norm follows it in both blocks)."""
    return nn.Conv2d(
        channels,
        channels,
        kernel_size,
        padding=kernel_size // 2,
        groups=channels // GROUP_WIDTH,
        bias=False,
        **factory,
    )


class ConvFirstBlock(nn.Module):
    """x + project(gelu(expand(norm(grouped_conv(x))))): the grouped convolution first, at
    the block's width, mixing space within groups of 8 channels; then a pointwise MLP,
    widened `expansion` times, mixing the channels. Batch norm parameters stay in f32
    (norm_dtype), as autocast keeps them, whatever dtype the convolutions use."""

    def __init__(
        self,
        channels: int,
        kernel_size: int = 3,
        expansion: int = 4,
        *,
        device: Any = None,
        dtype: torch.dtype | None = None,
        norm_dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.grouped_conv = grouped_conv(channels, kernel_size, **factory)
        self.norm = nn.BatchNorm2d(channels, device=device, dtype=norm_dtype)
        self.expand = nn.Conv2d(channels, channels * expansion, 1, **factory)
        self.act = nn.GELU()
        self.project = nn.Conv2d(channels * expansion, channels, 1, **factory)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.project(self.act(self.expand(self.norm(self.grouped_conv(x)))))


class MBConvBlock(nn.Module):
    """x + project(grouped_conv(expand(x))), each convolution followed by a batch norm and
    all but the last by SiLU: the inverted bottleneck of MobileNetV2 and EfficientNet, with
    the depthwise convolution widened to groups of 8 channels. The grouped convolution runs
    at `expansion` times the block's width, where its activations are largest."""

    def __init__(
        self,
        channels: int,
        kernel_size: int = 3,
        expansion: int = 4,
        *,
        device: Any = None,
        dtype: torch.dtype | None = None,
        norm_dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        wide = channels * expansion
        self.expand = nn.Conv2d(channels, wide, 1, bias=False, **factory)
        self.expand_norm = nn.BatchNorm2d(wide, device=device, dtype=norm_dtype)
        self.grouped_conv = grouped_conv(wide, kernel_size, **factory)
        self.grouped_norm = nn.BatchNorm2d(wide, device=device, dtype=norm_dtype)
        self.project = nn.Conv2d(wide, channels, 1, bias=False, **factory)
        self.project_norm = nn.BatchNorm2d(channels, device=device, dtype=norm_dtype)
        self.act = nn.SiLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.act(self.expand_norm(self.expand(x)))
        y = self.act(self.grouped_norm(self.grouped_conv(y)))
        return x + self.project_norm(self.project(y))


#: The blocks by the name the command line gives them.
BLOCKS: dict[str, type[nn.Module]] = {"convfirst": ConvFirstBlock, "mbconv": MBConvBlock}


def grouped_width(block: str, channels: int, expansion: int) -> int:
    """Channels of block's grouped convolution, for a block of `channels` channels."""
    return channels * expansion if block == "mbconv" else channels
