"""spio.functional.linear and matmul under torch.func transforms (grad, vmap, per-sample
gradients, jvp, jacfwd, jacrev, hessian) against fp32 torch: on CPU (the operators' fp32
path) and on CUDA (Spio's kernels)."""

from __future__ import annotations

import pytest
import torch
from devices import DEVICES
from linear_func_checks import check_linear_grad_and_vmap, check_matmul_higher_order


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


@pytest.mark.parametrize("device", DEVICES)
def test_linear_matches_fp32_under_grad_and_vmap(device: str) -> None:
    check_linear_grad_and_vmap(device)


@pytest.mark.parametrize("device", DEVICES)
def test_matmul_matches_fp32_under_forward_mode_and_second_derivatives(device: str) -> None:
    check_matmul_higher_order(device)
