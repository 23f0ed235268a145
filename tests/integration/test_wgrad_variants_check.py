"""tools/wgrad_variants_check.py: the variants named on its command line, before any GPU work."""

from __future__ import annotations

import dataclasses
import sys

import pytest
from tool_module import ROOT, load_tool

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, WgradConfig

sys.path.insert(0, str(ROOT / "tools"))  # the tool imports its sibling wgrad_timing
tool = load_tool("wgrad_variants_check")


def test_a_variant_is_fields_and_values() -> None:
    assert tool.parse_variant("image_sync=True,walk_n=4,tma=False", WgradConfig) == {
        "image_sync": True,
        "walk_n": 4,
        "tma": False,
    }


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("walks=4", "'walks=4' is not name=value of a WgradConfig field"),
        ("walk_n", "'walk_n' is not name=value"),
        ("walk_n=four", "'walk_n=four': the value is not an integer"),
    ],
)
def test_a_variant_that_names_no_field_stops_the_run(text: str, match: str) -> None:
    with pytest.raises(SystemExit, match=match):
        tool.parse_variant(text, WgradConfig)


def test_variants_that_cannot_run_the_layer_are_reported_and_left_out(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Placing a variant compiles its kernel for the GPU: here it stays as it is.
    monkeypatch.setattr(tool.wgrad, "balanced_config_on", lambda params, config: config)
    params = Conv2dGw8Params.make(8, 64, 14, 14)
    launched = WgradConfig(16, 8, 2, 16, 2, 2, 2, image_sync=True, tma=True)
    texts = ["prefetch=1", "block_n=1", "walk_n=1"]
    variants = tool.variants_of(params, launched, launched, texts)
    assert list(variants) == ["launched", "prefetch=1", "walk_n=1"]
    assert variants["prefetch=1"] == WgradConfig(16, 8, 2, 16, 1, 2, 2, image_sync=True, tma=True)
    report = capsys.readouterr().out
    assert "block_n=1: cannot run: image_sync=True needs several warp rows" in report


def test_a_placement_field_a_variant_names_keeps_its_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The launcher's placement would turn the flag back on (as improved_config_on does on a
    # GPU); the variant that turns it off is timed without it.
    monkeypatch.setattr(
        tool.wgrad,
        "balanced_config_on",
        lambda params, config: dataclasses.replace(config, skip_pad_rows=True, producer=True),
    )
    params = Conv2dGw8Params.make(8, 64, 14, 14)
    tile = WgradConfig(16, 8, 2, 16, 2, 2, 2, image_sync=True, tma=True)
    launched = dataclasses.replace(tile, skip_pad_rows=True, producer=True)
    variants = tool.variants_of(params, launched, tile, ["skip_pad_rows=False", "prefetch=1"])
    assert not variants["skip_pad_rows=False"].skip_pad_rows
    assert variants["skip_pad_rows=False"].producer  # (not named: placed)
    assert variants["prefetch=1"].skip_pad_rows


def test_variants_start_from_the_tile_and_balance_its_walk_unless_they_name_segments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A launch given a tile walks it in segments where its waves leave SMs idle
    # (balanced_config_on); a variant naming segments keeps its walk (improved_config_on).
    monkeypatch.setattr(
        tool.wgrad,
        "balanced_config_on",
        lambda params, config: dataclasses.replace(config, segments=33, producer=True),
    )
    monkeypatch.setattr(
        tool.wgrad,
        "improved_config_on",
        lambda params, config: dataclasses.replace(config, producer=True),
    )
    params = Conv2dGw8Params.make(128, 512, 28, 28)
    tile = WgradConfig(16, 8, 2, 32, 2, 2, image_sync=True)
    launched = dataclasses.replace(tile, segments=16)
    variants = tool.variants_of(params, launched, tile, ["tma=True", "tma=True,segments=0"])
    assert variants["launched"] == launched
    assert variants["tma=True"] == dataclasses.replace(tile, tma=True, segments=33, producer=True)
    assert variants["tma=True,segments=0"] == dataclasses.replace(tile, tma=True, producer=True)
