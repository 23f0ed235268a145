"""Row-major packing of strides, shared by tensors and compound indices."""

from __future__ import annotations

from ._dims import Dims, Strides
from ._values import check_bound


def packed_layout(
    dims: Dims, strides: Strides | None, owner: str
) -> tuple[tuple[str, int, int], ...]:
    """Return (key, size, stride) outermost first, packing the strides not given.

    The innermost dimension has stride 1 unless given; each other dimension without a given
    stride gets the next inner dimension's stride times its size.
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
    return tuple(layout)
