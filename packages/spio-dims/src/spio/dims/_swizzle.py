"""Swizzle: the XOR swizzle of rows of 16-byte cells that TMA writes (32, 64, 128 bytes)."""

from __future__ import annotations

from dataclasses import dataclass

from ._errors import DimsError, SpecError
from ._names import check_spec_name, split_dims_key
from ._values import require_int

# Cells of 16 bytes in a swizzled row: the 32-, 64- and 128-byte swizzles of TMA.
CELLS = (2, 4, 8)


@dataclass(frozen=True)
class Swizzle:
    """Declare a swizzle index `name` over (`row_dim`, `col_dim`) -> `offset_dim`.

    `Swizzle("SmemSwizzle", "i", "k8", "swizzle", cells=8)` gives
    `using SmemSwizzle = spio::SwizzleIndex<8, I, K8, SWIZZLE>`. The index maps a row and a
    column of `cells` 16-byte cells to an offset in `offset_dim`, XORing the column with the
    row's bank line, so that cells read along a column or along a bank line fall in
    distinct shared-memory banks. It is the layout TMA writes with the 32-, 64- and 128-byte
    swizzles.

    The three dimensions are Dims keys and must differ. `cells` is the width of a row in
    16-byte cells: 2, 4 or 8 (default 8, the 128-byte swizzle).
    """

    name: str
    row_dim: str
    col_dim: str
    offset_dim: str
    cells: int = 8

    def __post_init__(self) -> None:
        check_spec_name(self.name, "swizzle name")
        keys = self.dimension_keys()
        for key in keys:
            split_dims_key(key)
        if len(set(keys)) != len(keys):
            raise SpecError(
                f"swizzle {self.name!r} uses {', '.join(map(repr, keys))}; its row, "
                "column and offset dimensions must all differ"
            )
        cells = require_int(self.cells, f"cells of swizzle {self.name!r}")
        if cells not in CELLS:
            raise DimsError(
                f"cells of swizzle {self.name!r} is {cells}; allowed: 2, 4 or 8 (rows of "
                "32, 64 or 128 bytes)"
            )

    def dimension_keys(self) -> tuple[str, ...]:
        """Return the Dims keys this spec uses."""
        return (self.row_dim, self.col_dim, self.offset_dim)
