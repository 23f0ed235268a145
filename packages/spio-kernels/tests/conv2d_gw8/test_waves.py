"""Balancing a grid's waves: the fill measure, the search over shorter walks and fprop's
shorter walk."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    FpropConfig,
    dgrad_spec,
    fprop_spec,
)
from spio.kernels.conv2d_gw8._tiling import WAVE_FILL, LaunchGeometry, balance_waves, wave_fill
from spio.kernels.conv2d_gw8.fprop import resident_slots


@pytest.mark.parametrize(
    ("blocks", "slots", "fill"),
    [
        (100, 528, 1.0),  # one wave at most: spread over the SMs instead
        (528, 528, 1.0),
        (768, 528, 768 / 1056),  # a second wave 45% full
        (1536, 528, 1536 / 1584),
    ],
)
def test_wave_fill(blocks: int, slots: int, fill: float) -> None:
    assert wave_fill(blocks, slots) == pytest.approx(fill)


class _KernelThatFitsNothing:
    name = "conv2d_gw8_fprop"
    device = 0
    attributes = SimpleNamespace(registers=255)

    def max_active_blocks_per_sm(self, block: int, shared_mem: int) -> int:
        return 0


def test_resident_slots_refuse_a_launch_no_sm_can_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    import spio.jit

    monkeypatch.setattr(spio.jit, "device_info", lambda device: SimpleNamespace(sm_count=132))
    with pytest.raises(ValueError, match=r"not one block of 512 threads \(255 registers each\)"):
        resident_slots(_KernelThatFitsNothing(), LaunchGeometry(64, 512, 1024))


def test_balance_waves_keeps_a_config_that_fills_its_waves() -> None:
    calls = []
    assert balance_waves(32, lambda c: calls.append(c) or c // 2, lambda c: WAVE_FILL) == 32
    assert calls == []


def test_balance_waves_takes_the_best_filling_walk_and_the_longest_of_equals() -> None:
    shorter = lambda c: c // 2 if c > 4 else None  # noqa: E731
    fills = {32: 0.70, 16: 0.90, 8: 0.90, 4: 0.86}
    assert balance_waves(32, shorter, fills.__getitem__) == 16
    fills = {32: 0.70, 16: 0.80, 8: 0.97, 4: 0.86}
    assert balance_waves(32, shorter, fills.__getitem__) == 8


def test_balance_waves_keeps_the_config_where_no_walk_fills_the_waves() -> None:
    # Better than the config's own fill is not enough: a 0.81 fill lost on the GPU.
    shorter = lambda c: c // 2 if c > 8 else None  # noqa: E731
    fills = {32: 0.61, 16: 0.81, 8: 0.70}
    assert WAVE_FILL > 0.81
    assert balance_waves(32, shorter, fills.__getitem__) == 32


def test_fprop_192_images_walk_16_rows() -> None:
    # 4 blocks of the ladder's first tile fit on an SM (H200: 125 registers x 128 threads).
    params = Conv2dGw8Params.make(192, 64, 64, 64)
    config = fprop_spec.default_config(params)
    assert config.block_p == 32
    slots = 132 * 4
    chosen = balance_waves(
        config,
        lambda c: fprop_spec.shorter_walk(params, c),
        lambda c: wave_fill(fprop_spec.grid_blocks(params, c), slots),
    )
    assert chosen == FpropConfig(32, 8, 2, 2, 16, 2, 16)
    assert dgrad_spec.grid_blocks(params, chosen) == fprop_spec.grid_blocks(params, chosen)


def test_fprop_shorter_walk_stops_at_eight_rows() -> None:
    params = Conv2dGw8Params.make(8, 64, 64, 64)
    assert fprop_spec.shorter_walk(params, FpropConfig(block_p=16)) == FpropConfig(block_p=8)
    assert fprop_spec.shorter_walk(params, FpropConfig(block_p=8)) is None
    assert dgrad_spec.shorter_walk(params, FpropConfig(block_p=16)) == FpropConfig(block_p=8)


def test_fprop_shorter_walk_leaves_no_block_of_an_image_under_eight_rows() -> None:
    # 14 rows in walks of 8: a block of 6 rows, whose halo rows cost more than the waves gain.
    whole = FpropConfig(16, 8, 2, 1, 16, 6, 16)
    assert fprop_spec.shorter_walk(Conv2dGw8Params.make(512, 256, 14, 14), whole) is None
    assert dgrad_spec.shorter_walk(Conv2dGw8Params.make(512, 256, 14, 14), whole) is None
    # 16 and 24 rows split into whole walks of 8; 28 rows into 16 and 12.
    halved = dataclasses.replace(whole, block_p=8)
    assert fprop_spec.shorter_walk(Conv2dGw8Params.make(128, 1024, 16, 16), whole) == halved
    assert fprop_spec.shorter_walk(Conv2dGw8Params.make(8, 64, 24, 24), whole) == halved
    long_walk = FpropConfig(32, 8, 2, 2, 32, 2, 16)
    to_16 = fprop_spec.shorter_walk(Conv2dGw8Params.make(64, 64, 28, 28), long_walk)
    assert to_16 == dataclasses.replace(long_walk, block_p=16)
    assert fprop_spec.shorter_walk(Conv2dGw8Params.make(64, 64, 28, 28), to_16) is None
