"""conv2d_gw8_wgrad's launches, with the kernels and the driver stood in for (CPU)."""

from __future__ import annotations

from typing import Any

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, WgradConfig, wgrad
from spio.kernels.conv2d_gw8._tiling import LaunchGeometry

PARAMS = Conv2dGw8Params.make(2, 64, 8, 8)
CONFIG = WgradConfig(block_q=16, block_g=2, warp_g=1, block_p=8, prefetch=1)


class _Kernel:
    """Stands in for a loaded spio.jit.Kernel: records (name, args) of each launch."""

    def __init__(self, name: str, calls: list[tuple[Any, ...]]):
        self.name, self.calls = name, calls

    def launch(self, grid: int, block: int, args: tuple[Any, ...], *_: Any) -> None:
        self.calls.append((self.name, args))


@pytest.fixture
def launches() -> list[tuple[Any, ...]]:
    return []


def _plan(monkeypatch: pytest.MonkeyPatch, launches: list[Any], single_partial: bool) -> None:
    launch = wgrad.WgradLaunch(
        _Kernel("main", launches), _Kernel("reduce", launches), LaunchGeometry(8, 128, 0),
        LaunchGeometry(4, 256, 0), 1024, single_partial,
    )  # fmt: skip
    monkeypatch.setattr(wgrad, "wgrad_launch", lambda *_: launch)


def test_one_partial_per_weight_is_one_launch_into_grad_w(
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[Any, ...]]
) -> None:
    _plan(monkeypatch, launches, single_partial=True)
    wgrad.conv2d_gw8_wgrad(10, 20, 30, PARAMS, CONFIG, device=0)  # no workspace needed
    assert launches == [("main", (10, 20, 30))]


def test_partials_go_through_the_workspace_and_the_reduction(
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[Any, ...]]
) -> None:
    _plan(monkeypatch, launches, single_partial=False)
    wgrad.conv2d_gw8_wgrad(10, 20, 30, PARAMS, CONFIG, workspace=40, device=0)
    assert launches == [("main", (40, 20, 30)), ("reduce", (10, 40))]


def test_a_missing_workspace_is_named_when_it_cannot_be_allocated(
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[Any, ...]]
) -> None:
    _plan(monkeypatch, launches, single_partial=False)
    with pytest.raises(ValueError, match=r"wgrad_workspace_bytes\(params, config\) = 1024 bytes"):
        wgrad.conv2d_gw8_wgrad(10, 20, 30, PARAMS, CONFIG, device=0)  # pointers: no torch
    assert launches == []
