"""Each type-safety promise of the headers is a program that must not compile.

Every `*.cpp` here except control.cpp breaks one promise and states, in `// expect:` lines,
the words the compiler's diagnostics must contain: each line must match, and ` | ` separates
alternative wordings (g++ and clang++ phrase core-language errors differently). control.cpp holds
the valid counterpart of every case and must compile, so each case fails for its own reason.
The cases are compiled with -fsyntax-only (templates are still instantiated), in parallel.
"""

from __future__ import annotations

import re
from pathlib import Path

import _cxx
import pytest

HERE = Path(__file__).resolve().parent
CONTROL = HERE / "control.cpp"
CASES = sorted(path for path in HERE.glob("*.cpp") if path != CONTROL)
EXPECT = re.compile(r"^// expect: (.+)$", re.MULTILINE)


def expectations(case: Path) -> list[list[str]]:
    """The `// expect:` lines of a case, each as its list of alternative wordings."""
    return [
        [wording.strip() for wording in line.split(" | ")]
        for line in EXPECT.findall(case.read_text())
    ]


@pytest.fixture(scope="session")
def diagnostics(cxx: str) -> dict[Path, _cxx.Result]:
    """Compile the control and every case once per compiler, in parallel."""
    sources = [CONTROL, *CASES]
    results = _cxx.parallel_map(
        lambda source: _cxx.check_syntax(
            cxx, source, include_dirs=(_cxx.INCLUDE_DIR, _cxx.CPP_TESTS_DIR)
        ),
        sources,
    )
    return dict(zip(sources, results, strict=True))


def test_control_compiles(diagnostics: dict[Path, _cxx.Result]) -> None:
    """The valid counterparts compile cleanly with the warning flags."""
    result = diagnostics[CONTROL]
    assert result.ok, result.describe()


@pytest.mark.parametrize("case", CASES, ids=lambda path: path.stem)
def test_does_not_compile(case: Path, diagnostics: dict[Path, _cxx.Result]) -> None:
    """The case is rejected, with the expected words in the diagnostics."""
    result = diagnostics[case]
    assert not result.ok, f"{case.name} compiled, but it breaks a promise:\n{result.describe()}"
    for wordings in expectations(case):
        assert any(wording in result.output for wording in wordings), (
            f"{case.name}: the diagnostics lack {' or '.join(map(repr, wordings))}\n"
            + result.describe()
        )


@pytest.mark.parametrize("case", CASES, ids=lambda path: path.stem)
def test_case_states_its_promise_and_expectation(case: Path) -> None:
    """Every case says which promise it breaks and what the compiler must say."""
    text = case.read_text()
    assert text.startswith("// Promise: "), f"{case.name} must start with '// Promise: ...'"
    assert expectations(case), f"{case.name} has no '// expect: ...' line"
