"""Argument checks the functional entries share: each error names the argument, what was
given and what is allowed."""

from __future__ import annotations

from typing import Any

import torch

from ._cuda_passes import DTYPES


def check_tensor(name: str, tensor: Any, dims: int = 0) -> None:
    """A float16 or bfloat16 torch.Tensor, of `dims` dimensions unless dims is 0."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    if dims and tensor.dim() != dims:
        raise ValueError(f"{name} must be {dims}-D, got shape {tuple(tensor.shape)}")
    if tensor.dtype not in DTYPES:
        raise TypeError(
            f"{name} must be float16 or bfloat16 (fp32 accumulation inside), got {tensor.dtype}"
        )


def check_same_device(first: str, a: torch.Tensor, second: str, b: torch.Tensor) -> None:
    if b.device != a.device:
        raise ValueError(f"{second} is on {b.device}, {first} on {a.device}")


def check_same_dtype_and_device(first: str, a: torch.Tensor, second: str, b: torch.Tensor) -> None:
    if b.dtype != a.dtype:
        raise TypeError(f"{second} must have {first}'s dtype {a.dtype}, got {b.dtype}")
    check_same_device(first, a, second, b)
