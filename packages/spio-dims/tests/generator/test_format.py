"""Emitted headers are clang-format-clean, including declarations that must wrap.

The line breaking in spio.dims._format imitates clang-format's choices; this checks the
imitation against the real binary over random specs with names up to the length limits,
sizes up to the int limit, and every declaration shape.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Sequence

from spio.dims import (
    Checkerboard,
    CompoundIndex,
    Dims,
    Fold,
    Fragment,
    Spec,
    SpecError,
    Strides,
    Swizzle,
    Tensor,
    dtype,
    generate,
)
from spio.dims._names import MAX_DIM_NAME, MAX_SPEC_NAME, check_dim_name

HEADERS = 150
MAX_INT = 2**31 - 1


def _dim_name(rng: random.Random, taken: set[str]) -> str:
    while True:
        length = rng.choice([1, 2, 5, rng.randint(1, MAX_DIM_NAME)])
        name = rng.choice(string.ascii_lowercase) + "".join(
            rng.choice(string.ascii_lowercase + "_") for _ in range(length - 1)
        )
        try:
            check_dim_name(name)
        except SpecError:
            continue
        if name not in taken:
            taken.add(name)
            return name


def _spec_name(rng: random.Random, index: int) -> str:
    length = rng.choice([1, 8, rng.randint(2, MAX_SPEC_NAME)])
    # Mixed case: never the upper-case name of a dimension or fold.
    stem = f"Spec{index}" + "".join(rng.choice(string.ascii_letters) for _ in range(length))
    return stem[: max(length, len(f"Spec{index}"))]


def _size(rng: random.Random) -> int:
    return rng.choice([1, 2, 16, rng.randint(1, 10 ** rng.randint(1, 6))])


def random_specs(rng: random.Random) -> list[Spec]:
    taken: set[str] = set()
    dims = [_dim_name(rng, taken) for _ in range(rng.randint(1, 6))]
    specs: list[Spec] = []
    fold = Fold(_dim_name(rng, taken), rng.choice(dims), rng.randint(1, MAX_INT))
    specs.append(fold)
    for index in range(rng.randint(1, 5)):
        keys = rng.sample(dims, rng.randint(1, len(dims)))
        if rng.random() < 0.3:
            # Without its dimension: beside it, a named fold must nest, which random sizes
            # do not.
            keys = [key for key in keys if key != fold.dim] + [fold.name]
        if rng.random() < 0.5 and keys[0] != fold.name and len(keys[0]) <= MAX_DIM_NAME - 4:
            keys[0] = f"{keys[0]}{rng.choice([2, 8, 16, 1024])}"
        try:
            sizes = Dims.from_items((key, _size(rng)) for key in keys)
            kind = rng.random()
            if kind < 0.6:
                strides = Strides.from_items([(keys[-1], rng.randint(1, 9))])
                specs.append(
                    Tensor(
                        _spec_name(rng, index),
                        rng.choice(list(dtype)),
                        sizes,
                        strides if rng.random() < 0.3 else None,
                        constant=rng.random() < 0.5,
                    )
                )
            else:
                init = rng.choice([None, "threadIdx.x", "blockIdx.z"])
                specs.append(CompoundIndex(_spec_name(rng, index), sizes, init=init))
        except SpecError:
            continue  # a fold key past the length limit, strides past the int limit
    if len(dims) >= 3:
        row, col, offset = rng.sample(dims, 3)
        if len(col) < MAX_DIM_NAME:
            specs.append(Checkerboard(_spec_name(rng, 90), row, f"{col}8", offset, banks=16))
            cells = rng.choice([2, 4, 8])
            specs.append(Swizzle(_spec_name(rng, 93), row, f"{col}8", offset, cells=cells))
    if len(dims) >= 2:
        row, col = rng.sample(dims, 2)
        element = rng.choice([dtype.half, dtype.bfloat16])
        fragment = Fragment(_spec_name(rng, 91), "m16n8k16.b", element, row, col)
        specs.append(Tensor(_spec_name(rng, 92), fragment, Dims(**{row: 2})))
    return specs


def test_random_headers_are_clang_format_clean(
    formatted: Callable[[Sequence[str]], list[str]],
) -> None:
    rng = random.Random(20240601)
    headers = [generate(random_specs(rng)) for _ in range(HEADERS)]
    assert any(max(map(len, header.splitlines())) > 90 for header in headers)
    assert sum(header.count(" =\n    ") for header in headers) > 10, "few wrapped declarations"
    for header, clean in zip(headers, formatted(headers), strict=True):
        assert header == clean
    assert all(len(line) <= 100 for header in headers for line in header.splitlines())


def test_long_fold_names_wrap_like_clang_format(
    formatted: Callable[[Sequence[str]], list[str]],
) -> None:
    longest = "x" * (MAX_DIM_NAME - 1) + "y"
    specs = [Fold("f" * MAX_DIM_NAME, longest, MAX_INT), Fold("g" * MAX_DIM_NAME, "i", 64)]
    header = generate(specs)
    assert header == formatted([header])[0]
    assert "\n    : spio::Fold<" in header
