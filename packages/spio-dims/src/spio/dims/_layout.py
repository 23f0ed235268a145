"""Row-major packing of strides, shared by tensors and compound indices."""

from __future__ import annotations

from ._dims import Dims, Strides
from ._errors import DimsError
from ._values import MAX_INT, check_bound


def packed_layout(
    dims: Dims, strides: Strides | None, owner: str
) -> tuple[tuple[str, int, int], ...]:
    """Return (key, size, stride) outermost first, packing the strides not given.

    The innermost dimension has stride 1 unless given; each other dimension without a given
    stride gets the next inner dimension's stride times its size. Raise DimsError when a
    stride, or the span of elements the layout reaches, does not fit an int.
    """
    layout: list[tuple[str, int, int]] = []
    running = 1
    for key, size in reversed(dims.items):
        given = strides.get(key) if strides is not None else None
        stride = running if given is None else given
        check_bound(stride, f"stride of {key!r} in {owner}")
        layout.append((key, size, stride))
        running = stride * size
    layout.reverse()
    # The C++ offsets and storage_size() are int: a larger span would wrap around.
    span = 1 + sum((size - 1) * stride for _, size, stride in layout)
    if span > MAX_INT:
        raise DimsError(
            f"{owner} spans {span} elements (1 + sum((size - 1) * stride) over "
            f"{', '.join(f'{key}={size}' for key, size, _ in layout)}); allowed: at most "
            f"{MAX_INT}, since offsets are int"
        )
    return tuple(layout)
