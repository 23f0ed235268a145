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
# The device-only headers, which a host compiler must refuse with one clear message.
DEVICE_HEADERS = sorted(
    path.relative_to(_cxx.INCLUDE_DIR).as_posix()
    for path in (_cxx.INCLUDE_DIR / "spio").rglob("*.cuh")
)
# What a header may include with angle brackets: CUDA's half types, inside `#if SPIO_CUDA`, and
# CUDA's vector types where a host compiler finds them.
ALLOWED_SYSTEM_HEADERS = {"cuda_fp16.h", "cuda_bf16.h", "vector_types.h"}
# Beyond the project's flags: the conversions a header must not make in every user's TU.
STRICT_WARNINGS = ("-Wshadow", "-Wconversion", "-Wsign-conversion")
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
        lambda source: _cxx.check_syntax(
            cxx, source, include_dirs=(_cxx.INCLUDE_DIR,), flags=STRICT_WARNINGS
        ),
        sources,
    )
    return dict(zip(HEADERS, results, strict=True))


def test_the_umbrella_includes_every_header() -> None:
    umbrella = (_cxx.INCLUDE_DIR / "spio" / "spio.h").read_text()
    included = set(re.findall(r'^#include "(spio/[\w/]+\.h)"', umbrella, re.MULTILINE))
    top_level = {header for header in HEADERS if header.count("/") == 1} - {"spio/spio.h"}
    assert top_level <= included


@pytest.mark.parametrize("header", HEADERS)
def test_compiles_alone(header: str, standalone: dict[str, _cxx.Result]) -> None:
    """The header includes what it uses and compiles cleanly with the warning flags, the
    conversion warnings too (regression, N1: cursor.h's array bound was an int)."""
    result = standalone[header]
    assert result.ok, result.describe()


@pytest.mark.parametrize("header", DEVICE_HEADERS)
def test_device_header_under_a_host_compiler_says_so(header: str, cxx: str, tmp_path: Path) -> None:
    """Regression (P6): the first error names the problem, not a missing cuda_fp16.h."""
    source = tmp_path / "host.cpp"
    source.write_text(f'#include "{header}"\n')
    result = _cxx.check_syntax(cxx, source, include_dirs=(_cxx.INCLUDE_DIR,))
    assert not result.ok
    first_error = next(line for line in result.output.splitlines() if "error" in line)
    assert "spio's .cuh headers are device code (nvcc, NVRTC)" in first_error, result.describe()


HOST_LAUNCHER = """{first}
{second}
struct I : spio::Dim<I> {{
    using spio::Dim<I>::Dim;
}};
using Cells = spio::Tensor<uint4, spio::DimInfo<I, 4, 1>>;
int main() {{
    uint4 cell[Cells::storage_size()] = {{}};
    Cells(cell)[I(3)]->x = 0;
    float2 pair = make_float2(1.0f, 2.0f);
    return static_cast<int>(cell[3].x + static_cast<unsigned>(pair.x)) - 1;
}}
"""


@pytest.mark.parametrize("spio_first", [True, False], ids=["spio-first", "cuda-first"])
def test_host_launcher_includes_cuda_runtime(spio_first: bool, cxx: str, tmp_path: Path) -> None:
    """Regression (B8): a host .cpp built with `-include types.h` (spio first) may include
    <cuda_runtime.h>: the vector types are CUDA's, not redefined by spio/dtypes.h."""
    cuda_include = _cxx.cuda_toolkit_include_dir()
    if cuda_include is None:
        pytest.skip("no CUDA toolkit headers (CUDA_HOME, CUDA_PATH, /usr/local/cuda)")
    spio, cuda = '#include "spio/spio.h"', "#include <cuda_runtime.h>"
    first, second = (spio, cuda) if spio_first else (cuda, spio)
    source = tmp_path / "launcher.cpp"
    source.write_text(HOST_LAUNCHER.format(first=first, second=second))
    binary = tmp_path / "launcher"
    includes = _cxx.include_flags((_cxx.INCLUDE_DIR, cuda_include))
    result = _cxx.run([cxx, _cxx.STANDARD, *_cxx.WARNINGS, *includes, source, "-o", binary])
    assert result.ok, result.describe()
    assert _cxx.run([binary]).ok


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
