"""tools/precompile_threads.py: precompile on a stand-in GPU, its kernels compiled for real
and loaded as stand-ins, in a new process per thread count; tools/cubin_kernels.py."""

from __future__ import annotations

import re
import sys

import pytest
from tool_module import ROOT, load_tool

sys.path.insert(0, str(ROOT / "tools"))  # the tools import their siblings
tool = load_tool("precompile_threads")


def test_prepares_every_pass_of_a_small_network_in_each_thread_count(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # One stage, a 3 x 3 conv: its fprop and wgrad (its input needs no gradient), at one
    # batch size; compiled in 1 and in 2 threads.
    tool.main(["--threads", "1", "2", "--channels", "16", "--side", "6", "--batches", "2",
               "--kernel-sizes", "3"])  # fmt: skip
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "NVIDIA H200 stand-in, batches [2]: precompile on a cold kernel cache"
    for line, threads in zip(lines[1:], (1, 2), strict=True):
        pattern = rf"  {threads} threads: ([\d.]+) s \(2 passes, 1 layers, (\d+) compiles\)"
        match = re.fullmatch(pattern, line)
        assert match is not None, line
        assert float(match.group(1)) > 0
        # fprop's and wgrad's kernels, and the variants their launchers compare
        assert int(match.group(2)) >= 2
