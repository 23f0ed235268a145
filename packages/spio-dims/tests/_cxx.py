"""Compile and run host C++ for the spio-dims tests: compiler discovery, compiles, runs.

The C++ tests build with every host compiler found among `COMPILERS` (g++ always on CI; clang++
when installed), with the project's warning flags. Compiles of independent sources run in
parallel threads (the compilers are separate processes), `jobs()` at a time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

TESTS_DIR = Path(__file__).resolve().parent
# The spio-dims headers: `#include "spio/spio.h"` resolves here.
INCLUDE_DIR = TESTS_DIR.parent / "src" / "spio" / "dims" / "include"
# spio_test.h, the harness of the C++ unit tests and the lessons.
HARNESS_DIR = TESTS_DIR / "lessons" / "harness"
# test_types.h: hand-written declarations in the generator's form.
CPP_TESTS_DIR = TESTS_DIR / "cpp"

COMPILERS = ("g++", "clang++")
STANDARD = "-std=c++17"
WARNINGS = ("-Wall", "-Wextra", "-Wpedantic", "-Werror")

_T = TypeVar("_T")
_R = TypeVar("_R")


@dataclass(frozen=True)
class Result:
    """The outcome of one command: what ran, its exit status, stdout and stderr together."""

    command: tuple[str, ...]
    returncode: int
    output: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def describe(self) -> str:
        """The command line, exit status and output, for an assertion message."""
        return f"$ {' '.join(self.command)}\nexit status {self.returncode}\n{self.output}"


def find_compiler(name: str) -> str | None:
    """Return the path of host compiler `name` (g++, clang++), or None if it is not installed."""
    return shutil.which(name)


def cuda_roots() -> list[Path]:
    """Where a CUDA toolkit may be installed, in order: CUDA_HOME, CUDA_PATH, /usr/local/cuda."""
    roots = (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda")
    return [Path(root) for root in roots if root]


def cuda_toolkit_include_dir() -> Path | None:
    """Return the include directory of an installed CUDA toolkit, or None.

    A toolkit's, not the nvidia-cuda-runtime wheel's: host code that includes <cuda_runtime.h>
    needs crt/, which the wheel lacks.
    """
    for root in cuda_roots():
        if (root / "include" / "crt" / "host_config.h").is_file():
            return root / "include"
    return None


def jobs() -> int:
    """How many compiles to run at once: one per CPU."""
    return max(1, os.cpu_count() or 1)


def run(command: Sequence[str | os.PathLike[str]], *, timeout: float = 300.0) -> Result:
    """Run `command`, capturing stdout and stderr together; never raise on a non-zero exit."""
    args = tuple(str(part) for part in command)
    completed = subprocess.run(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Result(args, completed.returncode, completed.stdout)


def include_flags(include_dirs: Iterable[Path]) -> list[str]:
    return [f"-I{directory}" for directory in include_dirs]


def compile_object(
    compiler: str,
    source: Path,
    output: Path,
    *,
    include_dirs: Sequence[Path] = (),
    flags: Sequence[str] = (),
) -> Result:
    """Compile `source` to the object file `output` with the standard and warning flags."""
    includes = include_flags(include_dirs)
    return run([compiler, STANDARD, *WARNINGS, *flags, *includes, "-c", source, "-o", output])


def link(compiler: str, objects: Sequence[Path], output: Path) -> Result:
    """Link `objects` into the executable `output`."""
    return run([compiler, *objects, "-o", output])


def check_syntax(
    compiler: str,
    source: Path,
    *,
    include_dirs: Sequence[Path] = (),
    flags: Sequence[str] = (),
) -> Result:
    """Compile `source` without generating code (templates are still instantiated)."""
    includes = include_flags(include_dirs)
    return run([compiler, STANDARD, *WARNINGS, *flags, *includes, "-fsyntax-only", source])


def parallel_map(function: Callable[[_T], _R], items: Iterable[_T]) -> list[_R]:
    """Apply `function` to each item, `jobs()` at a time, keeping the order of `items`."""
    with ThreadPoolExecutor(max_workers=jobs()) as pool:
        return list(pool.map(function, items))
