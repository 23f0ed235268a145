"""fprop's and dgrad's default loading two rows ahead where its SMs hold few of its blocks
(ring_depth.deeper_ring; no GPU needed: the slots are given)."""

import dataclasses

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig
from spio.kernels.conv2d_gw8 import fprop_spec as spec
from spio.kernels.conv2d_gw8.ring_depth import DEEPER_PREFETCH, FEW_BLOCKS_PER_SM, deeper_ring

SMS = 132
#: Five blocks an SM of the ladder's one-row-ahead tiles (96 registers, 4 warps).
SLOTS = 5 * SMS


def _ladder_tile(params: Conv2dGw8Params) -> FpropConfig:
    tile = spec.default_config(params, SMS)
    assert tile.prefetch == 1, tile
    return tile


#: The 8-row, one-row-ahead tile the heuristic took at 100x256x14x14 before
#: LONG_WALK_MIN_WARPS_PER_SM (it now takes 16-row chunks there): a grid of more than one
#: wave.
EIGHT_ROWS = FpropConfig(16, 8, 2, 1, 8, 1, mma_k=16)


@pytest.mark.parametrize(
    ("shape", "tile", "deeper"),
    [
        ((8, 128, 32, 32), None, True),  # 256 blocks: under three an SM
        ((100, 256, 14, 14), EIGHT_ROWS, True),  # 800 blocks: more than one wave
        ((32, 64, 64, 64), None, False),  # 512 blocks: one wave, 3.9 an SM
        ((64, 128, 32, 32), None, False),
    ],
    ids=str,
)
def test_one_row_ahead_deepens_where_the_sms_hold_few_blocks(
    shape: tuple[int, int, int, int], tile: FpropConfig | None, deeper: bool
) -> None:
    params = Conv2dGw8Params.make(*shape)
    tile = tile or _ladder_tile(params)
    blocks = spec.grid_blocks(params, tile)
    assert (blocks < FEW_BLOCKS_PER_SM * SMS or blocks > SLOTS) is deeper
    chosen = deeper_ring(params, tile, SLOTS, SMS)
    expected = dataclasses.replace(tile, prefetch=DEEPER_PREFETCH) if deeper else tile
    assert chosen == expected


def test_the_bounds_of_one_full_wave_keep_one_row_ahead() -> None:
    params = Conv2dGw8Params.make(32, 64, 64, 64)
    tile = _ladder_tile(params)
    blocks = spec.grid_blocks(params, tile)
    # Exactly the slots, and exactly three blocks an SM, are one full wave.
    assert deeper_ring(params, tile, blocks, SMS) == tile
    assert deeper_ring(params, tile, SLOTS, blocks // FEW_BLOCKS_PER_SM) == tile
    # One block more than fits, or one SM more than three blocks each cover, is not.
    assert deeper_ring(params, tile, blocks - 1, SMS).prefetch == DEEPER_PREFETCH
    assert deeper_ring(params, tile, SLOTS, blocks // FEW_BLOCKS_PER_SM + 1).prefetch == 2


def test_tiles_already_loading_further_ahead_are_left_alone() -> None:
    params = Conv2dGw8Params.make(2, 64, 64, 64)
    for prefetch in (2, 6):
        tile = FpropConfig(32, 8, 2, 2, 32, prefetch, 16)
        assert deeper_ring(params, tile, SLOTS, SMS) == tile


def test_a_deeper_ring_that_does_not_fit_is_not_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    from spio.kernels.conv2d_gw8 import ring_depth

    params = Conv2dGw8Params.make(8, 128, 32, 32)
    tile = _ladder_tile(params)

    def refuse(params: Conv2dGw8Params, config: FpropConfig) -> None:
        if config.prefetch > 1:
            raise ValueError("too much shared memory")

    monkeypatch.setattr(ring_depth, "check_config", refuse)
    assert deeper_ring(params, tile, SLOTS, SMS) == tile
