"""tools/nvrtc_threads.py: compiles in threads and in compile_many's processes."""

from __future__ import annotations

import re
import subprocess
import sys

from tool_module import ROOT


def test_times_each_round() -> None:
    # A script (compile_many's workers import its main module): run it as one.
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "nvrtc_threads.py"), "--count", "2",
         "--threads", "1", "2", "--processes"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    lines = done.stdout.rstrip().splitlines()
    assert len(lines) == 3
    for line, threads in zip(lines, (1, 2), strict=False):
        assert re.fullmatch(
            rf" {threads} threads: [\d.]+ s for 2 compiles, each [\d.]+ s, [\d.]+ at once", line
        ), line
    assert re.fullmatch(r"compile_many's processes: [\d.]+ s", lines[2])
