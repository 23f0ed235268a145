"""Dims and Strides: the ordered (dimension -> number) lists of tensors and indices."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from ._errors import DimsError, SpecTypeError
from ._names import split_dims_key
from ._values import MAX_INT, check_positive_int, require_int

DERIVE = -1


def _pairs(items: Iterable[tuple[str, int]], what: str) -> tuple[tuple[str, int], ...]:
    if isinstance(items, str | bytes) or not isinstance(items, Iterable):
        raise SpecTypeError(
            f"{what} items are an iterable of (key, int) pairs, like [('i', 4)]; got {items!r}"
        )
    pairs: list[tuple[str, int]] = []
    seen: set[str] = set()
    for item in items:
        if not (isinstance(item, tuple) and len(item) == 2):
            raise SpecTypeError(f"{what} items are (key, int) pairs; got {item!r}")
        key, number = item
        split_dims_key(key)
        if key in seen:
            raise DimsError(f"duplicate dimension {key!r} in {what}; each key may appear once")
        seen.add(key)
        pairs.append((key, number))
    return tuple(pairs)


def _resolve_sizes(pairs: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    """Check sizes and fold consistency; replace each -1 by its derived size."""
    if not pairs:
        raise DimsError("Dims needs at least one dimension; got none")
    sizes: dict[str, int] = {}
    folds: dict[str, list[tuple[int, str]]] = {}
    for key, size in pairs:
        require_int(size, f"size of {key!r}")
        if size != DERIVE and not 1 <= size <= MAX_INT:
            raise DimsError(
                f"size of {key!r} is {size}; allowed: an integer from 1 to {MAX_INT}, or -1 "
                "to derive it from a larger fold of the same dimension"
            )
        sizes[key] = size
        base, factor = split_dims_key(key)
        folds.setdefault(base, []).append((factor, key))
    for base, members in folds.items():
        members.sort(reverse=True)
        outer_key = members[0][1]
        if sizes[outer_key] == DERIVE:
            raise DimsError(
                f"size of {outer_key!r} is -1, but these Dims have no larger fold of "
                f"{base!r} to derive it from; -1 is allowed only below a larger fold, "
                "like k in Dims(k8=4, k=-1)"
            )
        _check_nesting(base, members, sizes, where="", derivable=True)
    return tuple((key, sizes[key]) for key, _ in pairs)


def check_named_folds_nest(
    dims: Dims, named_folds: Mapping[str, tuple[str, int]], owner: str
) -> None:
    """Check that the folds of each dimension in `dims` nest, the named folds among them.

    `named_folds` maps a named fold's key to its (dimension, factor): `block_i` -> ("i", 64).
    Dims alone cannot tell that `block_i` folds `i`, so `Dims(block_i=2, i=3)` passes there;
    here it raises DimsError naming `owner`, as `Dims(i64=2, i=3)` does on its own.
    """
    if not any(key in named_folds for key in dims):
        return
    sizes = dict(dims.items)
    folds: dict[str, list[tuple[int, str]]] = {}
    for key in dims:
        base, factor = named_folds[key] if key in named_folds else split_dims_key(key)
        folds.setdefault(base, []).append((factor, key))
    for base, members in folds.items():
        # Coarsest first; folds of one factor stay in the order of the Dims, for the message.
        members.sort(key=lambda member: -member[0])
        # A -1 was derived when the Dims were made, where named folds are not known yet.
        _check_nesting(base, members, sizes, where=f"{owner}: ", derivable=False)


def _check_nesting(
    base: str,
    members: list[tuple[int, str]],
    sizes: dict[str, int],
    where: str,
    derivable: bool,
) -> None:
    """Check consecutive folds of `base` (factor, key), coarsest first; derive -1 sizes."""
    outer_factor, outer_key = members[0]
    for inner_factor, inner_key in members[1:]:
        _check_fold_pair(
            base, (outer_key, outer_factor), (inner_key, inner_factor), sizes, where, derivable
        )
        outer_factor, outer_key = inner_factor, inner_key


def _check_fold_pair(
    base: str,
    outer: tuple[str, int],
    inner: tuple[str, int],
    sizes: dict[str, int],
    where: str,
    derivable: bool,
) -> None:
    (outer_key, outer_factor), (inner_key, inner_factor) = outer, inner
    # Subscripting splits a logical coordinate across the folds of its dimension, so the
    # next finer fold must tile exactly one unit of the coarser one.
    if outer_factor == inner_factor:
        # Only a named fold can share a factor: anonymous keys of one factor are one key.
        raise DimsError(
            f"{where}folds {outer_key!r} and {inner_key!r} of {base!r} both count "
            f"{outer_factor} {base.upper()}; the folds of {base!r} in one Dims need distinct "
            "factors that divide each other"
        )
    if outer_factor % inner_factor:
        raise DimsError(
            f"{where}fold {inner_key!r} does not divide {outer_key!r}: {outer_factor} is not a "
            f"multiple of {inner_factor}; the folds of {base!r} in one Dims must divide each "
            "other, like k16, k8 and k"
        )
    expected = outer_factor // inner_factor
    given = sizes[inner_key]
    if given == DERIVE:
        sizes[inner_key] = expected
    elif given != expected:
        derive = " (or -1 to derive it)" if derivable else ""
        raise DimsError(
            f"{where}inconsistent sizes of dimension {base!r}: {inner_key}={given}, but one "
            f"{outer_key.upper()} is {expected} {inner_key.upper()}, so {inner_key!r} must "
            f"have size {expected}{derive}"
        )


@dataclass(frozen=True, init=False, repr=False)
class Dims:
    """List the dimensions of a tensor or index with their sizes, outermost first.

    `Dims(k8=4, i=4, k=-1)` is K8(4) x I(4) x K(8). A key that ends in digits is a fold of
    the base dimension (`k8` is K folded by 8); the folds of one dimension must divide each
    other, and each finer fold covers exactly one unit of the next coarser one. A size of -1
    is derived from that rule (k is 8 above). Sizes are ints from 1 to 2**31 - 1.

    Equal Dims compare and hash equal; a derived size is stored resolved.
    """

    items: tuple[tuple[str, int], ...]

    def __init__(self, /, **sizes: int) -> None:
        object.__setattr__(self, "items", _resolve_sizes(_pairs(sizes.items(), "Dims")))

    @classmethod
    def from_items(cls, items: Iterable[tuple[str, int]]) -> Dims:
        """Return Dims from (key, size) pairs, for keys computed at run time."""
        dims = cls.__new__(cls)
        object.__setattr__(dims, "items", _resolve_sizes(_pairs(items, "Dims")))
        return dims

    def keys(self) -> tuple[str, ...]:
        """Return the keys, outermost first."""
        return tuple(key for key, _ in self.items)

    def __getitem__(self, key: str) -> int:
        for name, size in self.items:
            if name == key:
                return size
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return any(name == key for name, _ in self.items)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        return f"Dims({', '.join(f'{key}={size}' for key, size in self.items)})"


@dataclass(frozen=True, init=False, repr=False)
class Strides:
    """Give explicit strides, in elements, for some dimensions of a Tensor.

    `Strides(i=64)` makes I's stride 64; dimensions not listed are packed row-major inside
    the next listed one (see `Tensor`). Every key must be a dimension of the tensor. Strides
    are ints from 1 to 2**31 - 1.
    """

    items: tuple[tuple[str, int], ...]

    def __init__(self, /, **strides: int) -> None:
        object.__setattr__(self, "items", _check_strides(_pairs(strides.items(), "Strides")))

    @classmethod
    def from_items(cls, items: Iterable[tuple[str, int]]) -> Strides:
        """Return Strides from (key, stride) pairs, for keys computed at run time."""
        strides = cls.__new__(cls)
        object.__setattr__(strides, "items", _check_strides(_pairs(items, "Strides")))
        return strides

    def keys(self) -> tuple[str, ...]:
        """Return the keys in the order given."""
        return tuple(key for key, _ in self.items)

    def get(self, key: str) -> int | None:
        """Return the stride given for `key`, or None."""
        for name, stride in self.items:
            if name == key:
                return stride
        return None

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        return f"Strides({', '.join(f'{key}={stride}' for key, stride in self.items)})"


def _check_strides(pairs: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    for key, stride in pairs:
        check_positive_int(stride, f"stride of {key!r}")
    return pairs
