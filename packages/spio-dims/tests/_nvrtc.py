"""Compile CUDA C++ source strings with NVRTC for the spio-dims tests (no GPU needed).

`compile_cuda(source, arch="sm_90")` compiles for a real architecture, so NVRTC runs ptxas too
and inline PTX is checked, and returns both the PTX and the cubin. The include path holds the
spio-dims headers and CUDA's own headers (cuda_fp16.h, cuda_bf16.h, ...) from the
nvidia-cuda-runtime wheel, found through cuda.pathfinder; CUDA_HOME or CUDA_PATH is the
fallback. A failed compile raises `NvrtcError` carrying the full log.

`ptx_instructions(ptx, entry)` lists the instruction lines of one kernel, for the zero-cost
comparisons.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cuda.bindings import nvrtc

# The spio-dims headers: `#include "spio/spio.h"` resolves here.
SPIO_INCLUDE_DIR = Path(__file__).resolve().parents[1] / "src" / "spio" / "dims" / "include"

# The architectures the device headers support, oldest first.
ARCHES = ("sm_80", "sm_89", "sm_90")


class NvrtcError(RuntimeError):
    """An NVRTC compile failed; `log` holds NVRTC's full log, `source` what was compiled."""

    def __init__(self, message: str, *, log: str, source: str, options: Sequence[str]) -> None:
        super().__init__(f"{message}\noptions: {' '.join(options)}\n--- NVRTC log ---\n{log}")
        self.log = log
        self.source = source
        self.options = tuple(options)


@dataclass(frozen=True)
class Compiled:
    """The result of one successful NVRTC compile."""

    ptx: str
    cubin: bytes
    log: str


@functools.cache
def cuda_include_dir() -> Path:
    """Return the directory holding CUDA's headers (cuda_fp16.h, vector_types.h, ...)."""
    try:
        from cuda import pathfinder
    except ImportError:
        pathfinder = None
    if pathfinder is not None:
        found = pathfinder.find_nvidia_header_directory("cudart")
        if found is not None:
            return Path(found)
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(variable)
        if root and (Path(root) / "include" / "cuda_fp16.h").is_file():
            return Path(root) / "include"
    raise FileNotFoundError(
        "CUDA's headers (cuda_fp16.h) were not found: install the nvidia-cuda-runtime wheel "
        "or set CUDA_HOME"
    )


def _check(result: tuple[Any, ...], what: str) -> tuple[Any, ...]:
    status = result[0]
    if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"{what} failed: {status}")
    return result[1:]


def _log(program: Any) -> str:
    (size,) = _check(nvrtc.nvrtcGetProgramLogSize(program), "nvrtcGetProgramLogSize")
    buffer = b" " * int(size)
    _check(nvrtc.nvrtcGetProgramLog(program, buffer), "nvrtcGetProgramLog")
    return buffer.rstrip(b"\0 ").decode(errors="replace")


def compile_cuda(
    source: str,
    *,
    arch: str = "sm_90",
    options: Sequence[str] = (),
    name: str = "test.cu",
) -> Compiled:
    """Compile `source` for `arch` (sm_XX) with C++17; raise NvrtcError with the log on failure.

    `options` are extra NVRTC options (e.g. "-DTILE=4"). Kernels meant to be found in the PTX
    should be `extern "C"` so that their entry names are not mangled.
    """
    if not re.fullmatch(r"sm_\d+a?", arch):
        raise ValueError(f"arch must look like 'sm_90', got {arch!r}")
    all_options = [
        f"--gpu-architecture={arch}",
        "-std=c++17",
        f"-I{SPIO_INCLUDE_DIR}",
        f"-I{cuda_include_dir()}",
        *options,
    ]
    (program,) = _check(
        nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []),
        "nvrtcCreateProgram",
    )
    try:
        encoded = [option.encode() for option in all_options]
        (status,) = nvrtc.nvrtcCompileProgram(program, len(encoded), encoded)
        log = _log(program)
        if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise NvrtcError(
                f"NVRTC could not compile {name} for {arch} ({status.name})",
                log=log,
                source=source,
                options=all_options,
            )
        (ptx_size,) = _check(nvrtc.nvrtcGetPTXSize(program), "nvrtcGetPTXSize")
        ptx = b" " * int(ptx_size)
        _check(nvrtc.nvrtcGetPTX(program, ptx), "nvrtcGetPTX")
        (cubin_size,) = _check(nvrtc.nvrtcGetCUBINSize(program), "nvrtcGetCUBINSize")
        cubin = b" " * int(cubin_size)
        _check(nvrtc.nvrtcGetCUBIN(program, cubin), "nvrtcGetCUBIN")
    finally:
        nvrtc.nvrtcDestroyProgram(program)
    return Compiled(ptx=ptx.rstrip(b"\0").decode(), cubin=cubin, log=log)


def ptx_entry_body(ptx: str, entry: str) -> str:
    """Return the text between the braces of kernel `entry` in `ptx`."""
    match = re.search(rf"\.entry\s+{re.escape(entry)}\s*\(", ptx)
    if match is None:
        raise KeyError(f"no kernel {entry!r} in the PTX")
    start = ptx.index("{", match.end())
    depth = 0
    for position in range(start, len(ptx)):
        if ptx[position] == "{":
            depth += 1
        elif ptx[position] == "}":
            depth -= 1
            if depth == 0:
                return ptx[start + 1 : position]
    raise ValueError(f"unbalanced braces in the PTX of {entry!r}")


def ptx_instructions(ptx: str, entry: str) -> list[str]:
    """Return the instruction lines of kernel `entry`: no directives, labels, comments, braces.

    Inline-PTX blocks in braces count their instructions like any others.
    """
    instructions = []
    for raw in ptx_entry_body(ptx, entry).splitlines():
        # NVVM wraps inline-PTX blocks in braces; strip them and judge what is inside.
        line = raw.split("//", 1)[0].strip().strip("{}").strip()
        if not line or line.startswith("."):
            continue
        if re.fullmatch(r"[$\w]+:", line):
            continue
        instructions.append(line)
    return instructions
