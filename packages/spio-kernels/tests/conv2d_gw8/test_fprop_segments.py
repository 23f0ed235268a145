"""fprop and dgrad walking segments of each column strip's stream of rows: the config field,
its checks, grid and types, and the default's rule (no GPU needed; the PTX:
test_fprop_spec)."""

import dataclasses

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig, config_space, fprop_segments
from spio.kernels.conv2d_gw8 import fprop_spec as spec
from spio.kernels.conv2d_gw8.fprop_segments import segments_or_chunks, walks_segments

LAYER = Conv2dGw8Params.make(128, 64, 64, 64)
#: The ladder's first tile: 2 column strips of 32 x 8 groups on 64 x 64 x 64 channels.
TILE = FpropConfig(32, 8, 2, 2, 32, 2, 16)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"segments": -1}, ValueError, "segments must be >= 0 \\(0: row chunks\\), got -1"),
        ({"segments": True}, TypeError, "segments must be an int, got True"),
        ({"segments": 2.0}, TypeError, "segments must be an int, got 2.0"),
        (
            {"block_q": 8, "warp_q16": 1, "segments": 4},
            ValueError,
            "segments = 4 walks one image at a time, so block_q must be at least 16",
        ),
    ],
)
def test_segments_value_errors(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        FpropConfig(**kwargs)


def test_segments_are_at_most_a_strips_output_rows() -> None:
    params = Conv2dGw8Params.make(3, 16, 5, 16)
    spec.check_config(params, FpropConfig(16, 2, 1, 1, 4, 2, 16, segments=15))
    with pytest.raises(ValueError, match=r"segments = 16 must be at most .* \(n \* p = 15\)"):
        spec.check_config(params, FpropConfig(16, 2, 1, 1, 4, 2, 16, segments=16))


def test_segments_are_a_placement_field_no_space_varies() -> None:
    assert FpropConfig.PLACEMENT_FIELDS == ("segments",)
    assert {config.segments for config in config_space(LAYER)} == {0}


def test_grid_is_the_segments_of_every_strip() -> None:
    assert spec.grid_blocks(LAYER, TILE) == 128 * 2 * 2
    assert spec.grid_blocks(LAYER, dataclasses.replace(TILE, segments=264)) == 528
    # block_p plays no part in a walk of segments.
    walked = dataclasses.replace(TILE, block_p=8, segments=264)
    assert spec.grid_blocks(LAYER, walked) == 528


@pytest.mark.parametrize(
    ("params", "slots", "segments"),
    [
        (LAYER, 528, 264),  # every slot of an H200 (4 blocks on each of 132 SMs)
        (LAYER, 529, 264),  # an odd slot left over
        (LAYER, 1, 1),  # fewer slots than strips: one segment a strip
        (Conv2dGw8Params.make(1, 64, 3, 32), 528, 3),  # at most one per output row
    ],
    ids=str,
)
def test_stream_config_shares_the_slots_among_the_strips(
    params: Conv2dGw8Params, slots: int, segments: int
) -> None:
    assert spec.stream_config(params, TILE, slots) == dataclasses.replace(TILE, segments=segments)


@pytest.mark.parametrize("slots", [0, True, 2.5])
def test_stream_config_rejects_slots_that_are_not_a_positive_int(slots: object) -> None:
    with pytest.raises(ValueError, match="slots must be an int >= 1"):
        spec.stream_config(LAYER, TILE, slots)  # type: ignore[arg-type]


def test_types_index_blocks_by_segment() -> None:
    chunks = spec.generate_types(LAYER, TILE)
    segments = spec.generate_types(LAYER, dataclasses.replace(TILE, segments=264))
    assert "CONV2D_GW8_SEGMENTS" not in chunks
    assert "#define CONV2D_GW8_SEGMENTS 264" in segments
    assert chunks != segments


@pytest.mark.parametrize(
    ("params", "block_p", "slots", "segments"),
    [
        # (H200 figures: fprop_segments' docstring and tools/fprop_segments_check.py.)
        (Conv2dGw8Params.make(96, 64, 64, 64), 8, 528, True),  # walks of 8 rows
        (Conv2dGw8Params.make(80, 64, 64, 64), 16, 528, True),  # a last wave 21% full
        (Conv2dGw8Params.make(64, 128, 56, 56, r=5, s=5, padding=2), 32, 264, True),  # uneven
        (LAYER, 16, 528, False),  # two waves, filled, even
        (Conv2dGw8Params.make(64, 64, 64, 64), 16, 528, False),  # one wave
        (Conv2dGw8Params.make(256, 256, 16, 16), 8, 528, False),  # images of 16 rows
    ],
    ids=str,
)
def test_segments_replace_chunks_that_leave_the_waves_uneven(
    params: Conv2dGw8Params, block_p: int, slots: int, segments: bool
) -> None:
    chunks = dataclasses.replace(TILE, block_p=block_p)
    assert walks_segments(params, chunks, slots) is segments
    chosen = segments_or_chunks(params, chunks, lambda config: slots)
    expected = spec.stream_config(params, dataclasses.replace(chunks, segments=1), slots)
    assert chosen == (expected if segments else chunks)


def test_segments_keep_the_chunks_where_a_segment_would_walk_few_rows() -> None:
    params = Conv2dGw8Params.make(40, 64, 64, 64)
    chunks = dataclasses.replace(TILE, block_p=8)
    assert walks_segments(params, chunks, 528)  # 640 blocks: a second wave a fifth full
    # 264 segments a strip of 2560 rows: under MIN_SEGMENT_ROWS each.
    assert segments_or_chunks(params, chunks, lambda config: 528) == chunks


@pytest.mark.parametrize("pass_name", ["fprop", "dgrad"])
def test_walks_are_the_config_and_its_tile_in_one_wave_of_segments(
    monkeypatch: pytest.MonkeyPatch, pass_name: str
) -> None:
    asked = []

    def slots_on(name: str, params: Conv2dGw8Params, config: FpropConfig, device: int) -> int:
        asked.append((name, params, config, device))
        return 528

    monkeypatch.setattr(fprop_segments, "slots_on", slots_on)
    walks = fprop_segments.walks_on(pass_name, LAYER, TILE, 2)
    one = dataclasses.replace(TILE, segments=1)
    assert walks == [TILE, dataclasses.replace(TILE, segments=264)]
    assert asked == [(pass_name, LAYER, one, 2)]  # the layer's params: dgrad converts them


@pytest.mark.parametrize(
    "config",
    [TILE, FpropConfig(8, 8, 2, 1, 16, 2, 16)],  # 16-row images; 8 columns of two images
    ids=str,
)
def test_walks_keep_the_config_alone_where_segments_cannot_pay(config: FpropConfig) -> None:
    params = Conv2dGw8Params.make(256, 256, 16, 16)
    # (Nothing compiles: slots_on is never asked.)
    assert fprop_segments.walks_on("fprop", params, config) == [config]


def test_slots_on_names_the_passes_it_knows() -> None:
    with pytest.raises(ValueError, match="pass_name must be 'fprop' or 'dgrad', got 'wgrad'"):
        fprop_segments.slots_on("wgrad", LAYER, TILE)
