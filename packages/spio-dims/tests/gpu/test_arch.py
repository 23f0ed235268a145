"""The arch wrappers on a GPU: ldmatrix round trips, cp.async copies with zero fill, clusters,
the grid barrier and L2 line discards."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu

_launch = pytest.importorskip("_launch")  # skips this module where no kernel can run
torch = _launch.torch


@pytest.mark.parametrize("trans", [False, True], ids=["plain", "trans"])
@pytest.mark.parametrize("num", [1, 2, 4], ids=["x1", "x2", "x4"])
def test_ldmatrix_round_trip(num: int, trans: bool) -> None:
    """Each register half lands where the PTX ISA's ldmatrix layout says it comes from."""
    src = torch.randint(-(2**15), 2**15, (num * 64,), dtype=torch.int16, device="cuda")
    dst = torch.zeros_like(src)
    _launch.run(
        _launch.kernel_source("ldmatrix.cu"),
        "ldmatrix_round_trip",
        [src, dst],
        defines={"NUM": num, "TRANS": int(trans)},
    )
    assert torch.equal(dst.cpu(), src.cpu())


@pytest.mark.parametrize("wait_all", [False, True], ids=["wait_group", "wait_all"])
def test_cp_async_zero_fill(wait_all: bool) -> None:
    """cp.async copies src_bytes of each 16-byte chunk and writes zeros for the rest."""
    src = torch.randint(1, 256, (32, 16), dtype=torch.uint8, device="cuda")
    # Full chunks, empty chunks (pure zero fill) and every partial length in between.
    src_bytes = torch.tensor([16, 0, *range(1, 16), *([16, 0] * 7), 8], dtype=torch.int32)
    dst = torch.zeros_like(src)
    _launch.run(
        _launch.kernel_source("async_copy.cu"),
        "async_copy_zero_fill",
        [src, src_bytes.cuda(), dst],
        defines={"WAIT_ALL": int(wait_all)},
    )
    expected = src.cpu().clone()
    for chunk, size in enumerate(src_bytes.tolist()):
        expected[chunk, size:] = 0
    # Thread t wrote its neighbour's chunk t + 1.
    assert torch.equal(dst.cpu(), expected.roll(-1, dims=0))


def test_cp_async_pipeline() -> None:
    """Double buffering with wait_group<1>: every stage is read only after it has landed."""
    stages = 6
    src = torch.randint(0, 2**31 - 1, (stages, 32, 4), dtype=torch.int32, device="cuda")
    dst = torch.zeros_like(src)
    _launch.run(
        _launch.kernel_source("async_copy.cu"),
        "async_copy_pipeline",
        [src, dst, stages],
        defines={"WAIT_ALL": 0},
    )
    assert torch.equal(dst.cpu(), src.cpu().roll(-1, dims=1))


@pytest.mark.parametrize("blocks", [2, 4, 8])
def test_cluster_reads_other_blocks_shared_memory(blocks: int) -> None:
    """load_from_block reads the right block's shared memory; ranks follow blockIdx.x."""
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("thread-block clusters need sm_90")
    clusters = 3
    grid = clusters * blocks
    src = torch.randn(grid, 32, 4, device="cuda")
    dst = torch.zeros(grid, 32, blocks, 4, device="cuda")
    ranks = torch.full((grid,), -1, dtype=torch.int32, device="cuda")
    _launch.run(
        _launch.kernel_source("cluster.cu"),
        "cluster_exchange",
        [src, dst, ranks],
        defines={"BLOCKS": blocks},
        grid=grid,
    )
    expected = src.cpu().view(clusters, blocks, 32, 4)
    # dst[b][t][q] = src[cluster of b][q][t]
    expected = expected.permute(0, 2, 1, 3).unsqueeze(1).expand(clusters, blocks, 32, blocks, 4)
    assert torch.equal(dst.cpu(), expected.reshape(grid, 32, blocks, 4))
    assert ranks.cpu().tolist() == [b % blocks for b in range(grid)]


def test_grid_barrier_orders_every_block_of_a_cooperative_grid() -> None:
    """Values published before a barrier are seen after it, values written after it are not
    seen before it; the counter returns to 0 or 2^31 after each launch, and a second launch
    on it works the same."""
    grid = 2 * torch.cuda.get_device_properties(0).multi_processor_count
    counter = torch.zeros(1, dtype=torch.int32, device="cuda")
    values = torch.zeros(grid, dtype=torch.int32, device="cuda")
    neighbours = (torch.arange(grid, dtype=torch.int32) + 1) % grid + 1
    for launch in range(2):
        seen = torch.zeros(2 * grid, dtype=torch.int32, device="cuda")
        _launch.run(
            _launch.kernel_source("grid_barrier.cu"),
            "neighbours_in_rounds",
            [counter, values, seen],
            grid=grid,
            block=64,
            cooperative=True,
        )
        assert torch.equal(seen.cpu(), torch.cat([neighbours, -neighbours]))
        # Three barriers a launch: the top bit flips three times.
        assert int(counter) == (-(2**31) if launch == 0 else 0)


def test_discard_line_drops_only_its_own_line() -> None:
    """Lines read and then discarded leave their neighbours' values, and can be written and
    read again."""
    lines = 64
    data = torch.randn(lines, 32, device="cuda")
    assert data.data_ptr() % 128 == 0
    expected = data.cpu()  # (the odd lines' values are undefined after the kernel)
    sums = torch.zeros(lines, device="cuda")
    source = _launch.kernel_source("l2.cu")
    _launch.run(source, "sum_then_discard_odd", [data, sums], grid=lines, block=32)
    assert torch.allclose(sums.cpu(), expected.sum(dim=1), rtol=1e-5, atol=1e-5)
    assert torch.equal(data.cpu()[0::2], expected[0::2])
    data[1::2] = 7.0
    assert torch.equal(data.cpu()[1::2], torch.full((lines // 2, 32), 7.0))
