"""The shape of one matrix multiply C = A @ B: sizes, element type and A's and B's memory
orders."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Dtype = Literal["float16", "bfloat16"]
BLayout = Literal["kn", "nk"]
ALayout = Literal["mk", "km"]

#: The element types of A, B and C (the products accumulate in float32).
DTYPES: tuple[str, ...] = ("float16", "bfloat16")
#: B's memory orders: "kn" is K x N row-major (torch.matmul(a, b)); "nk" is N x K row-major,
#: B's transpose (torch.nn.functional.linear(a, w) computes a @ w.T with w of shape N x K).
B_LAYOUTS: tuple[str, ...] = ("kn", "nk")
#: A's memory orders: "mk" is M x K row-major; "km" is K x M row-major, A's transpose (the
#: gradient of a weight, grad_output^T @ input, takes grad_output so, with no copy).
A_LAYOUTS: tuple[str, ...] = ("mk", "km")
#: Elements in one 16-byte vector: rows of A, B and C move in whole vectors, so the sizes
#: along rows (K for an "mk" A and an "nk" B, M for a "km" A, N for C and a "kn" B) are
#: multiples of it.
VECTOR = 8
#: Offsets inside the kernel are 32-bit: every matrix stays below 2**31 elements.
MAX_ELEMENTS = 2**31 - 1

_ELEMENT_BYTES = 2
#: What makes m or k a row length (n always is: C's rows), for the error message.
_WHY_ROW_SIZE = {"m": " with a_layout 'km'", "k": " with a_layout 'mk' or b_layout 'nk'"}


def _check_size(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {value!r} ({type(value).__name__})")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return value


@dataclass(frozen=True)
class MatmulParams:
    """C (m x n) = A (m x k) @ B (k x n) (+ bias), every matrix row-major and dense.

    A is m x k when a_layout is "mk", and k x m (A's transpose, read transposed) when it is
    "km". B is k x n when b_layout is "kn" (torch.matmul(a, b)) and n x k when it is "nk"
    (the weight of torch.nn.functional.linear, which computes a @ w.T). C is m x n, of the
    same dtype as A and B; the products accumulate in float32. Every row is whole 16-byte
    vectors: n is a multiple of 8, and so is k where A is m x k or B is n x k, and m where A
    is k x m (`row_sizes`); with A as k x m and B as k x n, k may be anything. Each matrix stays
    below 2**31 elements. bias: the kernel adds a vector of n elements of dtype (a linear
    layer's bias) to every row of C, in float32 before C rounds. Every field is validated on
    construction: a wrong type raises TypeError, a value out of range ValueError, both naming
    the field, the value and what is allowed.
    """

    m: int
    n: int
    k: int
    dtype: Dtype = "float16"
    b_layout: BLayout = "kn"
    a_layout: ALayout = "mk"
    bias: bool = False

    def __post_init__(self) -> None:
        for name in ("m", "n", "k"):
            _check_size(name, getattr(self, name))
        if not isinstance(self.bias, bool):
            raise TypeError(f"bias must be a bool, got {self.bias!r} ({type(self.bias).__name__})")
        if self.a_layout not in A_LAYOUTS:
            raise ValueError(
                f"a_layout must be one of {A_LAYOUTS} ('mk': A is m x k; 'km': A is k x m), "
                f"got {self.a_layout!r}"
            )
        for name in self.row_sizes:
            value = getattr(self, name)
            if value % VECTOR != 0:
                layout = _WHY_ROW_SIZE.get(name, "")
                raise ValueError(
                    f"{name} must be a multiple of {VECTOR}{layout} (rows move as 16-byte "
                    f"vectors), got {value}"
                )
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}, got {self.dtype!r}")
        if self.b_layout not in B_LAYOUTS:
            raise ValueError(
                f"b_layout must be one of {B_LAYOUTS} ('kn': B is k x n; 'nk': B is n x k), "
                f"got {self.b_layout!r}"
            )
        for name, shape in (("A", self.a_shape), ("B", self.b_shape), ("C", self.c_shape)):
            if shape[0] * shape[1] > MAX_ELEMENTS:
                raise ValueError(
                    f"{name} ({shape[0]} x {shape[1]}) has more than {MAX_ELEMENTS} elements; "
                    "the kernel's offsets are 32-bit"
                )

    @property
    def row_sizes(self) -> tuple[str, ...]:
        """The sizes that are the length of some matrix's rows, so multiples of VECTOR: n
        (C's rows), k where A is m x k or B is n x k, m where A is k x m."""
        sizes = ["n"]
        if self.a_layout == "mk" or self.b_layout == "nk":
            sizes.append("k")
        if self.a_layout == "km":
            sizes.append("m")
        return tuple(sizes)

    @property
    def a_shape(self) -> tuple[int, int]:
        """A's shape in memory: m x k ("mk") or k x m ("km")."""
        return (self.m, self.k) if self.a_layout == "mk" else (self.k, self.m)

    @property
    def b_shape(self) -> tuple[int, int]:
        """B's shape in memory: k x n ("kn") or n x k ("nk")."""
        return (self.k, self.n) if self.b_layout == "kn" else (self.n, self.k)

    @property
    def c_shape(self) -> tuple[int, int]:
        """C's shape: m x n."""
        return (self.m, self.n)

    @property
    def flops(self) -> int:
        """Floating-point operations of the multiply: a multiply and an add per product."""
        return 2 * self.m * self.n * self.k

    @property
    def compulsory_bytes(self) -> int:
        """Bytes every kernel must move to or from DRAM: A, B (and the bias) read, C written
        once."""
        matrices = self.m * self.k + self.k * self.n + self.m * self.n
        return _ELEMENT_BYTES * (matrices + self.n * self.bias)
