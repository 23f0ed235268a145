"""set_wgrad_deterministic / wgrad_is_deterministic (no GPU)."""

from __future__ import annotations

import pytest
import torch

import spio.torch


@pytest.fixture(autouse=True)
def restore() -> object:
    yield
    spio.torch.set_wgrad_deterministic(True)


def test_weight_gradients_are_deterministic_by_default() -> None:
    assert spio.torch.wgrad_is_deterministic()


def test_nondeterministic_wgrad_is_opt_in() -> None:
    spio.torch.set_wgrad_deterministic(False)
    assert not spio.torch.wgrad_is_deterministic()
    spio.torch.set_wgrad_deterministic(True)
    assert spio.torch.wgrad_is_deterministic()


def test_torch_deterministic_algorithms_override_the_opt_in() -> None:
    spio.torch.set_wgrad_deterministic(False)
    before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        assert spio.torch.wgrad_is_deterministic()
    finally:
        torch.use_deterministic_algorithms(before)
    assert not spio.torch.wgrad_is_deterministic()


def test_the_setting_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="deterministic must be a bool, got 0"):
        spio.torch.set_wgrad_deterministic(0)  # type: ignore[arg-type]
    assert spio.torch.wgrad_is_deterministic()
