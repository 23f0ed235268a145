"""Typed indexing costs nothing: each typed kernel has no more PTX instructions than its twin.

kernels.cu pairs each typed kernel (<case>_typed) with the hand-written index arithmetic it
replaces (<case>_hand); both compile in one NVRTC run for sm_90. An instruction is a line of
the kernel's PTX body that is not a directive, a label, a comment or a brace. A typed kernel
with more instructions than its twin fails with the PTX diff (register numbers and labels
dropped), which is the thing to fix: the headers, not this test.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable
from pathlib import Path

import _nvrtc
import pytest

KERNELS = Path(__file__).resolve().parent / "kernels.cu"
CASES = ("compound_index", "folded_loop", "cursor_loop", "projection_bounds", "mma_tile")


def _normalized(line: str, case: str) -> str:
    """Drop register numbers, labels and kernel names, so the diff shows only real changes."""
    line = re.sub(rf"{case}_(typed|hand)", "KERNEL", line)
    line = re.sub(r"\$L__BB\d+_\d+", "$L", line)
    return re.sub(r"(%[a-z]+)\d+", r"\1", line)


@functools.cache
def _ptx() -> str:
    return _nvrtc.compile_cuda(KERNELS.read_text(), arch="sm_90", name="kernels.cu").ptx


@pytest.mark.parametrize("case", CASES)
def test_typed_is_no_costlier_than_hand_written(
    case: str, record_property: Callable[[str, object], None]
) -> None:
    """The typed kernel's instruction count is at most the hand-written twin's."""
    typed = _nvrtc.ptx_instructions(_ptx(), f"{case}_typed")
    hand = _nvrtc.ptx_instructions(_ptx(), f"{case}_hand")
    record_property("ptx_instructions", {"typed": len(typed), "hand_written": len(hand)})
    if len(typed) > len(hand):
        diff = "\n".join(
            difflib.unified_diff(
                [_normalized(line, case) for line in hand],
                [_normalized(line, case) for line in typed],
                f"{case}_hand",
                f"{case}_typed",
                lineterm="",
            )
        )
        pytest.fail(
            f"{case}: typed kernel has {len(typed)} PTX instructions, hand-written {len(hand)}"
            f"\n{diff}"
        )


def test_instruction_count_skips_what_is_not_an_instruction() -> None:
    """Directives, labels, comments and braces do not count; inline-PTX blocks do."""
    ptx = """
.visible .entry demo(
    .param .u64 demo_param_0
)
{
    .reg .b32   %r<4>;
    // a comment
    ld.param.u64    %rd1, [demo_param_0];
$L__BB0_1:
    { cvt.rn.f16x2.f32 %r1, %f2, %f1; }
    {.reg .f16 low,high;
    mov.b32 {low,high},%r1;
    cvt.f32.f16 %f3, low;}
    @%p1 bra    $L__BB0_1;  // loop
    ret;
}
"""
    assert _nvrtc.ptx_instructions(ptx, "demo") == [
        "ld.param.u64    %rd1, [demo_param_0];",
        "cvt.rn.f16x2.f32 %r1, %f2, %f1;",
        "mov.b32 {low,high},%r1;",
        "cvt.f32.f16 %f3, low;",
        "@%p1 bra    $L__BB0_1;",
        "ret;",
    ]
