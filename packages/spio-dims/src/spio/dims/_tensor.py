"""Tensor: a typed view of memory (or registers) with named, sized, strided dimensions."""

from __future__ import annotations

from dataclasses import dataclass

from ._dims import Dims, Strides
from ._dtype import DType, allowed_dtypes
from ._errors import DimsError, DtypeError, SpecTypeError
from ._fragment import Fragment
from ._layout import packed_layout
from ._names import check_spec_name


@dataclass(frozen=True)
class Tensor:
    """Declare a tensor type `name` of elements `dtype` with dimensions `dims`.

    `Tensor("C_tile", dtype.float, Dims(i=8, j=32), Strides(i=64))` gives
    `using C_tile = spio::Tensor<float, spio::DimInfo<I, 8, 64>, spio::DimInfo<J, 32, 1>>`.

    - `dtype`: a `dtype.X`, a dtype name (`"float"`), a `Fragment`, or the name of a
      Fragment spec declared earlier in the same list (a register tile of fragments).
    - `dims`: sizes, outermost first.
    - `strides`: strides in elements for some of `dims`' keys; the others are packed
      row-major: the innermost has stride 1 and each one is the next inner one's stride
      times its size.
    - `constant`: make the element type `const`.
    """

    name: str
    dtype: DType | Fragment | str
    dims: Dims
    strides: Strides | None = None
    constant: bool = False

    def __post_init__(self) -> None:
        check_spec_name(self.name, "tensor name")
        object.__setattr__(self, "dtype", _element_type(self.dtype, self.name))
        if not isinstance(self.dims, Dims):
            raise SpecTypeError(
                f"dims of tensor {self.name!r} must be Dims(...); got {self.dims!r}"
            )
        if self.strides is not None:
            if not isinstance(self.strides, Strides):
                raise SpecTypeError(
                    f"strides of tensor {self.name!r} must be Strides(...) or None; "
                    f"got {self.strides!r}"
                )
            extra = [key for key, _ in self.strides.items if key not in self.dims]
            if extra:
                raise DimsError(
                    f"Strides of tensor {self.name!r} name {', '.join(map(repr, extra))}, "
                    f"which the tensor does not have; its dimensions are "
                    f"{', '.join(self.dims.keys())}"
                )
        if not isinstance(self.constant, bool):
            raise SpecTypeError(
                f"constant of tensor {self.name!r} must be True or False; got {self.constant!r}"
            )
        self.layout()

    def layout(self) -> tuple[tuple[str, int, int], ...]:
        """Return (key, size, stride) for each dimension, outermost first."""
        return packed_layout(self.dims, self.strides, f"tensor {self.name!r}")

    def dimension_keys(self) -> tuple[str, ...]:
        """Return the Dims keys this spec uses."""
        return self.dims.keys()


def _element_type(value: object, tensor: str) -> DType | Fragment | str:
    if isinstance(value, DType | Fragment):
        return value
    if isinstance(value, str):
        if value in DType.__members__:
            return DType.__members__[value]
        # Any other str names a Fragment; generate() resolves it against the spec list.
        return check_spec_name(value, f"dtype of tensor {tensor!r}")
    raise DtypeError(
        f"dtype of tensor {tensor!r} is {value!r}; allowed: dtype.X ({allowed_dtypes()}), "
        "a dtype name, a Fragment, or the name of a Fragment spec"
    )
