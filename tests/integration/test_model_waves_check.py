"""tools/model_waves_check.py: the choices it compares, without a GPU (the device's name, its
heuristic and its compiled kernels' block slots come from stand-ins)."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest
from tool_module import ROOT, load_tool

import spio.jit
from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    FpropConfig,
    dgrad_spec,
    fprop_segments,
    placement,
)
from spio.perfmodel import _select

sys.path.insert(0, str(ROOT / "tools"))  # the tools import their siblings
tool = load_tool("model_waves_check")

#: The H200 dgrad model's pick there when the rule was written, and the heuristic's config.
LAYER = Conv2dGw8Params.make(96, 128, 32, 32)
PICK = FpropConfig(32, 4, 2, 1, 16, 1, 16)
HEURISTIC = FpropConfig(32, 8, 2, 2, 16, 2, 16)


class _PinnedPick:
    """A shipped model whose pick on any layer is PICK, predicted 5% faster than the
    heuristic's config, and which measured no layer: the rule's case, whatever the shipped
    model's trees pick there today (the sixty-third session's dgrad model picks the
    heuristic's config on LAYER itself). Everything else is the shipped model's (its GPU
    limits count the waves)."""

    def __init__(self, model: object) -> None:
        self._model = model

    def __getattr__(self, name: str) -> object:
        return getattr(self._model, name)

    def measured_config(self, params: Conv2dGw8Params) -> None:
        return None

    def best_config_over(self, params: Conv2dGw8Params, default: object) -> tuple[object, float]:
        return PICK, 0.05

    def best_config(self, params: Conv2dGw8Params) -> FpropConfig:
        return PICK


@pytest.fixture
def h200(monkeypatch: pytest.MonkeyPatch) -> None:
    device = SimpleNamespace(name="NVIDIA H200", sm_count=132, arch="sm_90")
    shipped = tool.shipped_model
    monkeypatch.setattr(tool, "shipped_model", lambda *names: _PinnedPick(shipped(*names)))
    monkeypatch.setattr(spio.jit, "device_info", lambda index: device)
    heuristics = {"dgrad": lambda p, d: dgrad_spec.default_config(p, 132)}
    monkeypatch.setattr(_select, "_heuristics", lambda: heuristics)
    monkeypatch.setattr(placement, "placed_config_on", lambda name, p, c, d=0: c)
    # Five blocks of the pick's 96-register kernel an SM, as on the H200.
    monkeypatch.setattr(fprop_segments, "slots_on", lambda name, p, c, d=0: 5 * 132)


@pytest.mark.usefixtures("h200")
def test_without_the_rule_the_pick_runs_and_with_it_the_heuristics_config() -> None:
    before, after, heuristic, note = tool.choices("dgrad", LAYER)
    assert (before, after, heuristic) == (PICK, HEURISTIC, HEURISTIC)
    assert note == f"pick {PICK}: 0.42 waves counted, 1.16 compiled (768 blocks)"
