"""tools/wgrad_former_default_check.py: the tiles `save` writes, before any GPU work."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tool_module import ROOT, load_tool

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, WgradConfig, wgrad_heuristic

sys.path.insert(0, str(ROOT / "tools"))  # the tools import their siblings
tool = load_tool("wgrad_former_default_check")


def test_save_writes_the_launchers_tile_for_the_sm_count_and_arch(tmp_path: Path) -> None:
    out = tmp_path / "tiles.json"
    layers = ["128x96x56x56x3", "1x256x8x8x7", "64x128x24x24x3"]
    tool.save(layers, 132, "sm_90", out)
    saved = {text: WgradConfig(**fields) for text, fields in json.loads(out.read_text()).items()}
    assert list(saved) == layers
    # The four-image tile of 12 groups; a small layer's split short walk; the eight-group
    # TMA tile that a GPU with TMA takes.
    assert saved["128x96x56x56x3"] == WgradConfig(16, 4, 2, 64, 2, 4, image_sync=True)
    assert saved["1x256x8x8x7"].block_r == 1
    assert saved["64x128x24x24x3"].tma


def test_save_without_tma_keeps_the_cp_async_tile(tmp_path: Path) -> None:
    out = tmp_path / "tiles.json"
    tool.save(["64x128x24x24x3"], 108, "sm_80", out)
    (fields,) = json.loads(out.read_text()).values()
    params = Conv2dGw8Params.make(64, 128, 24, 24)
    assert WgradConfig(**fields) == wgrad_heuristic.split_walk_tile(
        params, wgrad_heuristic.default_config(params, 108), 108
    )
    assert not fields["tma"]
