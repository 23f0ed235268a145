"""The host-side rules of the headers: self-contained, free of the standard library, small."""

from __future__ import annotations

import re
from pathlib import Path

import _cxx
import pytest

# The host-and-device headers (the .cuh device headers have rules of their own).
HEADERS = sorted(
    path.relative_to(_cxx.INCLUDE_DIR).as_posix()
    for path in (_cxx.INCLUDE_DIR / "spio").rglob("*.h")
)
# What a header may include with angle brackets: CUDA's half types, inside `#if SPIO_CUDA`.
ALLOWED_SYSTEM_HEADERS = {"cuda_fp16.h", "cuda_bf16.h"}
MAX_LINES = 800


@pytest.fixture(scope="session")
def standalone(cxx: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, _cxx.Result]:
    """Each header compiled alone, as the only include of a translation unit, in parallel."""
    folder = tmp_path_factory.mktemp(f"headers-{Path(cxx).name}")
    sources = []
    for header in HEADERS:
        source = folder / (header.replace("/", "_").replace(".", "_") + ".cpp")
        source.write_text(f'#include "{header}"\n#include "{header}"  // include guard\n')
        sources.append(source)
    results = _cxx.parallel_map(
        lambda source: _cxx.check_syntax(cxx, source, include_dirs=(_cxx.INCLUDE_DIR,)), sources
    )
    return dict(zip(HEADERS, results, strict=True))


def test_the_umbrella_includes_every_header() -> None:
    umbrella = (_cxx.INCLUDE_DIR / "spio" / "spio.h").read_text()
    included = set(re.findall(r'^#include "(spio/[\w/]+\.h)"', umbrella, re.MULTILINE))
    top_level = {header for header in HEADERS if header.count("/") == 1} - {"spio/spio.h"}
    assert top_level <= included


@pytest.mark.parametrize("header", HEADERS)
def test_compiles_alone(header: str, standalone: dict[str, _cxx.Result]) -> None:
    """The header includes what it uses and compiles cleanly with the warning flags."""
    result = standalone[header]
    assert result.ok, result.describe()


@pytest.mark.parametrize("header", HEADERS)
def test_no_standard_library(header: str) -> None:
    """NVRTC has no C++ standard library, so the headers include none of it."""
    text = (_cxx.INCLUDE_DIR / header).read_text()
    system = set(re.findall(r"^\s*#\s*include\s*<([^>]+)>", text, re.MULTILINE))
    assert system <= ALLOWED_SYSTEM_HEADERS, f"{header} includes {sorted(system)}"
    assert "std::" not in re.sub(r"//.*", "", text), f"{header} uses std:: outside comments"


@pytest.mark.parametrize("header", HEADERS)
def test_each_include_says_what_it_is_for(header: str) -> None:
    text = (_cxx.INCLUDE_DIR / header).read_text()
    bare = [
        line
        for line in text.splitlines()
        if line.lstrip().startswith("#include") and "//" not in line
    ]
    assert not bare, f"{header}: includes without a comment: {bare}"


@pytest.mark.parametrize("header", HEADERS)
def test_small_enough_to_read(header: str) -> None:
    lines = (_cxx.INCLUDE_DIR / header).read_text().count("\n")
    assert lines <= MAX_LINES, f"{header} has {lines} lines; split it (limit {MAX_LINES})"
