"""Shared setup of spio-perfmodel's tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

# tests/ holds synthetic.py; pytest's importlib mode does not put it on sys.path.
_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)


@pytest.fixture
def gpu(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[SimpleNamespace]:
    """A stand-in H200 (sm_90) for choose_config and tune_config, with no GPU:
    spio.jit.device_info returns it, and the heuristic (which compiles and loads the kernel
    to count its resident blocks) the spec's default (wgrad's: its tile for this GPU,
    default_tile_on), which the placement (which compiles too) leaves as it is, and a tuning
    times the shortlist's configs without their other walks (which compile too); the
    selection mode is the default one, the choices not yet memoised, and kept tunings go to
    an empty directory of the test's. device.timed collects what a stand-in timer was asked
    to time. The blocks of fprop's and dgrad's compiled kernels that fit on it at once (which
    _give_way weighs a model's pick by, compiling it) are unbounded here: every grid is one
    wave."""
    import spio.jit
    from spio.kernels.conv2d_gw8 import fprop_segments, placement, wgrad
    from spio.perfmodel import PASSES, _select, set_selection_mode
    from spio.perfmodel._selection_mode import SELECTION_ENV

    device = SimpleNamespace(name="NVIDIA H200", sm_count=132, arch="sm_90", timed=[])
    monkeypatch.setattr(spio.jit, "device_info", lambda index: device)
    heuristics = {name: (lambda p, d, name=name: PASSES[name].default_config(p, 132))
                  for name in PASSES}  # fmt: skip
    heuristics["wgrad"] = wgrad.default_tile_on
    monkeypatch.setattr(_select, "_heuristics", lambda: heuristics)
    monkeypatch.setattr(placement, "placed_config_on", lambda name, p, c, d=0: c)
    monkeypatch.setattr(fprop_segments, "slots_on", lambda name, p, c, d=0: 1 << 30)
    alone = {name: (lambda p, c, d: [c]) for name in PASSES}
    monkeypatch.setattr(_select, "_walks", lambda: alone)
    monkeypatch.delenv(SELECTION_ENV, raising=False)
    set_selection_mode(None)
    monkeypatch.setenv("SPIO_JIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SPIO_JIT_DISABLE_CACHE", raising=False)
    _select._choose_shipped.cache_clear()
    yield device
    set_selection_mode(None)
    _select._choose_shipped.cache_clear()
