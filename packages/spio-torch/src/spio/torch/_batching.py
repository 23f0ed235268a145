"""What the operators' batching rules (_conv2d_gw8_vmap, _matmul_vmap) share."""

from __future__ import annotations

import torch


def leading(tensor: torch.Tensor, dim: int | None, size: int) -> torch.Tensor:
    """tensor with its vmap batch dimension first; an unbatched one (dim None) expanded to
    size without a copy."""
    if dim is None:
        return tensor.expand(size, *tensor.shape)
    return tensor.movedim(dim, 0)
