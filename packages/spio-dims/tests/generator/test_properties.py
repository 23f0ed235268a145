"""Property-based tests: valid Dims always generate, the same way; invalid sizes never pass."""

from __future__ import annotations

import itertools
import re

import pytest

# The test dependency group installs hypothesis; a bare environment skips these.
pytest.importorskip("hypothesis")

from hypothesis import given, settings
from hypothesis import strategies as st

from spio.dims import Dim, Dims, DimsError, Fold, Spec, Tensor, dtype, generate

BASES = ("i", "j", "k", "lane", "ping", "c_in", "x")
MAX_INT = 2**31 - 1


@st.composite
def fold_chains(draw: st.DrawFn) -> tuple[list[tuple[str, int]], dict[str, int]]:
    """Keys and sizes of a valid Dims (sizes may be -1), and the sizes they resolve to."""
    bases = draw(st.lists(st.sampled_from(BASES), min_size=1, max_size=3, unique=True))
    items: list[tuple[str, int]] = []
    resolved: dict[str, int] = {}
    for base in bases:
        # Factors from coarse to fine, each a multiple of the next: e.g. 32, 8, 1.
        finest = draw(st.sampled_from([1, 2, 4]))
        ratios = draw(st.lists(st.integers(2, 4), max_size=2))
        factors = [finest]
        for ratio in ratios:
            factors.append(factors[-1] * ratio)
        factors.reverse()
        for position, factor in enumerate(factors):
            key = base if factor == 1 else f"{base}{factor}"
            if position == 0:
                size = draw(st.integers(1, 16))
                given_size = size
            else:
                size = factors[position - 1] // factor
                given_size = draw(st.sampled_from([size, -1]))
            items.append((key, given_size))
            resolved[key] = size
    return draw(st.permutations(items)), resolved


@settings(max_examples=150, deadline=None)
@given(fold_chains())
def test_valid_dims_always_generate_the_same_bytes(
    chain: tuple[list[tuple[str, int]], dict[str, int]],
) -> None:
    items, resolved = chain
    dims = Dims.from_items(items)
    assert dict(dims.items) == resolved
    assert dims.keys() == tuple(key for key, _ in items)
    tensor = Tensor("T", dtype.float, dims)
    first = generate([tensor])
    # An equal spec built again, from the resolved sizes, gives the same bytes.
    again = Tensor("T", dtype.float, Dims.from_items(dims.items))
    assert again == tensor
    assert hash(again) == hash(tensor)
    assert generate([again]) == first
    # Strides are packed: the innermost is 1, each other is the inner one's extent.
    layout = tensor.layout()
    assert layout[-1][2] == 1
    for (_, _, outer), (_, size, inner) in itertools.pairwise(layout):
        assert outer == size * inner


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_order_of_dim_and_fold_specs_does_not_matter(data: st.DataObject) -> None:
    names = data.draw(st.lists(st.sampled_from(BASES), min_size=1, max_size=5, unique=True))
    specs: list[Spec] = [Dim(name) for name in names]
    specs += [Fold(f"block_{name}", name, 64) for name in names[:2]]
    specs.append(Tensor("T", dtype.float, Dims(**{name: 2 for name in names})))
    shuffled = [*data.draw(st.permutations(specs[:-1])), specs[-1]]
    assert generate(shuffled) == generate(specs)


INVALID_SIZES = st.one_of(
    st.integers(max_value=0).filter(lambda size: size != -1),
    st.integers(min_value=MAX_INT + 1),
)


@settings(max_examples=150, deadline=None)
@given(fold_chains(), INVALID_SIZES, st.integers(min_value=0))
def test_an_invalid_size_always_raises(
    chain: tuple[list[tuple[str, int]], dict[str, int]], size: int, which: int
) -> None:
    items, _ = chain
    key, _ = items[which % len(items)]
    broken = [(name, size if name == key else value) for name, value in items]
    with pytest.raises(ValueError, match=re.escape(repr(key))) as caught:
        Dims.from_items(broken)
    assert isinstance(caught.value, DimsError)


@settings(max_examples=100, deadline=None)
@given(fold_chains(), st.integers(min_value=0), st.integers(1, 64))
def test_a_fold_size_off_the_ratio_always_raises(
    chain: tuple[list[tuple[str, int]], dict[str, int]], which: int, size: int
) -> None:
    items, resolved = chain
    # Finer folds have their size fixed by the next coarser fold of the same dimension.
    finer = [key for key, _ in items if _has_coarser(key, resolved)]
    if not finer:
        return
    key = finer[which % len(finer)]
    if size == resolved[key]:
        size += 1
    broken = [(name, size if name == key else value) for name, value in items]
    with pytest.raises(DimsError, match="inconsistent sizes"):
        Dims.from_items(broken)


def _has_coarser(key: str, resolved: dict[str, int]) -> bool:
    base = key.rstrip("0123456789")
    factor = int(key[len(base) :] or 1)
    return any(
        other.rstrip("0123456789") == base and int(other[len(base) :] or 1) > factor
        for other in resolved
    )
