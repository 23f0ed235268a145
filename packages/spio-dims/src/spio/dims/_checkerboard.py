"""Checkerboard: the bank-conflict-free swizzle of 16-byte cells in shared memory."""

from __future__ import annotations

from dataclasses import dataclass

from ._errors import DimsError, SpecError
from ._names import check_spec_name, split_dims_key
from ._values import check_positive_int


@dataclass(frozen=True)
class Checkerboard:
    """Declare a checkerboard index `name` over (`row_dim`, `col_dim`) -> `offset_dim`.

    `Checkerboard("SmemChecker", "i", "k8", "checkers", banks=8)` gives
    `using SmemChecker = spio::CheckerboardIndex<8, I, K8, CHECKERS>`. The index maps a row
    and a pair of columns to an offset in `offset_dim` so that 16-byte cells read along a
    row or along a column fall in distinct shared-memory banks.

    The three dimensions are Dims keys and must differ. `banks` is the number of 16-byte
    cells in one row of banks, a power of two from 2 to 256 (8 covers 128 bytes, all 32
    four-byte banks).
    """

    name: str
    row_dim: str
    col_dim: str
    offset_dim: str
    banks: int = 8

    def __post_init__(self) -> None:
        check_spec_name(self.name, "checkerboard name")
        keys = self.dimension_keys()
        for key in keys:
            split_dims_key(key)
        if len(set(keys)) != len(keys):
            raise SpecError(
                f"checkerboard {self.name!r} uses {', '.join(map(repr, keys))}; its row, "
                "column and offset dimensions must all differ"
            )
        banks = check_positive_int(self.banks, f"banks of checkerboard {self.name!r}")
        if banks < 2 or banks > 256 or banks & (banks - 1):
            raise DimsError(
                f"banks of checkerboard {self.name!r} is {banks}; allowed: a power of two "
                "from 2 to 256"
            )

    def dimension_keys(self) -> tuple[str, ...]:
        """Return the Dims keys this spec uses."""
        return (self.row_dim, self.col_dim, self.offset_dim)
