"""Layers the conv2d_gw8 operator tests run, and the fp32 PyTorch result they compare with."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F  # noqa: N812


@dataclass(frozen=True)
class Case:
    n: int
    c: int
    h: int
    w: int
    r: int
    s: int
    padding: tuple[int, int, int, int]  # top, bottom, left, right
    dtype: torch.dtype
    bias: bool

    def make(self, device: str, seed: int = 0) -> tuple[torch.Tensor, ...]:
        """input (channels_last), weight, bias (fp32 or None), all requiring grad."""
        generator = torch.Generator().manual_seed(seed)
        x = torch.randn(self.n, self.c, self.h, self.w, generator=generator).to(self.dtype)
        x = x.to(device).contiguous(memory_format=torch.channels_last).requires_grad_()
        weight = torch.randn(self.c, 8, self.r, self.s, generator=generator) / (self.r * self.s)
        weight = weight.to(self.dtype).to(device).requires_grad_()
        bias = (
            torch.randn(self.c, generator=generator).to(device).requires_grad_()
            if self.bias
            else None
        )
        return x, weight, bias

    def reference(
        self, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None
    ) -> torch.Tensor:
        """conv2d in fp32 on fp32 copies (padding applied explicitly: it may be asymmetric)."""
        top, bottom, left, right = self.padding
        padded = F.pad(x.float(), (left, right, top, bottom))
        b = bias.float() if bias is not None else None
        return F.conv2d(padded, weight.float(), b, groups=self.c // 8)

    def tolerance(self) -> float:
        """Absolute tolerance for values of the reference's scale: the output's rounding to
        16 bits (bf16 keeps 8 significant bits, fp16 11) over a depth of 8 R S products."""
        relative = 2.0**-7 if self.dtype == torch.bfloat16 else 2.0**-10
        return 4 * relative * (1 + (8 * self.r * self.s) ** 0.5)


CASES = [
    Case(2, 16, 9, 7, 3, 3, (1, 1, 1, 1), torch.float16, True),
    Case(1, 8, 5, 5, 3, 2, (1, 1, 0, 1), torch.bfloat16, False),
    Case(3, 24, 11, 13, 5, 5, (2, 2, 2, 2), torch.float16, False),
    Case(2, 64, 8, 8, 1, 1, (0, 0, 0, 0), torch.bfloat16, True),
    Case(1, 32, 7, 9, 7, 7, (3, 3, 3, 3), torch.float16, True),
]
