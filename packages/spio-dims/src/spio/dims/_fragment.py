"""Fragment: a warp's share of a tensor-core (mma.sync) operand, held in registers."""

from __future__ import annotations

from dataclasses import dataclass

from ._dtype import DType, as_dtype
from ._errors import DtypeError, SpecError
from ._names import check_spec_name, split_dims_key

SHAPES = {"m16n8k8": "spio::mma::M16N8K8", "m16n8k16": "spio::mma::M16N8K16"}
OPERANDS = {"a": "spio::mma::OperandA", "b": "spio::mma::OperandB", "c": "spio::mma::OperandC"}
# The element types that mma.sync takes for each operand at these shapes.
OPERAND_DTYPES = {
    "a": (DType.half, DType.bfloat16),
    "b": (DType.half, DType.bfloat16),
    "c": (DType.float,),
}


@dataclass(frozen=True)
class Fragment:
    """Declare a tensor-core fragment type: one operand of an `mma.sync` instruction.

    `Fragment("AFrag", "m16n8k16.a", dtype.half, "i", "k")` gives
    `spio::mma::Fragment<spio::mma::M16N8K16, spio::mma::OperandA, __half, I, K>`.

    `kind` is `<shape>.<operand>`: shapes `m16n8k8`, `m16n8k16`; operands `a`, `b`
    (dtype `half` or `bfloat16`) and `c` (dtype `float`). `row_dim` and `col_dim` are the
    fragment's row and column dimensions: two different dimensions, not folds (`i16`, or a
    named fold), since the lane maps count single rows and columns. A Fragment (or its
    name) can be the dtype of a Tensor, which makes a register tile of fragments. Fragments
    need the device header, so a header that declares one includes `spio/spio.cuh`.
    """

    name: str
    kind: str
    dtype: DType
    row_dim: str
    col_dim: str

    def __post_init__(self) -> None:
        check_spec_name(self.name, "fragment name")
        _, operand = _split_kind(self.kind)
        object.__setattr__(self, "dtype", as_dtype(self.dtype, f"dtype of fragment {self.name!r}"))
        allowed = OPERAND_DTYPES[operand]
        if self.dtype not in allowed:
            raise DtypeError(
                f"fragment {self.name!r} ({self.kind}) has dtype {self.dtype.name}; operand "
                f"{operand!r} takes {' or '.join(d.name for d in allowed)}"
            )
        for role, key in (("row", self.row_dim), ("column", self.col_dim)):
            base, factor = split_dims_key(key)
            if factor > 1:
                # The lane maps count rows and columns in elements: I16(5) would stand for I(80).
                raise SpecError(
                    f"fragment {self.name!r} has the {role} dimension {key!r}, a fold of "
                    f"{base!r}; a fragment's rows and columns are dimensions, like {base!r}"
                )
        if self.row_dim == self.col_dim:
            raise SpecError(
                f"fragment {self.name!r} has row and column dimension {self.row_dim!r}; "
                "they must differ"
            )

    @property
    def shape(self) -> str:
        """Return the mma shape (`m16n8k16`)."""
        return self.kind.split(".")[0]

    @property
    def operand(self) -> str:
        """Return the operand (`a`, `b` or `c`)."""
        return self.kind.split(".")[1]

    def dimension_keys(self) -> tuple[str, ...]:
        """Return the Dims keys this spec uses."""
        return (self.row_dim, self.col_dim)


def _split_kind(kind: object) -> tuple[str, str]:
    allowed = ", ".join(f"{shape}.{operand}" for shape in SHAPES for operand in OPERANDS)
    if isinstance(kind, str):
        shape, dot, operand = kind.partition(".")
        if dot and shape in SHAPES and operand in OPERANDS:
            return shape, operand
    raise SpecError(f"unknown fragment kind {kind!r}; allowed: {allowed}")
