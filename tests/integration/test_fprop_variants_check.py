"""tools/fprop_variants_check.py and tools/strip_width_check.py: the configs they time,
before any GPU work."""

from __future__ import annotations

import dataclasses
import sys

import pytest
from tool_module import ROOT, load_tool

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig, dgrad_spec, fprop_spec

sys.path.insert(0, str(ROOT / "tools"))  # the tools import their siblings
variants_tool = load_tool("fprop_variants_check")
strip_tool = load_tool("strip_width_check")


def test_a_variant_of_fprop_is_fields_of_its_config() -> None:
    assert variants_tool.parse_variant("block_q=48,warp_q16=1", FpropConfig) == {
        "block_q": 48,
        "warp_q16": 1,
    }
    with pytest.raises(SystemExit, match="'walk_n=2' is not name=value of a FpropConfig field"):
        variants_tool.parse_variant("walk_n=2", FpropConfig)


def test_variants_are_placed_and_those_that_cannot_run_are_left_out(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Placing a variant compiles its kernel for the GPU: here it walks 7 segments unless
    # the variant names its walk.
    def placed(pass_: str, params: Conv2dGw8Params, tile: FpropConfig, kept: dict) -> FpropConfig:
        return dataclasses.replace(tile, **kept) if kept else dataclasses.replace(tile, segments=7)

    monkeypatch.setattr(variants_tool, "placed", placed)
    params = Conv2dGw8Params.make(128, 64, 48, 48)
    tile = FpropConfig(32, 8, 2, 2, 32, 2, 16)
    texts = ["block_q=16,warp_q16=1", "block_q=48", "prefetch=6"]
    variants = variants_tool.variants_of("dgrad", params, tile, tile, texts)
    assert list(variants) == ["launched", "block_q=16,warp_q16=1", "prefetch=6"]
    assert variants["block_q=16,warp_q16=1"] == FpropConfig(16, 8, 2, 1, 32, 2, 16, segments=7)
    assert variants["prefetch=6"] == FpropConfig(32, 8, 2, 2, 32, 6, 16)
    report = capsys.readouterr().out
    assert (
        "dgrad block_q=48: cannot run: block_q must be a multiple of 16 * warp_q16 = 32" in report
    )


@pytest.mark.parametrize("spec", [fprop_spec, dgrad_spec])
def test_the_strip_check_times_the_tile_from_before_the_rule(spec: object) -> None:
    params = Conv2dGw8Params.make(128, 64, 48, 48)
    before = strip_tool.without_rule(spec, params, 132)
    assert before == FpropConfig(32, 8, 2, 2, 32, 2, 16)
    assert spec.default_config(params, 132).block_q == 16  # type: ignore[attr-defined]
    # Every held-out layer is one the rule changes.
    for layer in strip_tool.named_layers(None, strip_tool.HELD_OUT):
        assert fprop_spec.default_config(layer, 132).block_q == 16
        assert strip_tool.without_rule(fprop_spec, layer, 132).block_q == 32
