"""CompoundIndex: one linear index (a thread or block number) split into dimensions."""

from __future__ import annotations

from dataclasses import dataclass

from ._dims import Dims, Strides
from ._errors import SpecError, SpecTypeError
from ._layout import packed_layout
from ._names import check_spec_name

# init -> the C++ source type that lets device code default-construct the index.
INIT_SOURCES = {
    f"{var}.{axis}": f"spio::{var[0].upper()}{var[1:]}{axis.upper()}"
    for var in ("threadIdx", "blockIdx")
    for axis in "xyz"
}


@dataclass(frozen=True)
class CompoundIndex:
    """Declare an index type `name` that splits one linear offset into `dims`.

    `CompoundIndex("BlockIndex", Dims(i16=32, j16=32))` gives
    `using BlockIndex = spio::CompoundIndex<spio::DimInfo<I16, 32, 32>, spio::DimInfo<J16, 32, 1>>`:
    offset 33 is I16(1), J16(1). The last dimension varies fastest (row-major).

    `init` names the CUDA built-in the index comes from: one of `threadIdx.x|y|z`,
    `blockIdx.x|y|z`, or None. With it the type is `spio::CompoundIndexFrom<spio::ThreadIdxX,
    ...>` and device code can default-construct it.
    """

    name: str
    dims: Dims
    init: str | None = None

    def __post_init__(self) -> None:
        check_spec_name(self.name, "compound index name")
        if not isinstance(self.dims, Dims):
            raise SpecTypeError(
                f"dims of compound index {self.name!r} must be Dims(...); got {self.dims!r}"
            )
        if isinstance(self.init, Strides):
            raise SpecTypeError(
                f"compound index {self.name!r} got {self.init!r} as init; a CompoundIndex is "
                "packed row-major and takes no Strides (init is None or one of "
                f"{', '.join(INIT_SOURCES)})"
            )
        if self.init is not None and not (isinstance(self.init, str) and self.init in INIT_SOURCES):
            raise SpecError(
                f"init of compound index {self.name!r} is {self.init!r}; allowed: None, "
                f"{', '.join(INIT_SOURCES)}"
            )
        self.layout()

    def layout(self) -> tuple[tuple[str, int, int], ...]:
        """Return (key, size, stride) for each dimension, outermost first."""
        return packed_layout(self.dims, None, f"compound index {self.name!r}")

    def dimension_keys(self) -> tuple[str, ...]:
        """Return the Dims keys this spec uses."""
        return self.dims.keys()
