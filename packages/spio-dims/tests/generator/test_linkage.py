"""Generated headers of different kernels link into one program (the one definition rule).

Regression (B5): two kernels whose headers give BLOCK_J and BlockIndex different strides
used to share one instance of the cursor's subscript by its mangled name, so at -O0 one
kernel computed with the other's strides. The declarations are now in an unnamed namespace,
so each translation unit keeps its own.
"""

from __future__ import annotations

from pathlib import Path

import _cxx
import pytest

from spio.dims import CompoundIndex, Dims, Fold, Tensor, dtype, generate

KERNEL = """#include "types{block}.h"
int kernel{block}_block_offset(float* c, int block) {{
    return static_cast<int>(C(c)[BlockIndex(block)].get() - c);
}}
"""
MAIN = """#include <cstdio>
int kernel64_block_offset(float* c, int block);
int kernel128_block_offset(float* c, int block);
int main() {
    static float c[4 * 256];
    const int a = kernel64_block_offset(c, 1), b = kernel128_block_offset(c, 1);
    std::printf("block 1 at %d (want 64) and %d (want 128)\\n", a, b);
    return !(a == 64 && b == 128);
}
"""


def kernel_header(block: int) -> str:
    """One kernel's types: C is 4 x 256, BlockIndex walks its row in blocks of `block`."""
    return generate(
        [
            Fold("block_j", "j", block),
            Tensor("C", dtype.float, Dims(i=4, j=256)),
            CompoundIndex("BlockIndex", Dims(block_j=256 // block)),
        ]
    )


@pytest.mark.parametrize("order", [(64, 128), (128, 64)], ids=["64-first", "128-first"])
def test_two_kernels_headers_link_into_one_program(
    order: tuple[int, int], cxx: str, tmp_path: Path
) -> None:
    """Each kernel's subscript uses its own strides, whichever object the linker sees first."""
    objects = []
    for block in order:
        (tmp_path / f"types{block}.h").write_text(kernel_header(block))
        source = tmp_path / f"kernel{block}.cpp"
        source.write_text(KERNEL.format(block=block))
        objects.append(tmp_path / f"kernel{block}.o")
        # -O0 keeps the subscript an out-of-line function, as the linker then picks one.
        compiled = _cxx.compile_object(
            cxx, source, objects[-1], include_dirs=(_cxx.INCLUDE_DIR,), flags=("-O0",)
        )
        assert compiled.ok, compiled.describe()
    main = tmp_path / "main.cpp"
    main.write_text(MAIN)
    objects.append(tmp_path / "main.o")
    compiled = _cxx.compile_object(cxx, main, objects[-1])
    assert compiled.ok, compiled.describe()
    binary = tmp_path / "program"
    linked = _cxx.link(cxx, objects, binary)
    assert linked.ok, linked.describe()
    result = _cxx.run([binary])
    assert result.ok, result.describe()
