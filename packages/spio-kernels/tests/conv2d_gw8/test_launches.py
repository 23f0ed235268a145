"""The launches of the conv2d_gw8 entries and of their launch callables, with the kernels
stood in for (CPU)."""

from __future__ import annotations

from typing import Any

import pytest

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    ConvLaunch,
    FpropConfig,
    WgradConfig,
    fprop,
    wgrad,
)
from spio.kernels.conv2d_gw8._tiling import LaunchGeometry

PARAMS = Conv2dGw8Params.make(2, 64, 8, 8)
CONFIG = WgradConfig(block_q=16, block_g=2, warp_g=1, block_p=8, prefetch=1)


class _Kernel:
    """Stands in for a loaded spio.jit.Kernel: records (name, args) of each launch."""

    def __init__(self, name: str, calls: list[tuple[Any, ...]]):
        self.name, self.calls = name, calls
        self.last: tuple[Any, ...] = ()

    def launch(self, grid: int, block: int, args: tuple[Any, ...], *rest: Any) -> None:
        self.calls.append((self.name, args))
        self.last = (grid, block, *rest)


@pytest.fixture
def launches() -> list[tuple[Any, ...]]:
    return []


def _plan(
    monkeypatch: pytest.MonkeyPatch,
    launches: list[Any],
    single_partial: bool,
    bias_grad: bool = False,
    atomic_sums: bool = False,
) -> None:
    zero = _Kernel("zero", launches) if atomic_sums else None
    launch = wgrad.WgradLaunch(
        _Kernel("main", launches), _Kernel("reduce", launches),
        _Kernel("reduce_to_element", launches), LaunchGeometry(8, 128, 0),
        LaunchGeometry(4, 256, 0), 1024, single_partial, bias_grad, None, zero,
        LaunchGeometry(2, 256, 0) if atomic_sums else None,
    )  # fmt: skip
    monkeypatch.setattr(wgrad, "wgrad_launch", lambda *_: launch)


ATOMIC = WgradConfig(block_q=16, block_g=2, warp_g=1, block_p=8, prefetch=1, atomic_sums=True)


def test_atomic_sums_clear_grad_w_and_add_into_it(
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[Any, ...]]
) -> None:
    _plan(monkeypatch, launches, single_partial=True, atomic_sums=True)
    wgrad.conv2d_gw8_wgrad(10, 20, 30, PARAMS, ATOMIC, device=0, deterministic=False)
    assert launches == [("zero", (10,)), ("main", (10, 20, 30))]


def test_atomic_sums_into_a_workspace_are_rounded_into_grad_w(
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[Any, ...]]
) -> None:
    _plan(monkeypatch, launches, single_partial=True, atomic_sums=True)
    wgrad.conv2d_gw8_wgrad(
        10, 20, 30, PARAMS, ATOMIC, workspace=40, device=0, grad_w_dtype="float16",
        deterministic=False,
    )  # fmt: skip
    assert launches == [
        ("zero", (40,)),
        ("main", (40, 20, 30)),
        ("reduce_to_element", (10, 40, 0)),
    ]


def test_atomic_sums_need_deterministic_false(
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[Any, ...]]
) -> None:
    _plan(monkeypatch, launches, single_partial=True, atomic_sums=True)
    with pytest.raises(ValueError, match=r"pass deterministic=False to run it"):
        wgrad.conv2d_gw8_wgrad(10, 20, 30, PARAMS, ATOMIC, device=0)
    with pytest.raises(TypeError, match=r"deterministic must be a bool, got 'no'"):
        wgrad.conv2d_gw8_wgrad(10, 20, 30, PARAMS, ATOMIC, device=0, deterministic="no")
    assert launches == []


def test_deterministic_false_keeps_a_given_config_as_it_is(
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[Any, ...]]
) -> None:
    """deterministic=False allows atomic sums; a config given without them runs as given."""
    _plan(monkeypatch, launches, single_partial=True)
    wgrad.conv2d_gw8_wgrad(10, 20, 30, PARAMS, CONFIG, device=0, deterministic=False)
    assert launches == [("main", (10, 20, 30))]


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
    assert launches == [("main", (40, 20, 30)), ("reduce", (10, 40, 0))]


def test_a_missing_workspace_is_named_when_it_cannot_be_allocated(
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[Any, ...]]
) -> None:
    _plan(monkeypatch, launches, single_partial=False)
    with pytest.raises(ValueError, match=r"wgrad_workspace_bytes\(params, config\) = 1024 bytes"):
        wgrad.conv2d_gw8_wgrad(10, 20, 30, PARAMS, CONFIG, device=0)  # pointers: no torch
    assert launches == []


@pytest.mark.parametrize("single_partial", [False, True])
def test_a_grad_w_of_the_activations_dtype_is_reduced_from_the_workspace(
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[Any, ...]], single_partial: bool
) -> None:
    # With one partial per weight too: the main kernel's f32 sums go to the workspace and
    # the rounding reduction writes grad_w.
    _plan(monkeypatch, launches, single_partial)
    wgrad.conv2d_gw8_wgrad(
        10, 20, 30, PARAMS, CONFIG, workspace=40, device=0, grad_w_dtype="float16"
    )
    assert launches == [("main", (40, 20, 30)), ("reduce_to_element", (10, 40, 0))]


def test_a_grad_w_dtype_other_than_f32_or_the_activations_is_named(
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[Any, ...]]
) -> None:
    _plan(monkeypatch, launches, single_partial=False)
    message = r"grad_w_dtype must be 'float32' or the activations' dtype 'float16', got 'bfloat16'"
    with pytest.raises(ValueError, match=message):
        wgrad.conv2d_gw8_wgrad(10, 20, 30, PARAMS, CONFIG, workspace=40, grad_w_dtype="bfloat16")
    with pytest.raises(ValueError, match="got 'float64'"):
        wgrad.wgrad_workspace_bytes(PARAMS, CONFIG, grad_w_dtype="float64")
    assert launches == []


def test_a_rounded_grad_w_needs_a_workspace_for_one_partial_per_weight() -> None:
    params = Conv2dGw8Params.make(2, 64, 8, 8)
    config = WgradConfig(block_q=16, block_g=2, warp_g=1, block_p=8, prefetch=1, block_n=2)
    assert wgrad.wgrad_spec.partial_count(params, config) == 1
    assert wgrad.wgrad_workspace_bytes(params, config) == 0
    weights_f32 = 64 * 3 * 3 * 8 * 4
    assert wgrad.wgrad_workspace_bytes(params, config, grad_w_dtype="float16") == weights_f32


def test_the_bias_gradient_goes_to_the_reduction(
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[Any, ...]]
) -> None:
    _plan(monkeypatch, launches, single_partial=False, bias_grad=True)
    with_bias = Conv2dGw8Params.make(2, 64, 8, 8, has_bias=True)
    wgrad.conv2d_gw8_wgrad(10, 20, 30, with_bias, CONFIG, workspace=40, device=0, grad_bias=50)
    assert launches == [("main", (40, 20, 30)), ("reduce", (10, 40, 50))]


def test_a_bias_gradient_missing_or_without_a_bias_is_named(
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[Any, ...]]
) -> None:
    _plan(monkeypatch, launches, single_partial=False, bias_grad=True)
    with_bias = Conv2dGw8Params.make(2, 64, 8, 8, has_bias=True)
    with pytest.raises(ValueError, match=r"params.has_bias\), so the kernels write its gradient"):
        wgrad.conv2d_gw8_wgrad(10, 20, 30, with_bias, CONFIG, workspace=40)
    with pytest.raises(ValueError, match=r"grad_bias is given, but the layer has no bias"):
        wgrad.conv2d_gw8_wgrad(10, 20, 30, PARAMS, CONFIG, workspace=40, grad_bias=50)
    launch = wgrad.wgrad_launch(with_bias, CONFIG, 0)  # the stand-in: the launch checks too
    with pytest.raises(ValueError, match="pass grad_bias"):
        launch(10, 20, 30, workspace=40)
    assert launches == []


def test_a_layer_with_a_bias_reduces_its_one_partial_from_a_workspace() -> None:
    params = Conv2dGw8Params.make(2, 64, 8, 8, has_bias=True)
    config = WgradConfig(block_q=16, block_g=2, warp_g=1, block_p=8, prefetch=1, block_n=2)
    assert wgrad.wgrad_spec.partial_count(params, config) == 1
    assert wgrad.wgrad_workspace_bytes(params, config) == (64 * 3 * 3 * 8 + 64) * 4


def test_a_conv_launch_passes_the_arrays_and_its_geometry(launches: list[Any]) -> None:
    kernel = _Kernel("fprop", launches)
    launch = ConvLaunch(kernel, LaunchGeometry(64, 256, 4096), has_bias=True)
    launch(1, 2, 3, 4, stream=7, pdl=False)
    assert launches == [("fprop", (1, 2, 3, 4))]
    assert kernel.last == (64, 256, 4096, 7, False)  # grid, block, shared memory, stream, pdl
    ConvLaunch(kernel, LaunchGeometry(64, 256, 0))(1, 2, 3)  # no bias: a null pointer
    assert launches[-1] == ("fprop", (1, 2, 3, 0))


def test_a_conv_launch_with_bias_needs_one(launches: list[Any]) -> None:
    launch = ConvLaunch(_Kernel("fprop", launches), LaunchGeometry(64, 256, 0), has_bias=True)
    with pytest.raises(ValueError, match="has_bias is True but bias is None"):
        launch(1, 2, 3)
    assert launches == []


def test_a_conv_launch_without_bias_refuses_one(launches: list[Any]) -> None:
    # The kernel of a layer without a bias never reads one: taking it would drop it unseen.
    launch = ConvLaunch(_Kernel("fprop", launches), LaunchGeometry(64, 256, 0))
    with pytest.raises(ValueError, match="has_bias is False but bias is given"):
        launch(1, 2, 3, 4)
    assert launches == []


def test_the_fprop_entry_launches_through_the_layers_launch(
    monkeypatch: pytest.MonkeyPatch, launches: list[Any]
) -> None:
    config = FpropConfig(block_q=16, block_g=2, warp_g=1, warp_q16=1, block_p=4, prefetch=2)
    asked: list[Any] = []

    def fprop_launch(*key: Any) -> ConvLaunch:
        asked.append(key)
        return ConvLaunch(_Kernel("fprop", launches), LaunchGeometry(8, 64, 0))

    monkeypatch.setattr(fprop, "fprop_launch", fprop_launch)
    fprop.conv2d_gw8_fprop(10, 20, 30, None, PARAMS, config, device=0)
    assert asked == [(PARAMS, config, 0)]
    assert launches == [("fprop", (10, 20, 30, 0))]
