"""tools/selection_time.py: it times choices on a stand-in GPU and reports them per pass."""

from __future__ import annotations

import re

import pytest
from tool_module import load_tool

from spio.perfmodel import _select

tool = load_tool("selection_time")


def test_times_each_pass_on_random_layers_and_counts_those_over_the_target(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _select._choose_shipped.cache_clear()
    tool.main(
        ["--layers", "3", "--repeats", "1", "--passes", "fprop", "wgrad"], monkeypatch.setattr
    )
    _select._choose_shipped.cache_clear()
    out = capsys.readouterr().out
    assert out.startswith("NVIDIA H200 stand-in, 3 layers (seed 0)")
    for name in ("fprop", "wgrad"):
        line = re.search(
            rf"{name}: median ([\d.]+), p90 ([\d.]+), largest ([\d.]+); (\d) of 3", out
        )
        assert line is not None, out
        median, p90, largest = (float(line.group(k)) for k in (1, 2, 3))
        assert 0 < median <= p90 <= largest
    assert "dgrad" not in out


def test_random_layers_are_the_seeds_own() -> None:
    assert tool.random_layers(5, 1) == tool.random_layers(5, 1)
    assert tool.random_layers(5, 1) != tool.random_layers(5, 2)
