"""nn.Linear run by Spio's tensor-core matmul.

`Linear` is an nn.Linear (same parameters, same state_dict keys, so checkpoints load either
way) whose features are multiples of 8, the rows the kernels move as 16-byte vectors; its
forward pass is spio.functional.linear. `Linear.from_linear` makes one that shares an
nn.Linear's parameters.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from ._linear import linear

_VECTOR = 8


def _unsupported_features(in_features: Any, out_features: Any) -> str | None:
    for name, value in (("in_features", in_features), ("out_features", out_features)):
        if isinstance(value, bool) or not isinstance(value, int) or value < _VECTOR:
            return f"{name} must be a positive multiple of {_VECTOR}, got {value!r}"
        if value % _VECTOR:
            return f"{name} must be a multiple of {_VECTOR}, got {value}"
    return None


class Linear(nn.Linear):
    """nn.Linear on Spio's kernels: in_features and out_features multiples of 8.

    Args: as nn.Linear. Under torch.autocast the input, the weight and the bias are cast to
    the autocast dtype, as autocast does for nn.Linear (spio.functional.linear casts them);
    without it the input and the parameters must be float16 or bfloat16 (its scope).
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        reason = _unsupported_features(in_features, out_features)
        if reason is not None:
            raise ValueError(f"Linear: {reason}")
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)

    @classmethod
    def from_linear(cls, layer: nn.Linear) -> Linear:
        """A Linear sharing layer's parameters (not its hooks); ValueError says why layer
        does not qualify."""
        if type(layer) is not nn.Linear:
            raise ValueError(f"from_linear takes an nn.Linear, got a {type(layer).__name__}")
        reason = _unsupported_features(layer.in_features, layer.out_features)
        if reason is not None:
            raise ValueError(f"this nn.Linear cannot become a spio Linear: {reason}")
        module = cls(layer.in_features, layer.out_features, layer.bias is not None, device="meta")
        module.weight = layer.weight  # the same Parameter objects: optimizers keep working
        module.bias = layer.bias
        module.train(layer.training)
        return module

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return linear(input, self.weight, self.bias)
