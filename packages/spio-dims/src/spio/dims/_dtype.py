"""Element types: the closed set of `dtype.X` names and their C++ spellings."""

from __future__ import annotations

import enum

from ._errors import DtypeError


class _ByName(enum.EnumMeta):
    """`dtype["name"]` raises DtypeError listing the names, not a bare KeyError."""

    def __getitem__(cls, name: str) -> DType:  # type: ignore[override]
        try:
            return super().__getitem__(name)
        except KeyError:
            raise DtypeError(f"unknown dtype {name!r}; allowed: {allowed_dtypes()}") from None


class DType(enum.Enum, metaclass=_ByName):
    """Name an element type of a Tensor or a Fragment; the value is its C++ spelling.

    Reached as `dtype.float`, `dtype.uint4`, ... (`dtype` is this enumeration), or by name
    with `dtype["half"]`. The set is closed: the C++ library defines or imports each one.
    """

    float = "float"
    double = "double"
    half = "__half"
    half2 = "__half2"
    half8 = "spio::half8"
    bfloat16 = "__nv_bfloat16"
    bfloat162 = "__nv_bfloat162"
    bfloat168 = "spio::bfloat168"
    int32 = "int"
    uint32 = "unsigned"
    int64 = "long long"
    uint64 = "unsigned long long"
    float2 = "float2"
    float4 = "float4"
    int4 = "int4"
    uint2 = "uint2"
    uint4 = "uint4"

    @property
    def cpp(self) -> str:
        """Return the C++ spelling of this type (`__half` for `dtype.half`)."""
        return str(self.value)

    def __repr__(self) -> str:
        return f"dtype.{self.name}"


dtype: type[DType] = DType

DTYPE_NAMES = frozenset(DType.__members__)


def as_dtype(value: object, what: str = "dtype") -> DType:
    """Return `value` as a DType: a DType itself, or the name of one ("float", "uint4").

    Raise DtypeError for anything else, listing the names that are allowed.
    """
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value in DType.__members__:
        return DType.__members__[value]
    raise DtypeError(f"unknown {what} {value!r}; allowed: {allowed_dtypes()}")


def allowed_dtypes() -> str:
    """Return the dtype names as a comma-separated list for error messages."""
    return ", ".join(DType.__members__)
