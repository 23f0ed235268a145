"""spio.functional.conv2d_gw8 under torch.func transforms (grad, vmap, per-sample and
ensemble gradients, jvp, jacfwd, jacrev, second and third derivatives) against fp32 conv2d:
on CPU (the operators' fp32 path) and on CUDA (Spio's kernels)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from conv2d_func_checks import (
    check_ensemble_gradients,
    check_forward_mode,
    check_grad,
    check_module_ensemble,
    check_per_sample_gradients,
    check_second_order,
    check_vmap,
)
from devices import DEVICES


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "check",
    [
        check_grad,
        check_vmap,
        check_per_sample_gradients,
        check_ensemble_gradients,
        check_forward_mode,
        check_module_ensemble,
        check_second_order,
    ],
    ids=lambda check: check.__name__.removeprefix("check_"),
)
def test_matches_fp32_conv2d_under_the_transform(check: Callable[[str], None], device: str) -> None:
    check(device)
