"""Layer parameters of grouped conv2d with group width 8, shared by fprop, dgrad and wgrad."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Dtype = Literal["float16", "bfloat16"]

#: The element types the kernels take for activations and weights.
DTYPES: tuple[str, ...] = ("float16", "bfloat16")
#: Channels per group: one group of one pixel is one 16-byte vector of 16-bit elements.
GROUP_WIDTH = 8
#: Groups of a whole 128-byte pixel line: the blocks of layers whose groups are a multiple of
#: it read whole lines with eight-group tiles; the other layers' heuristic tiles take whole
#: pixels or runs of them instead (fprop_pixel_groups, wgrad_pixel_groups).
LINE_GROUPS = 8
#: Kernel extents the kernels are specialised for (R and S each).
MAX_KERNEL_SIZE = 7
#: Offsets inside the kernels are 32-bit: every tensor stays below 2**31 elements.
MAX_ELEMENTS = 2**31 - 1

_ELEMENT_BYTES = 2


def _check_int(name: str, value: object, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {value!r} ({type(value).__name__})")
    if value < low or (high is not None and value > high):
        allowed = f"{low} to {high}" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be {allowed}, got {value}")
    return value


@dataclass(frozen=True)
class Conv2dGw8Params:
    """Shape of one grouped conv2d, group width 8, stride 1, dilation 1.

    Activations are NHWC (x: n x h x w x c, torch's channels_last), weights K x R x S x 8 (out
    channel, filter row, filter column, input channel within the group); in channels ==
    out channels == c, groups = c / 8. Zero padding is per side, (top, bottom, left, right),
    each 0 ... extent - 1 of its filter dimension. Every field is validated on construction:
    a wrong type raises TypeError, a value out of range ValueError, both naming the field, the
    value and what is allowed. Build one with `Conv2dGw8Params.make` to pass the padding as an
    int or a (vertical, horizontal) pair.
    """

    n: int
    c: int
    h: int
    w: int
    r: int = 3
    s: int = 3
    padding: tuple[int, int, int, int] = (1, 1, 1, 1)
    dtype: Dtype = "float16"
    has_bias: bool = False

    def __post_init__(self) -> None:
        for name in ("n", "c", "h", "w"):
            _check_int(name, getattr(self, name), 1)
        if self.c % GROUP_WIDTH != 0:
            raise ValueError(f"c must be a multiple of {GROUP_WIDTH} (group width), got {self.c}")
        _check_int("r", self.r, 1, MAX_KERNEL_SIZE)
        _check_int("s", self.s, 1, MAX_KERNEL_SIZE)
        padding = self.padding
        if not isinstance(padding, tuple) or len(padding) != 4:
            raise TypeError(
                "padding must be a tuple (top, bottom, left, right) of ints, got "
                f"{padding!r}; use Conv2dGw8Params.make for an int or a pair"
            )
        sides = ("top", "bottom", "left", "right")
        extents = (self.r, self.r, self.s, self.s)
        for side, value, extent in zip(sides, padding, extents, strict=True):
            _check_int(f"padding {side}", value, 0, extent - 1)
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}, got {self.dtype!r}")
        if not isinstance(self.has_bias, bool):
            raise TypeError(f"has_bias must be a bool, got {self.has_bias!r}")
        if self.p < 1 or self.q < 1:
            raise ValueError(
                f"output size p x q = {self.p} x {self.q} must be at least 1 x 1: h + pad_top + "
                f"pad_bottom - r + 1 and w + pad_left + pad_right - s + 1 with h={self.h}, "
                f"w={self.w}, r={self.r}, s={self.s}, padding={padding}"
            )
        largest = max(self.n * self.h * self.w * self.c, self.n * self.p * self.q * self.c)
        if largest > MAX_ELEMENTS:
            raise ValueError(
                f"n * h * w * c = {largest} elements is too large: tensors must stay below 2**31 "
                "elements (32-bit offsets); split the batch"
            )

    @classmethod
    def make(
        cls,
        n: int,
        c: int,
        h: int,
        w: int,
        r: int = 3,
        s: int = 3,
        padding: int | tuple[int, int] | tuple[int, int, int, int] = 1,
        dtype: Dtype = "float16",
        has_bias: bool = False,
    ) -> Conv2dGw8Params:
        """Build params with padding as an int (every side), a pair (vertical, horizontal) or a
        4-tuple (top, bottom, left, right)."""
        return cls(n, c, h, w, r, s, normalize_padding(padding), dtype, has_bias)

    @property
    def groups(self) -> int:
        """Number of groups, c / 8."""
        return self.c // GROUP_WIDTH

    @property
    def pad_top(self) -> int:
        return self.padding[0]

    @property
    def pad_bottom(self) -> int:
        return self.padding[1]

    @property
    def pad_left(self) -> int:
        return self.padding[2]

    @property
    def pad_right(self) -> int:
        return self.padding[3]

    @property
    def p(self) -> int:
        """Output rows: h + pad_top + pad_bottom - r + 1."""
        return self.h + self.padding[0] + self.padding[1] - self.r + 1

    @property
    def q(self) -> int:
        """Output columns: w + pad_left + pad_right - s + 1."""
        return self.w + self.padding[2] + self.padding[3] - self.s + 1

    @property
    def input_shape(self) -> tuple[int, int, int, int]:
        """NHWC shape of x (and of grad_input)."""
        return (self.n, self.h, self.w, self.c)

    @property
    def output_shape(self) -> tuple[int, int, int, int]:
        """NHWC shape of y (and of grad_output)."""
        return (self.n, self.p, self.q, self.c)

    @property
    def weight_shape(self) -> tuple[int, int, int, int]:
        """Spio's weight layout: K x R x S x 8 (out channel, r, s, in channel within group)."""
        return (self.c, self.r, self.s, GROUP_WIDTH)

    @property
    def macs(self) -> int:
        """Multiply-adds of one pass (each pass does the same number)."""
        return self.n * self.p * self.q * self.c * GROUP_WIDTH * self.r * self.s

    def compulsory_bytes(self, pass_: Literal["fprop", "dgrad", "wgrad"] = "fprop") -> int:
        """DRAM bytes a pass must move at least (TARGETS.md's bandwidth metric).

        fprop: x and w read (+ fp32 bias), y written; dgrad: grad_y and w read, grad_x
        written; wgrad: x and grad_y read, grad_w written in f32 (what Spio's wgrad writes).
        """
        activation_in = self.n * self.h * self.w * self.c * _ELEMENT_BYTES
        activation_out = self.n * self.p * self.q * self.c * _ELEMENT_BYTES
        weight_count = self.c * self.r * self.s * GROUP_WIDTH
        if pass_ == "fprop":
            bias = 4 * self.c if self.has_bias else 0
            return activation_in + activation_out + weight_count * _ELEMENT_BYTES + bias
        if pass_ == "dgrad":
            return activation_in + activation_out + weight_count * _ELEMENT_BYTES
        if pass_ == "wgrad":
            return activation_in + activation_out + weight_count * 4
        raise ValueError(f"pass_ must be 'fprop', 'dgrad' or 'wgrad', got {pass_!r}")


def check_params(params: object) -> None:
    """TypeError unless params is a Conv2dGw8Params (the specs' entries check it first, so a
    wrong argument is named rather than failing on a missing attribute)."""
    if not isinstance(params, Conv2dGw8Params):
        raise TypeError(f"params must be a Conv2dGw8Params, got {type(params).__name__}")


def check_sm_count(sm_count: object) -> int:
    """sm_count (the GPU's streaming multiprocessors, which the heuristics fill) as an int
    >= 1, else TypeError or ValueError naming it."""
    return _check_int("sm_count", sm_count, 1)


def normalize_padding(padding: object) -> tuple[int, int, int, int]:
    """Return padding as (top, bottom, left, right) from an int, a (vertical, horizontal) pair
    or a 4-tuple; types are checked here, ranges by Conv2dGw8Params."""
    if isinstance(padding, bool):
        raise TypeError(f"padding must be an int or a tuple of ints, got {padding!r}")
    if isinstance(padding, int):
        return (padding, padding, padding, padding)
    if isinstance(padding, (tuple, list)) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in padding
    ):
        if len(padding) == 2:
            return (padding[0], padding[0], padding[1], padding[1])
        if len(padding) == 4:
            return (padding[0], padding[1], padding[2], padding[3])
    raise TypeError(
        "padding must be an int, a pair (vertical, horizontal) or a 4-tuple (top, bottom, "
        f"left, right) of ints, got {padding!r}"
    )


def weights_from_torch_layout(weight: Any) -> Any:
    """Convert torch's grouped-conv weight K x 8 x R x S to Spio's K x R x S x 8 (contiguous).

    Works on any array with `permute`/`transpose` and `contiguous`/`copy` (torch tensors,
    NumPy arrays); no framework is imported here.
    """
    shape = getattr(weight, "shape", None)
    if shape is not None and (len(shape) != 4 or shape[1] != 8):
        raise ValueError(
            f"weight must be K x 8 x R x S (torch's grouped-conv layout), got shape {tuple(shape)}"
        )
    if hasattr(weight, "permute"):
        return weight.permute(0, 2, 3, 1).contiguous()
    if hasattr(weight, "transpose"):
        import numpy as np

        return np.ascontiguousarray(weight.transpose(0, 2, 3, 1))
    raise TypeError(f"weight must be a torch tensor or a NumPy array, got {type(weight).__name__}")
