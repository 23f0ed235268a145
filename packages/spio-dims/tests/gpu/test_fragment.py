"""Fragments on a GPU: lane maps against the tensor cores, mma against a float reference."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.gpu

_launch = pytest.importorskip("_launch")  # skips this module where no kernel can run
torch = _launch.torch

SHAPES = {"M16N8K8": (16, 8, 8), "M16N8K16": (16, 8, 16)}  # M, N, K
ELEMENTS = {"__half": torch.float16, "__nv_bfloat16": torch.bfloat16}


def _values(kind: str, shape: tuple[int, ...], dtype: Any) -> Any:
    """Small integers (every product and sum exact) or normal samples, rounded to `dtype`."""
    if kind == "integers":
        return torch.randint(-4, 5, shape, device="cuda").to(dtype)
    return torch.randn(shape, device="cuda").to(dtype)


@pytest.mark.parametrize("kind", ["integers", "normal"])
@pytest.mark.parametrize("element", list(ELEMENTS))
@pytest.mark.parametrize("shape", list(SHAPES))
def test_fragment_mma(shape: str, element: str, kind: str) -> None:
    """D = A * B + C through the lane maps equals the float reference, for f16 and bf16."""
    m, n, k = SHAPES[shape]
    dtype = ELEMENTS[element]
    torch.manual_seed(0)
    a = _values(kind, (m, k), dtype)
    b = _values(kind, (k, n), dtype)
    c = _values(kind, (m, n), torch.float32)
    d = torch.full((m, n), float("nan"), device="cuda")
    twice = torch.full((m, n), float("nan"), device="cuda")
    d16 = torch.zeros((m, n), dtype=dtype, device="cuda")
    _launch.run(
        _launch.kernel_source("fragment_mma.cu"),
        "fragment_mma",
        [a, b, c, d, twice, d16],
        defines={"SHAPE": shape, "ELEMENT": element},
    )
    product = a.double() @ b.double()
    reference = (product + c.double()).float()
    reference_twice = (2 * product + c.double()).float()
    if kind == "integers":
        assert torch.equal(d.cpu(), reference.cpu())
        assert torch.equal(twice.cpu(), reference_twice.cpu())
        assert torch.equal(d16.cpu(), reference.to(dtype).cpu())
    else:
        torch.testing.assert_close(d, reference, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(twice, reference_twice, rtol=1e-4, atol=1e-4)
        # to_half2 / to_bfloat162 round to nearest even, as torch's casts do.
        assert torch.equal(d16.cpu(), d.to(dtype).cpu())


# (shape, operand A?) -> the ldmatrix count of one fragment load.
LOADS = {
    ("M16N8K16", True): "x4",
    ("M16N8K8", True): "x2",
    ("M16N8K16", False): "x2",
    ("M16N8K8", False): "x1",
}


def _check_load(shape: str, operand_a: bool, trans: bool, pair: bool) -> None:
    m, n, k = SHAPES[shape]
    rows, cols = (m, k) if operand_a else (k, n)
    cols *= 2 if pair else 1
    count = rows * cols
    # Distinct, exactly representable values: the operand's row-major positions.
    src = torch.arange(count, dtype=torch.float32, device="cuda").to(torch.float16)
    values = torch.zeros(count, dtype=torch.int16, device="cuda")
    row_of = torch.full((count,), -1, dtype=torch.int32, device="cuda")
    col_of = torch.full((count,), -1, dtype=torch.int32, device="cuda")
    _launch.run(
        _launch.kernel_source("fragment_load.cu"),
        "fragment_load",
        [src, values, row_of, col_of],
        defines={
            "SHAPE": shape,
            "OPERAND_A": int(operand_a),
            "TRANS": int(trans),
            "PAIR": int(pair),
        },
    )
    row_of, col_of = row_of.cpu().long(), col_of.cpu().long()
    positions = row_of * cols + col_of
    assert sorted(positions.tolist()) == list(range(count)), (
        "lane maps must cover each element once"
    )
    loaded = values.cpu().view(torch.float16).float()
    assert torch.equal(loaded, positions.float())


@pytest.mark.parametrize("trans", [False, True], ids=["plain", "trans"])
@pytest.mark.parametrize(
    ("shape", "operand_a"),
    list(LOADS),
    ids=[f"{s}-{'A' if a else 'B'}-{n}" for (s, a), n in LOADS.items()],
)
def test_fragment_load(shape: str, operand_a: bool, trans: bool) -> None:
    """Fragment::load / load_trans from a typed shared tile put element (row, col) where the
    lane map says, and the lane maps cover the operand once."""
    _check_load(shape, operand_a, trans, pair=False)


@pytest.mark.parametrize("trans", [False, True], ids=["plain", "trans"])
@pytest.mark.parametrize(
    ("shape", "operand_a"),
    [(shape, a) for (shape, a), count in LOADS.items() if count == "x2"],
    ids=lambda value: str(value),
)
def test_fragment_load_pair(shape: str, operand_a: bool, trans: bool) -> None:
    """load_pair / load_pair_trans: two two-register fragments side by side, one ldmatrix
    .x4, each element where its fragment's lane map says."""
    _check_load(shape, operand_a, trans, pair=True)


@pytest.mark.parametrize("b_trans", [False, True], ids=["b_k_major", "b_j_major"])
@pytest.mark.parametrize("a_trans", [False, True], ids=["a_k_major", "a_i_major"])
@pytest.mark.parametrize("element", list(ELEMENTS))
@pytest.mark.parametrize("shape", list(SHAPES))
def test_mma_tile(shape: str, element: str, a_trans: bool, b_trans: bool) -> None:
    """A 32 x 32 x 32 product over register tiles (load_tile / load_tile_trans, tile mma)."""
    dtype = ELEMENTS[element]
    torch.manual_seed(1)
    a = _values("integers", (32, 32), dtype)
    b = _values("integers", (32, 32), dtype)
    c = _values("integers", (32, 32), torch.float32)
    d = torch.full((32, 32), float("nan"), device="cuda")
    _launch.run(
        _launch.kernel_source("mma_tile.cu"),
        "mma_tile",
        [a, b, c, d],
        defines={
            "SHAPE": shape,
            "ELEMENT": element,
            "A_TRANS": int(a_trans),
            "B_TRANS": int(b_trans),
        },
    )
    reference = (a.double() @ b.double() + c.double()).float()
    assert torch.equal(d.cpu(), reference.cpu())


def test_load_tile_checkerboard() -> None:
    """load_tile's lane-cursor form reads a checkerboard-swizzled tile (Spio's matmul layout)."""
    a = torch.arange(32 * 32, dtype=torch.float32, device="cuda").to(torch.float16).view(32, 32)
    count = 2 * 2 * 32 * 8  # fragments x lanes x elements
    values = torch.zeros(count, dtype=torch.int16, device="cuda")
    row_of = torch.full((count,), -1, dtype=torch.int32, device="cuda")
    col_of = torch.full((count,), -1, dtype=torch.int32, device="cuda")
    _launch.run(
        _launch.kernel_source("checkerboard_load.cu"),
        "checkerboard_load",
        [a, values, row_of, col_of],
    )
    row_of, col_of = row_of.cpu().long(), col_of.cpu().long()
    positions = row_of * 32 + col_of
    assert sorted(positions.tolist()) == list(range(32 * 32))
    assert torch.equal(values.cpu().view(torch.float16).float(), positions.float())
