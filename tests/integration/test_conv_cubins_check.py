"""tools/conv_cubins_check.py's code digest: the same code whatever else the cubin holds."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tool_module import load_tool

import spio.jit

tool = load_tool("conv_cubins_check")

KERNEL = """
extern "C" __global__ void scale(float* data, float by) {
    data[threadIdx.x] *= by;
}
"""
# The same kernel beside two constants it never reads, declared in the other order: another
# symbol table and constant data, the same code (as when a kernel's code moves between
# functions and their templates' constants are instantiated in another order).
FIRST_SECOND = "__device__ const int first = 1;\n__device__ const int second = 2;\n"
SECOND_FIRST = "__device__ const int second = 2;\n__device__ const int first = 1;\n"
# Other code.
OTHER = KERNEL.replace("*= by", "+= by")


def _cubin(source: str) -> bytes:
    return spio.jit.compile(source, arch="sm_90", cache=False).cubin


def test_the_code_digest_ignores_what_the_code_does_not_use() -> None:
    one, other = _cubin(FIRST_SECOND + KERNEL), _cubin(SECOND_FIRST + KERNEL)
    assert hashlib.sha256(one).digest() != hashlib.sha256(other).digest()
    assert tool.code_digest(one) == tool.code_digest(other)


def test_the_code_digest_tells_other_code_apart() -> None:
    assert tool.code_digest(_cubin(KERNEL)) != tool.code_digest(_cubin(OTHER))


def _hashes(rows: dict[str, list[object]]) -> dict[str, object]:
    return {"digests": dict.fromkeys(tool.PASSES, "d"), **{name: rows for name in tool.PASSES}}


def test_compare_expects_exactly_the_marked_configs_to_change(tmp_path: Path) -> None:
    geometry = "LaunchGeometry(grid=1, block=32, shared_mem=0)"
    old = _hashes({"a": ["x", "code", geometry], "b": ["y", "code", geometry]})
    marked_changed = _hashes(
        {"a": ["x", "code", geometry, []], "b": ["z", "new", geometry, ["MARK"]]}
    )
    unmarked_changed = _hashes(
        {"a": ["w", "new", geometry, []], "b": ["y", "code", geometry, ["MARK"]]}
    )
    paths = {}
    for name, hashes in (("old", old), ("good", marked_changed), ("bad", unmarked_changed)):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(hashes))
    assert tool.compare(str(paths["old"]), str(paths["good"])) == 1  # some code changed
    assert tool.compare(str(paths["old"]), str(paths["good"]), "MARK") == 0
    assert tool.compare(str(paths["old"]), str(paths["bad"]), "MARK") == 1
