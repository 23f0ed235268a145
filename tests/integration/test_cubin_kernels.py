"""tools/cubin_kernels.py: registers and stack frames read from cubins, against ptxas's own
report of the same compile."""

from __future__ import annotations

import re

import pytest
from tool_module import load_tool

import spio.jit

tool = load_tool("cubin_kernels")

# Two kernels: one small, one that keeps an array on its stack (indexed at run time).
_SOURCE = r"""
extern "C" __global__ void small(float* y) { y[threadIdx.x] = 1.0f; }
extern "C" __global__ void framed(float* y, int i) {
    float a[256];
    for (int k = 0; k < 256; ++k) a[(k * i) & 255] = y[k * threadIdx.x];
    y[threadIdx.x] = a[i & 255];
}
"""
_REPORT = re.compile(
    r"Function properties for (\w+)\n.*?(\d+) bytes stack frame.*?Used (\d+) registers", re.S
)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_matches_ptxas_report(arch: str) -> None:
    options = spio.jit.CompileOptions(extra_flags=("-Xptxas=-v",))
    code = spio.jit.compile(_SOURCE, arch=arch, options=options, cache=False)
    reported = {
        name: tool.KernelResources(int(registers), int(frame))
        for name, frame, registers in _REPORT.findall(code.log)
    }
    assert set(reported) == {"small", "framed"}
    assert tool.kernel_resources(code.code) == reported
    assert reported["framed"].frame > 0


def test_refuses_what_is_not_a_cubin() -> None:
    with pytest.raises(ValueError, match="not a 64-bit ELF file"):
        tool.kernel_resources(b"// PTX\n.version 8.0\n")
