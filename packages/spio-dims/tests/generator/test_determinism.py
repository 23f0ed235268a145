"""Same specs, same bytes: across processes, hash seeds and creation orders."""

from __future__ import annotations

import os
import subprocess
import sys

from spio.dims import Checkerboard, Dim, Dims, Fold, Fragment, Swizzle, Tensor, dtype, generate

SCRIPT = """
from spio.dims import *
specs = [
    Fold("warp_j", "j", 32), Fold("block_i", "i", 128), Dim("zeta"), Dim("alpha"),
    Tensor("A", dtype.uint4, Dims(k16=4, i=64, k8=2), constant=True),
    Tensor("S", dtype.uint4, Dims(ping=2, k16=2, i16=8, checkers=32)),
    Checkerboard("SmemChecker", "i", "k8", "checkers"),
    Swizzle("SmemSwizzle", "i", "k8", "swizzle"),
    Fragment("CFrag", "m16n8k16.c", dtype.float, "i", "j"),
    Tensor("CTile", "CFrag", Dims(i16=2, j8=4, j2=4, j=2)),
]
print(generate(specs), end="")
"""


def specs_in_another_creation_order() -> list[object]:
    # The same values, created in another order and through other spellings.
    c_frag = Fragment("CFrag", "m16n8k16.c", "float", "i", "j")  # type: ignore[arg-type]
    alpha, zeta = Dim("alpha"), Dim("zeta")
    block_i = Fold("block_i", "i", 128)
    warp_j = Fold("warp_j", "j", 32)
    return [
        warp_j,
        block_i,
        zeta,
        alpha,
        Tensor("A", "uint4", Dims.from_items([("k16", 4), ("i", 64), ("k8", -1)]), constant=True),
        Tensor("S", dtype.uint4, Dims(ping=2, k16=2, i16=8, checkers=32)),
        Checkerboard("SmemChecker", "i", "k8", "checkers", banks=8),
        Swizzle("SmemSwizzle", "i", "k8", "swizzle", cells=8),
        c_frag,
        Tensor("CTile", "CFrag", Dims(i16=2, j8=4, j2=-1, j=-1)),
    ]


def test_same_bytes_under_every_hash_seed() -> None:
    outputs = set()
    for seed in ("0", "1", "12345"):
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [sys.executable, "-c", SCRIPT],
            capture_output=True,
            text=True,
            check=True,
            env=environment,
        )
        outputs.add(result.stdout)
    assert len(outputs) == 1
    assert outputs.pop() == generate(specs_in_another_creation_order())  # type: ignore[arg-type]


def test_equal_specs_are_equal_values_and_cache_keys() -> None:
    first = specs_in_another_creation_order()
    second = specs_in_another_creation_order()
    assert first == second
    assert {tuple(first): "header"}[tuple(second)] == "header"


def test_same_spec_twice_same_bytes() -> None:
    specs = specs_in_another_creation_order()
    assert generate(specs) == generate(specs)  # type: ignore[arg-type]
