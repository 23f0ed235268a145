"""tools/fprop_copy_skeleton.py: its variants, before any GPU work."""

from __future__ import annotations

import pytest
from tool_module import load_tool

tool = load_tool("fprop_copy_skeleton")


@pytest.mark.parametrize("name", list(tool.VARIANTS))
def test_every_variant_compiles_for_sm_90(name: str) -> None:
    macros = tool.TILE | tool.VARIANTS[name]
    code = tool.compile_skeleton(macros, "sm_90")
    kernel, threads = tool.kernel_and_threads(macros)
    assert kernel.encode() in code.cubin
    assert threads == (160 if macros.get("PC") else 128)


def test_variants_name_their_macros() -> None:
    assert tool.parse_variants(["upward:ALT=1", "tight:SPIN=200,PREFETCH=3", "as is:"]) == {
        "upward": {"ALT": 1},
        "tight": {"SPIN": 200, "PREFETCH": 3},
        "as is": {},
    }


@pytest.mark.parametrize("text", ["x:ALTERNATE=1", "x:ALT", "x:SPIN=fast"])
def test_a_field_that_is_not_a_macro_and_an_integer_is_refused(text: str) -> None:
    with pytest.raises(SystemExit, match=r"--variants: .* is not MACRO=integer"):
        tool.parse_variants([text])


def test_every_variant_fits_the_shared_memory_of_four_blocks_an_h200_sm() -> None:
    h200_shared = tool.shared_per_block(228 * 1024)
    for changes in tool.VARIANTS.values():
        assert tool.shared_bytes(tool.TILE | changes) <= h200_shared


def test_a_grid_stride_walk_launches_a_block_a_persist_chunks() -> None:
    # 128 images x 2 strips x 16 four-row chunks, 8 chunks a block.
    macros = tool.TILE | {"CHUNK_ROWS": 4, "PERSIST": 8}
    assert tool.grid_blocks(128, macros, "short") == 512
    assert tool.grid_blocks(128, tool.TILE, "walk") == 1024
    # The loading warp's walk takes one chunk a block, whatever PERSIST says.
    assert tool.grid_blocks(128, macros | {"PC": 1}, "pc") == 4096


def test_a_persist_that_does_not_divide_the_chunks_is_refused() -> None:
    with pytest.raises(SystemExit, match=r"odd: PERSIST = 3 does not divide the 2048 chunks"):
        tool.grid_blocks(128, tool.TILE | {"CHUNK_ROWS": 8, "PERSIST": 3}, "odd")
