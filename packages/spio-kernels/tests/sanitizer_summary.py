"""compute-sanitizer for the kernel tests: finding it, the command line of one tool on one
module's run_once, and reading its summary line (whether the tool found nothing)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

#: memcheck and synccheck end with "ERROR SUMMARY: N errors"; racecheck with "RACECHECK
#: SUMMARY: N hazards displayed (E errors, W warnings)", where warnings count too.
_ERRORS = re.compile(r"ERROR SUMMARY: (\d+) error")
_HAZARDS = re.compile(
    r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)"
)


def summary_is_clean(tool: str, output: str) -> bool:
    """Whether output (the sanitizer's and the program's) holds tool's summary and it
    reports no error, hazard or warning; False where the summary is missing."""
    if tool == "racecheck":
        found = _HAZARDS.findall(output)
        return bool(found) and all(int(v) == 0 for match in found for v in match)
    found = _ERRORS.findall(output)
    return bool(found) and all(int(count) == 0 for count in found)


def find_sanitizer() -> str | None:
    """compute-sanitizer on PATH, under CUDA_HOME, or in the usual install folder."""
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and (Path(root) / "bin" / "compute-sanitizer").is_file():
            return str(Path(root) / "bin" / "compute-sanitizer")
    return None


def sanitizer_command(sanitizer: str, tool: str, module: str, args: list[str]) -> list[str]:
    """The command running `python -m module args` under tool. API errors (the CUDA calls
    torch makes and expects to fail) are not reported: only the kernels' accesses count."""
    return [
        sanitizer, "--tool", tool, "--error-exitcode", "86", "--report-api-errors", "no",
        sys.executable, "-m", module, *args,
    ]  # fmt: skip


def check_clean(tool: str, module: str, args: list[str], env: dict[str, str] | None = None) -> None:
    """Run `python -m module args` under tool (with env's variables added to this process's)
    and fail (pytest) unless it exits 0 and the tool's summary reports nothing; skip where
    compute-sanitizer is not installed."""
    import pytest

    sanitizer = find_sanitizer()
    if sanitizer is None:
        pytest.skip("compute-sanitizer not found (PATH, CUDA_HOME, /usr/local/cuda/bin)")
    command = sanitizer_command(sanitizer, tool, module, args)
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})}
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert summary_is_clean(tool, output), output[-4000:]
