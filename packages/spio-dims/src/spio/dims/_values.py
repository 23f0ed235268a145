"""Checks of the integers that become template arguments (sizes, strides, fold factors)."""

from __future__ import annotations

from ._errors import DimsError, SpecTypeError

# Sizes and strides are `int` template arguments of the C++ library.
MAX_INT = 2**31 - 1


def check_positive_int(value: object, what: str) -> int:
    """Return `value` if it is an int in [1, 2**31 - 1]; raise SpecTypeError or DimsError."""
    number = require_int(value, what)
    if not 1 <= number <= MAX_INT:
        raise DimsError(f"{what} is {number}; allowed: an integer from 1 to {MAX_INT}")
    return number


def require_int(value: object, what: str) -> int:
    """Return `value` if it is an int (and not a bool), else raise SpecTypeError."""
    # bool is an int subclass, but Dims(i=True) is a mistake, never a size of 1.
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecTypeError(f"{what} must be an int; got {type(value).__name__} {value!r}")
    return value


def check_bound(value: int, what: str) -> int:
    """Return a computed size or stride if it fits an int template argument, else raise."""
    if value > MAX_INT:
        raise DimsError(f"{what} is {value}, which exceeds the largest allowed, {MAX_INT}")
    return value
