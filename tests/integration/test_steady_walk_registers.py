"""tools/steady_walk_registers.py: the joined timings, the blocks an SM and ptxas's reports."""

from __future__ import annotations

import dataclasses
import sys

import pytest
from tool_module import ROOT, load_tool

sys.path.insert(0, str(ROOT / "tools"))  # the tools import their siblings
tool = load_tool("steady_walk_registers")


def test_blocks_per_sm_takes_the_tightest_limit() -> None:
    assert tool.blocks_per_sm(128, 512, 0) == 1  # registers: 64K / (128 x 512)
    assert tool.blocks_per_sm(64, 128, 0) == 8  # registers again
    assert tool.blocks_per_sm(32, 128, 100 * 1024) == 2  # shared memory
    assert tool.blocks_per_sm(16, 32, 0) == 32  # the SM's block limit
    # Registers go to a warp in units of 256: 33 a thread takes 40 a thread's worth.
    assert tool.blocks_per_sm(33, 256, 0) == 6


@pytest.fixture(scope="module")
def moved() -> dict[str, list]:
    return {name: list(tool.moved_configs(name)) for name in tool.BEFORE_STEADY}


def test_every_retimed_steady_walk_row_meets_its_earlier_time(moved: dict[str, list]) -> None:
    # The fifty-ninth session's rows of 5 x 5 and 7 x 7 configs, each timed again.
    assert len(moved["fprop"]) == 2150
    assert len(moved["dgrad"]) == 1224
    for configs in moved.values():
        assert all(config.row.params.r >= 5 for config in configs)
        assert all(config.ratio > 0 for config in configs)


def test_a_config_without_the_steady_walk_is_refused(moved: dict[str, list]) -> None:
    config = moved["fprop"][0]
    params = dataclasses.replace(config.row.params, r=3, s=3, padding=(1, 1, 1, 1))
    three = dataclasses.replace(config, row=dataclasses.replace(config.row, params=params))
    with pytest.raises(ValueError, match="takes no steady walk"):
        tool.builds([three])


def test_the_slowest_config_spills_more_with_the_steady_walk(moved: dict[str, list]) -> None:
    # dgrad 32x256x64x64 7 x 7 in blocks of 512 threads: 128 registers a thread at most, and
    # the steady walk's unrolled groups spill more than the checked walk (ran 0.73x).
    slowest = min(moved["dgrad"], key=lambda config: config.ratio)
    assert slowest.ratio < 0.8
    reports = tool.builds([slowest])
    steady, checked = reports[0, True], reports[0, False]
    assert steady.registers == checked.registers == 128
    assert steady.spill_stores > checked.spill_stores > 0
