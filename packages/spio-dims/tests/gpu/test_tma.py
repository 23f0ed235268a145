"""TMA copies on a GPU (sm_90): boxes of 2-D and 4-D tensor maps land in shared memory with
the documented swizzle and zeros outside the tensor; a store writes a box back, undoing the
swizzle and leaving what lies outside the tensor alone. The maps come from cuda.core and
reach the kernels through spio.jit (or cuda.core's launch, with _launch.LAUNCHER)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu

_launch = pytest.importorskip("_launch")  # skips this module where no kernel can run
torch = _launch.torch

if torch.cuda.get_device_capability() < (9, 0):
    pytest.skip("TMA needs sm_90", allow_module_level=True)

from cuda.core import TensorMapDescriptorOptions  # noqa: E402
from cuda.core.utils import StridedMemoryView  # noqa: E402

# cuda.core 1.2 exports the options but not their enums: the swizzle enum is the type of
# the options' default.
Swizzle = type(TensorMapDescriptorOptions(box_dim=(1,)).swizzle)
# Swizzle span in bytes -> (enum member, bits of the 16-byte chunk index it permutes).
SWIZZLES = {0: (Swizzle.NONE, 0), 32: (Swizzle.SWIZZLE_32B, 1), 64: (Swizzle.SWIZZLE_64B, 2),
            128: (Swizzle.SWIZZLE_128B, 3)}  # fmt: skip


def _distinct_halves(*shape: int) -> torch.Tensor:
    """16-bit elements with distinct, non-zero bit patterns (compared as int16)."""
    count = 1
    for size in shape:
        count *= size
    bits = (torch.arange(count, dtype=torch.int32) % 32749 + 1).to(torch.int16)
    return bits.view(torch.float16).reshape(shape).cuda()


def _tensor_map(tensor: torch.Tensor, box: tuple[int, ...], span: int) -> object:
    view = StridedMemoryView.from_dlpack(tensor, stream_ptr=-1)
    return view.as_tensor_map(box_dim=box, swizzle=SWIZZLES[span][0])


def _swizzled(offset: int, span: int) -> int:
    """Where byte `offset` of a dense box lies in shared memory: the 16-byte chunk index
    (bits 4 ...) XOR the 128-byte row index (bits 7 ...), as many bits as the span has
    chunks (none for no swizzle)."""
    mask = (1 << SWIZZLES[span][1]) - 1
    return offset ^ (((offset >> 7) & mask) << 4)


def _expected_bytes(box: torch.Tensor, span: int) -> torch.Tensor:
    """The bytes of `box` (the logical box, outside elements already zero) as the swizzle
    places them."""
    dense = box.contiguous().view(torch.uint8).flatten().cpu()
    placed = torch.empty_like(dense)
    for offset in range(dense.numel()):
        placed[_swizzled(offset, span)] = dense[offset]
    return placed


def _window(tensor: torch.Tensor, start: tuple[int, ...], box: tuple[int, ...]) -> torch.Tensor:
    """The box of `tensor` at `start` (per dim, row-major), zeros where it leaves the tensor."""
    out = torch.zeros(box, dtype=torch.int16)
    source = tensor.view(torch.int16).cpu()
    src_slices, out_slices = [], []
    for begin, size, extent in zip(start, box, tensor.shape, strict=True):
        lo, hi = max(begin, 0), min(begin + size, extent)
        if lo >= hi:
            return out
        src_slices.append(slice(lo, hi))
        out_slices.append(slice(lo - begin, hi - begin))
    out[tuple(out_slices)] = source[tuple(src_slices)]
    return out


@pytest.mark.parametrize("span", [0, 32, 64, 128], ids=["none", "32B", "64B", "128B"])
@pytest.mark.parametrize(
    "corner", [(4, 8), (-3, -8), (30, 176)], ids=["inside", "top-left", "bottom-right"]
)
def test_2d_box_lands_swizzled_with_zeros_outside(span: int, corner: tuple[int, int]) -> None:
    """Boxes inside the tensor and overhanging its start and its end (innermost coordinates
    on 16 bytes, as TMA needs)."""
    rows, row_bytes = 16, span or 48
    cols = row_bytes // 2
    tensor = _distinct_halves(40, 200)
    out = torch.zeros(rows * row_bytes, dtype=torch.uint8, device="cuda")
    y, x = corner
    _launch.run(
        _launch.kernel_source("tma.cu"),
        "tma_load_bytes",
        [_tensor_map(tensor, (rows, cols), span), out, x, y, 0, 0],
        defines={"RANK": 2, "BOX_BYTES": rows * row_bytes},
        block=64,
    )
    expected = _expected_bytes(_window(tensor, (y, x), (rows, cols)), span)
    assert torch.equal(out.cpu(), expected)


def test_4d_pixel_row_box_as_the_conv_rings_load_it() -> None:
    """An NHWC row of 18 pixels x 64 channels (the 128-byte swizzle: 16-byte group g of
    pixel p lands in slot g ^ (p % 8)), starting one pixel left of the image."""
    n, h, w, c = 3, 5, 20, 64
    tensor = _distinct_halves(n, h, w, c)
    box = (1, 1, 18, c)
    out = torch.zeros(18 * c * 2, dtype=torch.uint8, device="cuda")
    image, row, col = 1, 2, -1
    _launch.run(
        _launch.kernel_source("tma.cu"),
        "tma_load_bytes",
        [_tensor_map(tensor, box, 128), out, 0, col, row, image],
        defines={"RANK": 4, "BOX_BYTES": out.numel()},
        block=128,
    )
    expected = _expected_bytes(_window(tensor, (image, row, col, 0), box), 128)
    assert torch.equal(out.cpu(), expected)


# (A store's coordinates are >= 0: a negative one faults, see tma.cuh.)
@pytest.mark.parametrize("corner", [(8, 40), (30, 176)], ids=["inside", "overhanging"])
def test_store_writes_the_box_back_and_nothing_outside_the_tensor(corner: tuple[int, int]) -> None:
    rows, cols = 16, 64
    src = _distinct_halves(40, 200)
    sentinel = 0x7777
    dst = torch.full((40, 200), sentinel, dtype=torch.int16, device="cuda")
    y, x = corner
    _launch.run(
        _launch.kernel_source("tma.cu"),
        "tma_round_trip",
        [
            _tensor_map(src, (rows, cols), 128),
            _tensor_map(dst.view(torch.float16), (rows, cols), 128),
            x,
            y,
            0,
            0,
        ],
        defines={"RANK": 2, "BOX_BYTES": rows * cols * 2},
        block=128,
    )
    expected = torch.full((40, 200), sentinel, dtype=torch.int16)
    y0, y1, x0, x1 = max(y, 0), min(y + rows, 40), max(x, 0), min(x + cols, 200)
    expected[y0:y1, x0:x1] = src.view(torch.int16).cpu()[y0:y1, x0:x1] + 1
    assert torch.equal(dst.cpu(), expected)
