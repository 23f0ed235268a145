"""Golden headers: every tutorial lesson, the seed's matmul spec, the rest of the vocabulary.

Each case's header is compared byte for byte with a checked-in file under golden/. After an
intended change of the emitted code, regenerate them with

    SPIO_DIMS_REGEN_GOLDEN=1 .venv/bin/python -m pytest packages/spio-dims/tests/generator

and review the diff of golden/ like any other code change (the tests still fail in that
run if a header is not clang-format-clean). SPIO_DIMS_REGEN_GOLDEN is read only here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from spio.dims import (
    Checkerboard,
    CompoundIndex,
    Dim,
    Dims,
    Fold,
    Fragment,
    Generators,
    Spec,
    Strides,
    Swizzle,
    Tensor,
    dtype,
    generate,
    generate_file,
    include_dir,
)

GOLDEN = Path(__file__).parent / "golden"
LESSONS = sorted((GOLDEN / "lessons").glob("*.cpp"))
REGENERATE = os.environ.get("SPIO_DIMS_REGEN_GOLDEN") == "1"


def matmul_spec() -> Generators:
    """The matrix-multiply spec of the seed's "Typed Tensors" section, at one config."""
    m, n, k = 1024, 1024, 1024
    block_x = 128
    block_x16 = block_x // 16
    chunk_k16 = 2
    warp_m, warp_n = 64, 32

    gen = Generators()
    gen.Fold("block_i", "i", block_x)
    gen.Fold("block_j", "j", block_x)
    gen.Fold("warp_i", "i", warp_m)
    gen.Fold("warp_j", "j", warp_n)
    gen.Tensor("A", gen.dtype.uint4, gen.Dims(k16=k // 16, i=m, k8=2), constant=True)
    gen.Tensor("B", gen.dtype.uint4, gen.Dims(k16=k // 16, j=n, k8=2), constant=True)
    gen.Tensor("C", gen.dtype.uint4, gen.Dims(i=m, j8=n // 8))
    gen.Tensor(
        "SmemA",
        gen.dtype.uint4,
        gen.Dims(ping=2, k16=chunk_k16, i16=block_x16, checkers=32),
    )
    gen.Tensor(
        "SmemB",
        gen.dtype.uint4,
        gen.Dims(ping=2, k16=chunk_k16, j16=block_x16, checkers=32),
    )
    gen.Checkerboard("SmemChecker", "i", "k8", "checkers")
    gen.CompoundIndex("GlobalLoadIndex", gen.Dims(x=block_x, k8=2), init="threadIdx.x")
    gen.CompoundIndex(
        "ComputeIndex",
        gen.Dims(warp_i=block_x // warp_m, warp_j=block_x // warp_n, lane=32),
        init="threadIdx.x",
    )
    gen.Fragment("AFrag", "m16n8k16.a", gen.dtype.half, "i", "k")
    gen.Fragment("BFrag", "m16n8k16.b", gen.dtype.half, "k", "j")
    gen.Fragment("CFrag", "m16n8k16.c", gen.dtype.float, "i", "j")
    gen.Tensor("ATile", "AFrag", gen.Dims(i16=warp_m // 16, k16=chunk_k16))
    gen.Tensor("BTile", "BFrag", gen.Dims(k16=chunk_k16, j8=warp_n // 8))
    gen.Tensor("CTile", "CFrag", gen.Dims(i16=warp_m // 16, j8=warp_n // 8))
    gen.Tensor("SmemC", gen.dtype.half2, gen.Dims(j8=block_x // 8, i=block_x, j2=4))
    return gen


def vocabulary_spec() -> list[Spec]:
    """Every spec kind and option once, and names long enough to wrap every declaration."""
    b_frag = Fragment("BFragBf16", "m16n8k8.b", dtype.bfloat16, "k", "j")
    return [
        Dim("unused_but_declared"),
        Fold("a_fold_with_a_rather_long_name_x", "a_dimension_with_a_long_name_yy", 4096),
        Tensor("Scalars", "int32", Dims(n=7)),
        Tensor("Doubles", dtype.double, Dims(n=3, m=5), Strides(n=8)),
        Tensor("Wide", dtype.uint64, Dims(k16=2, k4=4, k=-1), Strides(k=2), constant=True),
        Tensor(
            "TensorWithAVeryLongNameThatForcesABreakAfterTheEqualsSign",
            dtype.bfloat168,
            Dims(a_dimension_with_a_long_name_yy=2, p16=4, q=16, r=3, s=5),
        ),
        Tensor(
            "ManyDims",
            dtype.float4,
            Dims(b=2, c=3, d=2, e=3, f=2, g=3, h=2, p=3, q=2, r=3, s=2, t=3),
        ),
        CompoundIndex("WarpIndex", Dims(a_fold_with_a_rather_long_name_x=4, lane=32)),
        CompoundIndex("BlockY", Dims(n=4), init="blockIdx.y"),
        Checkerboard("Checker16", "row", "col8", "checkers", banks=16),
        Swizzle("Swizzle64", "row", "col8", "checkers", cells=4),
        Fragment("AFragBf16", "m16n8k8.a", dtype.bfloat16, "i", "k"),
        # A Fragment object as a dtype is declared right before its first tensor.
        Tensor("BTileBf16", b_frag, Dims(k8=1, j8=4)),
        Tensor("ATileBf16", "AFragBf16", Dims(i16=2, k8=1), constant=True),
    ]


SPEC_CASES: dict[str, Callable[[], Sequence[Spec] | Generators]] = {
    "matmul": matmul_spec,
    "vocabulary": vocabulary_spec,
}


def _check(path: Path, text: str) -> None:
    if REGENERATE:
        path.write_text(text)
    assert path.is_file(), f"{path.name} is missing; run with SPIO_DIMS_REGEN_GOLDEN=1"
    assert path.read_text() == text


def _all_golden() -> list[Path]:
    return sorted(GOLDEN.glob("*.h")) + sorted((GOLDEN / "lessons").glob("*.h"))


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda path: path.stem)
def test_lesson_header_matches_golden(lesson: Path) -> None:
    _check(lesson.with_suffix(".h"), generate_file(lesson))


@pytest.mark.parametrize("name", sorted(SPEC_CASES))
def test_spec_header_matches_golden(name: str) -> None:
    _check(GOLDEN / f"{name}.h", generate(SPEC_CASES[name]()))


def test_every_lesson_of_the_tutorial_is_covered() -> None:
    assert [path.stem[:2] for path in LESSONS] == ["01", "02", "03", "04", "05"]


def test_no_golden_file_is_orphaned() -> None:
    expected = {GOLDEN / f"{name}.h" for name in SPEC_CASES}
    expected |= {lesson.with_suffix(".h") for lesson in LESSONS}
    assert set(_all_golden()) == expected


def test_golden_headers_are_clang_format_clean(
    formatted: Callable[[Sequence[str]], list[str]],
) -> None:
    texts = [path.read_text() for path in _all_golden()]
    for path, text, clean in zip(_all_golden(), texts, formatted(texts), strict=True):
        assert text == clean, f"{path.name} is not clang-format-clean"


def test_lesson_sources_are_clang_format_clean(
    formatted: Callable[[Sequence[str]], list[str]],
) -> None:
    # The lint session formats every .cpp of the packages, these fixtures included.
    texts = [path.read_text() for path in LESSONS]
    assert formatted(texts) == texts


def test_host_headers_compile_against_the_library(tmp_path: Path) -> None:
    """The contract, checked from both ends: host headers compile with the C++ library."""
    compiler = shutil.which("g++") or shutil.which("clang++")
    if compiler is None:
        pytest.skip("no host C++ compiler")
    if not (include_dir() / "spio" / "spio.h").is_file():
        pytest.skip("the C++ headers are not in this checkout")
    host = [path for path in _all_golden() if "spio/spio.cuh" not in path.read_text()]
    assert host, "every golden header needs the device headers"
    # One translation unit per header (they declare the same dimensions), compiled at once.
    jobs = []
    for index, path in enumerate(host):
        main = tmp_path / f"main{index}.cpp"
        main.write_text(f'#include "{path}"\nint main() {{ return 0; }}\n')
        command = [compiler, "-std=c++17", "-fsyntax-only", f"-I{include_dir()}", str(main)]
        jobs.append((path, subprocess.Popen(command, stderr=subprocess.PIPE, text=True)))
    for path, job in jobs:
        _, errors = job.communicate()
        assert job.returncode == 0, f"{path.name}:\n{errors}"
