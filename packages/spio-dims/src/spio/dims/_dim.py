"""Dim and Fold: the specs that declare dimension types."""

from __future__ import annotations

from dataclasses import dataclass

from ._names import check_dim_name, dim_type
from ._values import check_positive_int


@dataclass(frozen=True)
class Dim:
    """Declare the dimension `name`; its C++ type is the upper-case name.

    `Dim("i")` gives `struct I : spio::Dim<I>`. Declaring a dimension explicitly is only
    needed when no other spec uses it: every dimension that a spec mentions is declared
    anyway, once.
    """

    name: str

    def __post_init__(self) -> None:
        check_dim_name(self.name)

    @property
    def cpp_name(self) -> str:
        """Return the C++ type name (`I` for `Dim("i")`)."""
        return dim_type(self.name)


@dataclass(frozen=True)
class Fold:
    """Declare `name` as its own type for dimension `dim` folded by `stride`.

    `Fold("block_i", "i", 64)` gives `struct BLOCK_I : spio::Fold<I, 64, BLOCK_I>`: one
    BLOCK_I is 64 I. Unlike the anonymous folds spelled in `Dims` (`i64`), a named fold is a
    distinct type, so `BLOCK_I` and `WARP_I` cannot be mixed up even at equal strides. A
    `Dims` key equal to `name` refers to this fold.

    `dim` is a dimension name (not a fold); `stride` is a positive int.
    """

    name: str
    dim: str
    stride: int

    def __post_init__(self) -> None:
        check_dim_name(self.name, "fold name")
        check_dim_name(self.dim, f"dimension of fold {self.name!r}")
        check_positive_int(self.stride, f"stride of fold {self.name!r}")

    @property
    def cpp_name(self) -> str:
        """Return the C++ type name (`BLOCK_I` for `Fold("block_i", "i", 64)`)."""
        return dim_type(self.name)
