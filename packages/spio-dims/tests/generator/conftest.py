"""Fixtures shared by the generator tests: the repository, clang-format, the CLI."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]
# The repo's style; the same options inline when the tests run outside a checkout.
STYLE_FILE = REPO / ".clang-format"
INLINE_STYLE = "{BasedOnStyle: Google, IndentWidth: 4, ColumnLimit: 100}"


def _tool(name: str) -> Path | None:
    beside_python = Path(sys.executable).parent / name
    if beside_python.is_file():
        return beside_python
    found = shutil.which(name)
    return Path(found) if found else None


@pytest.fixture(scope="session")
def clang_format() -> Path:
    """The clang-format binary (the lint group pins clang-format==23.1.5); skip without it."""
    path = _tool("clang-format")
    if path is None:
        pytest.skip("clang-format is not installed (uv pip install clang-format==23.1.5)")
    return path


@pytest.fixture(scope="session")
def formatted(
    clang_format: Path, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[Sequence[str]], list[str]]:
    """Return a function that formats texts as C++ headers with clang-format, in one run."""
    style = f"file:{STYLE_FILE}" if STYLE_FILE.is_file() else INLINE_STYLE
    counter = iter(range(10**9))

    def run(texts: Sequence[str]) -> list[str]:
        folder = tmp_path_factory.mktemp(f"format{next(counter)}")
        paths = [folder / f"header{index}.h" for index in range(len(texts))]
        for path, text in zip(paths, texts, strict=True):
            path.write_text(text)
        if paths:
            subprocess.run(
                [str(clang_format), f"--style={style}", "-i", *map(str, paths)], check=True
            )
        return [path.read_text() for path in paths]

    return run


@pytest.fixture(scope="session")
def cli() -> Path:
    """The installed `spio-dims` entry point of this environment; skip if not installed."""
    path = _tool("spio-dims")
    if path is None:
        pytest.skip("the spio-dims entry point is not installed in this environment")
    return path
