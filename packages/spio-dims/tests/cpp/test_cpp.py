"""The C++ unit tests of the headers, built with each host compiler and run one by one.

Every `UTEST(Suite, Name)` in tests/cpp/*.cpp is one pytest test. The sources (one per concept:
dim, coordinates, tensor, cursor, compound index, checkerboard, swizzle, range, dtypes, and the
generated-code contract) compile in parallel, with -Wall -Wextra -Wpedantic -Werror, into one
binary per compiler, which runs each test by name.
"""

from __future__ import annotations

import re
from pathlib import Path

import _cxx
import pytest

HERE = Path(__file__).resolve().parent
SOURCES = sorted(HERE.glob("*.cpp"))
UTEST = re.compile(r"^UTEST\((\w+), (\w+)\)", re.MULTILINE)
NAMES = [
    f"{suite}.{name}" for source in SOURCES for suite, name in UTEST.findall(source.read_text())
]


@pytest.fixture(scope="session")
def unit_tests(cxx: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test binary built by compiler `cxx`; a compile error fails every test with its log."""
    build = tmp_path_factory.mktemp(f"cpp-{Path(cxx).name}")
    objects = [build / f"{source.stem}.o" for source in SOURCES]
    include_dirs = (_cxx.INCLUDE_DIR, _cxx.HARNESS_DIR, HERE)
    results = _cxx.parallel_map(
        lambda pair: _cxx.compile_object(
            cxx, pair[0], pair[1], include_dirs=include_dirs, flags=("-O1",)
        ),
        zip(SOURCES, objects, strict=True),
    )
    failed = [result.describe() for result in results if not result.ok]
    if failed:
        pytest.fail("\n\n".join(failed))
    binary = build / "spio_dims_tests"
    linked = _cxx.link(cxx, objects, binary)
    if not linked.ok:
        pytest.fail(linked.describe())
    return binary


@pytest.mark.parametrize("name", NAMES)
def test_cpp(name: str, unit_tests: Path) -> None:
    """One C++ test case passes."""
    result = _cxx.run([unit_tests, name])
    assert result.ok, result.describe()


def test_every_registered_test_is_collected(unit_tests: Path) -> None:
    """The binary registers exactly the tests this module collected from the sources."""
    listed = _cxx.run([unit_tests, "--list"])
    assert listed.ok, listed.describe()
    assert sorted(listed.output.split()) == sorted(NAMES)
