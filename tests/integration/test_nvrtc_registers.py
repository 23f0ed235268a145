"""tools/nvrtc_registers.py: ptxas's reports of a config sample, and their comparison."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tool_module import ROOT, load_tool

sys.path.insert(0, str(ROOT / "tools"))  # the tools import their siblings
tool = load_tool("nvrtc_registers")

_LOG = """ptxas info    : Compiling entry function 'conv2d_gw8_fprop' for 'sm_90'
ptxas info    : Function properties for conv2d_gw8_fprop
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 127 registers, used 1 barriers
"""


def _entry(registers: int, spills: int = 0, threads: int = 128) -> dict[str, object]:
    report = {"stack": spills, "spills": spills, "registers": registers}
    return {"threads": threads, "kernels": {"conv2d_gw8_fprop": report}}


def test_a_ptxas_report_is_read_per_kernel() -> None:
    assert tool.kernel_reports(_LOG) == {
        "conv2d_gw8_fprop": {"stack": 0, "spills": 0, "registers": 127}
    }


@pytest.mark.parametrize(
    ("registers", "threads", "blocks"),
    [(128, 128, 4), (129, 128, 3), (96, 128, 5), (32, 64, 32), (255, 1024, 0)],
)
def test_blocks_an_sm_by_registers(registers: int, threads: int, blocks: int) -> None:
    assert tool.blocks_per_sm(registers, threads) == blocks


def test_compare_counts_registers_blocks_and_spills() -> None:
    first = {"nvrtc": "13.0.88", "configs": {"a": _entry(127), "b": _entry(128), "c": _entry(90)}}
    second = {
        "nvrtc": "13.2.86",
        "configs": {"a": _entry(128), "b": _entry(138), "c": _entry(90, spills=8)},
    }
    lines = tool.compare(first, second)
    assert lines[0] == (
        "NVRTC 13.0.88 -> 13.2.86: of 3 configs, 2 differ in registers, 1 in the blocks an SM "
        "their registers allow, 1 in spill stores"
    )
    assert lines[1:] == ["  b: 128 -> 138 registers, 4 -> 3 blocks an SM"]


def test_write_records_every_sampled_configs_kernels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tool, "LAYERS", ((8, 64, 16, 3),))
    out = tmp_path / "reports.json"
    tool.write(out, per_layer=1, seed=0)
    written = json.loads(out.read_text())
    assert len(written["configs"]) == 3  # one config of each pass
    for entry in written["configs"].values():
        assert tool.main_kernel(entry["kernels"])["registers"] > 0
    assert tool.compare(written, written)[0].endswith(
        "of 3 configs, 0 differ in registers, 0 in the blocks an SM their registers allow, "
        "0 in spill stores"
    )
