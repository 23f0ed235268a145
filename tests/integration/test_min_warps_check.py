"""tools/min_warps_check.py: the thresholds it sets and the configs it times, before any GPU
work."""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import pytest
from tool_module import ROOT, load_tool

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig, fprop_spec, wgrad_heuristic

sys.path.insert(0, str(ROOT / "tools"))  # the tools import their siblings
tool = load_tool("min_warps_check")


def test_a_thresholds_item_names_constants_of_the_pass_heuristic() -> None:
    assert tool.parse_thresholds("MIN_WARPS_PER_SM=10,LONG_WALK_GROUP_ROWS=8", "dgrad") == {
        "MIN_WARPS_PER_SM": 10,
        "LONG_WALK_GROUP_ROWS": 8,
    }
    assert tool.parse_thresholds("MIN_WARPS_PER_SM=10", "wgrad") == {"MIN_WARPS_PER_SM": 10}
    # wgrad's heuristic has no long-walk threshold; a value must be a count.
    with pytest.raises(SystemExit, match="'LONG_WALK_MIN_WARPS_PER_SM=10' is not NAME=N"):
        tool.parse_thresholds("LONG_WALK_MIN_WARPS_PER_SM=10", "wgrad")
    with pytest.raises(SystemExit, match="'MIN_WARPS_PER_SM=ten' is not NAME=N"):
        tool.parse_thresholds("MIN_WARPS_PER_SM=ten", "fprop")


def test_thresholds_hold_inside_the_block_only() -> None:
    params = Conv2dGw8Params.make(48, 512, 16, 16)
    assert fprop_spec.default_config(params, 132).block_p == 16
    with tool.thresholds_set(fprop_spec, {"LONG_WALK_MIN_WARPS_PER_SM": 13}):
        assert fprop_spec.LONG_WALK_MIN_WARPS_PER_SM == 13
        assert fprop_spec.default_config(params, 132).block_p == 8
    assert fprop_spec.LONG_WALK_MIN_WARPS_PER_SM == 10
    with pytest.raises(RuntimeError), tool.thresholds_set(wgrad_heuristic, {"MIN_WARPS_PER_SM": 1}):
        raise RuntimeError
    assert wgrad_heuristic.MIN_WARPS_PER_SM == 13


def test_each_item_is_the_heuristic_tile_placed_as_the_launcher_places_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Placing compiles for the GPU: here it walks the tile as it is.
    params = Conv2dGw8Params.make(48, 512, 16, 16)

    def launched_and_placer(pass_: str, layer: Conv2dGw8Params) -> tuple[Any, Any]:
        return fprop_spec.default_config(layer, 132), lambda: fprop_spec.default_config(layer, 132)

    monkeypatch.setattr(tool, "launched_and_placer", launched_and_placer)
    configs = tool.configs_at("fprop", params, ["LONG_WALK_MIN_WARPS_PER_SM=13"])
    assert configs["launched"] == FpropConfig(16, 8, 2, 1, 16, 6, 16)
    assert configs["LONG_WALK_MIN_WARPS_PER_SM=13"] == FpropConfig(16, 8, 2, 1, 8, 1, 16)


def test_a_placement_other_than_the_launchers_stops_the_comparison(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    params = Conv2dGw8Params.make(48, 512, 16, 16)
    launched = fprop_spec.default_config(params, 132)
    elsewhere = dataclasses.replace(launched, segments=7)
    monkeypatch.setattr(tool, "launched_and_placer", lambda *_: (launched, lambda: elsewhere))
    with pytest.raises(SystemExit, match="placement differs"):
        tool.configs_at("fprop", params, ["MIN_WARPS_PER_SM=10"])
