"""Typed code compiles to no more host instructions than the hand-written code it replaces.

codegen/codegen.cpp pairs `typed_<case>` with `hand_<case>`; each is compiled at -O2 to
assembly and its instructions are counted (the lines of the function that are not directives,
labels or comments). This is the host compilers' view of "zero cost"; the NVRTC PTX comparison
of tests/zero_cost is the authority for device code.
"""

from __future__ import annotations

import re
from pathlib import Path

import _cxx
import pytest

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "codegen" / "codegen.cpp"
CASES = ("subscript", "folded", "range", "step", "bounds", "compound")
# A cursor step folds the subscript offset into the pointer (so NVRTC keeps one induction
# pointer); clang peels the loop's first iteration for it, a few instructions outside the loop.
KNOWN_COSTS = {
    ("clang++", "step"): "clang peels the first iteration of a stepped loop",
    # range() clamps an end before its begin to the begin (an empty range, not 2^32 turns);
    # g++ keeps that max (xor, cmov) beside the loop's guard, which tests the same n.
    ("g++", "range"): "g++ computes range()'s clamp of a run-time end beside the loop guard",
}


@pytest.fixture(scope="session")
def assembly(cxx: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """codegen.cpp compiled by `cxx` at -O2 to assembly text."""
    output = tmp_path_factory.mktemp(f"codegen-{Path(cxx).name}") / "codegen.s"
    flags = ("-O2", "-S", "-fno-asynchronous-unwind-tables")
    includes = _cxx.include_flags((_cxx.INCLUDE_DIR, _cxx.CPP_TESTS_DIR))
    compiled = _cxx.run(
        [cxx, _cxx.STANDARD, *_cxx.WARNINGS, *flags, *includes, SOURCE, "-o", output]
    )
    if not compiled.ok:
        pytest.fail(compiled.describe())
    return output.read_text()


def instructions(assembly: str, function: str) -> list[str]:
    """The instruction lines of `function`: between its label and its .size directive."""
    start = re.search(rf"^{function}:", assembly, re.MULTILINE)
    assert start is not None, f"no function {function} in the assembly"
    end = re.compile(rf"^\s*\.size\s+{function},", re.MULTILINE).search(assembly, start.end())
    assert end is not None, f"no end of function {function} in the assembly"
    lines = (
        line.split("#", 1)[0].strip() for line in assembly[start.end() : end.start()].splitlines()
    )
    return [line for line in lines if line and not line.startswith(".") and not line.endswith(":")]


@pytest.mark.parametrize("case", CASES)
def test_typed_is_no_costlier(case: str, cxx: str, assembly: str) -> None:
    """typed_<case> has at most as many instructions as hand_<case>."""
    if (Path(cxx).name, case) in KNOWN_COSTS:
        pytest.xfail(KNOWN_COSTS[(Path(cxx).name, case)])
    typed = instructions(assembly, f"typed_{case}")
    hand = instructions(assembly, f"hand_{case}")
    assert len(typed) <= len(hand), (
        f"typed_{case}: {len(typed)} instructions, hand_{case}: {len(hand)}\n"
        + "\n".join(typed)
        + "\n---\n"
        + "\n".join(hand)
    )
