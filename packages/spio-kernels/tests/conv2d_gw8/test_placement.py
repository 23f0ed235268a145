"""placement.placed_config_on: what a launch runs for the config it was given, per pass."""

from __future__ import annotations

import dataclasses

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig, placement, wgrad, wgrad_heuristic

LAYER = Conv2dGw8Params.make(2, 64, 8, 8)


@pytest.mark.parametrize("pass_name", ["fprop", "dgrad"])
def test_fprop_and_dgrad_run_an_even_walk_as_given(pass_name: str) -> None:
    config = FpropConfig(mma_k=16)
    assert placement.placed_config_on(pass_name, LAYER, config) is config


@pytest.mark.parametrize(("pass_name", "even"), [("fprop", 14), ("dgrad", 15)])
def test_fprop_and_dgrad_cut_their_chunks_evenly(pass_name: str, even: int) -> None:
    # dgrad walks the rows of its own kernel's output, the layer's input: 58 rows where the
    # layer (no padding) has 56 output rows.
    params = Conv2dGw8Params.make(32, 64, 58, 58, padding=0)
    config = FpropConfig(block_q=16, warp_q16=1, block_p=16, mma_k=16)
    placed = placement.placed_config_on(pass_name, params, config)
    assert placed == dataclasses.replace(config, block_p=even)


def test_wgrad_runs_the_launchers_balanced_config(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = []

    def balanced(params: Conv2dGw8Params, config: object, device: int = 0) -> str:
        asked.append((params, config, device))
        return "balanced"

    monkeypatch.setattr(wgrad, "balanced_config_on", balanced)
    tile = wgrad_heuristic.default_config(LAYER)
    assert placement.placed_config_on("wgrad", LAYER, tile, 3) == "balanced"
    assert asked == [(LAYER, tile, 3)]


def test_another_pass_is_refused() -> None:
    with pytest.raises(
        ValueError, match=r"pass_name must be one of \('fprop', 'dgrad', 'wgrad'\), got 'bprop'"
    ):
        placement.placed_config_on("bprop", LAYER, None)
