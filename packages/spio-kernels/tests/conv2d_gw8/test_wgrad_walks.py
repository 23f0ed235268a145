"""wgrad_walks.walks_on without a GPU: the segments' placement, the producer warps' and the
occupancy are stand-ins (the GPU tier checks them on the device, test_wgrad_gpu.py)."""

from __future__ import annotations

import dataclasses

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, WgradConfig, wgrad_walks

LAYER = Conv2dGw8Params.make(256, 64, 64, 64)
TILE = WgradConfig(32, 8, 2, 64, 2, 1, 2, tma=True)


@pytest.fixture(autouse=True)
def _no_improvements(monkeypatch: pytest.MonkeyPatch) -> None:
    """Placing the kernel's improvements asks the device: here no walk gets them, unless a
    test says."""
    monkeypatch.setattr(wgrad_walks, "improved_config_on", lambda params, config, device: config)


def _stand_ins(monkeypatch: pytest.MonkeyPatch, slots_by_prefetch: dict[int, int]) -> None:
    """Segments of 66 a strip wherever they run; the blocks that fit per prefetch."""

    def stream_config_on(params: Conv2dGw8Params, config: WgradConfig, device: int) -> WgradConfig:
        return dataclasses.replace(config, walk_n=1, segments=66)

    monkeypatch.setattr(wgrad_walks, "stream_config_on", stream_config_on)
    monkeypatch.setattr(
        wgrad_walks, "slots_on", lambda params, config, device: slots_by_prefetch[config.prefetch]
    )


def test_the_walks_are_the_tile_and_its_segments_at_each_depth_that_keeps_the_blocks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _stand_ins(monkeypatch, {2: 264, 3: 264, 4: 264})
    walks = wgrad_walks.walks_on(LAYER, TILE)
    assert walks[0] == TILE
    assert [(walk.prefetch, walk.segments, walk.walk_n) for walk in walks[1:]] == [
        (2, 66, 1),
        (3, 66, 1),
        (4, 66, 1),
    ]


def test_the_walks_stop_at_the_first_depth_that_fits_fewer_blocks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Prefetch 4 would fit again, but a depth past one that lost blocks is not timed.
    _stand_ins(monkeypatch, {2: 264, 3: 132, 4: 264})
    assert [walk.prefetch for walk in wgrad_walks.walks_on(LAYER, TILE)[1:]] == [2]


def test_depths_the_layer_cannot_walk_end_the_walks(monkeypatch: pytest.MonkeyPatch) -> None:
    _stand_ins(monkeypatch, {2: 264, 3: 264, 4: 264})
    # One output row: a step's rows and halo (1 + 3 - 1) take segments up to prefetch 3.
    short = Conv2dGw8Params.make(8, 64, 1, 64)

    def stream_config_on(params: Conv2dGw8Params, config: WgradConfig, device: int) -> WgradConfig:
        if config.prefetch > params.p + params.r - 1:
            raise ValueError("segments walk rows up to prefetch ahead")
        return dataclasses.replace(config, walk_n=1, segments=3)

    monkeypatch.setattr(wgrad_walks, "stream_config_on", stream_config_on)
    assert [walk.prefetch for walk in wgrad_walks.walks_on(short, TILE)[1:]] == [2, 3]


def test_a_tile_without_segments_walks_only_its_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(params: Conv2dGw8Params, config: WgradConfig, device: int) -> WgradConfig:
        raise ValueError("no segments here")

    monkeypatch.setattr(wgrad_walks, "stream_config_on", refuse)
    assert wgrad_walks.walks_on(LAYER, TILE) == [TILE]


def test_a_segmented_config_is_not_listed_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    _stand_ins(monkeypatch, {2: 264, 3: 264, 4: 264})
    placed = dataclasses.replace(TILE, walk_n=1, segments=66)
    walks = wgrad_walks.walks_on(LAYER, placed)
    assert walks[0] == placed
    assert len(walks) == len(set(walks)) == 3


def test_a_config_the_layer_cannot_run_is_refused() -> None:
    with pytest.raises(ValueError, match="block_g"):
        wgrad_walks.walks_on(Conv2dGw8Params.make(8, 8, 8, 8), TILE)


def test_each_walk_takes_the_improvements_the_launcher_would_give_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _stand_ins(monkeypatch, {2: 264, 3: 264, 4: 264})
    asked = []

    def improved_config_on(
        params: Conv2dGw8Params, config: WgradConfig, device: int
    ) -> WgradConfig:
        asked.append(config)
        # Say the deepest segments would fit fewer blocks with them: that walk stays as it is.
        return config if config.prefetch == 4 else dataclasses.replace(config, producer=True)

    monkeypatch.setattr(wgrad_walks, "improved_config_on", improved_config_on)
    walks = wgrad_walks.walks_on(LAYER, TILE)
    assert sorted(asked, key=lambda c: (c.segments, c.prefetch)) == [
        TILE,
        *(dataclasses.replace(TILE, walk_n=1, segments=66, prefetch=p) for p in (2, 3, 4)),
    ]
    assert [(walk.segments, walk.prefetch, walk.producer) for walk in walks] == [
        (0, 2, True),
        (66, 2, True),
        (66, 3, True),
        (66, 4, False),
    ]
