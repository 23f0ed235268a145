"""wgrad config, config space, workspace, generated types and NVRTC compiles (no GPU)."""

import dataclasses
from types import SimpleNamespace

import pytest
from gw8_cases import covering_configs

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    WgradConfig,
    wgrad_heuristic,
    wgrad_spec,
    wgrad_tma_tile,
    wgrad_types,
)
from spio.kernels.conv2d_gw8._tiling import MAX_SHARED_MEM
from spio.kernels.conv2d_gw8.reference import wgrad_reference
from spio.kernels.conv2d_gw8.wgrad import (
    compile_wgrad,
    discard_config_on,
    wgrad_workspace_bytes,
)

SHAPES = [
    Conv2dGw8Params.make(1, 8, 7, 9),
    Conv2dGw8Params.make(3, 24, 5, 11, r=7, s=7, padding=3),
    Conv2dGw8Params.make(128, 64, 64, 64),
    Conv2dGw8Params.make(8, 1024, 8, 8, r=5, s=5, padding=2),
    Conv2dGw8Params.make(2, 64, 112, 112, r=7, s=7, padding=3),
]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"block_q": 24}, r"block_q must be one of \(8, 4\) or a multiple of 16, got 24"),
        ({"block_q": 8, "block_n": 3}, "block_q = 8 puts 2 images in each warp, so block_n must"),
        ({"block_q": 4, "block_n": 2}, "block_q = 4 puts 4 images in each warp, so block_n must"),
        (
            {"block_q": 4, "block_g": 8, "block_n": 4, "tma": True},
            "tma=True needs block_q a multiple of 8",
        ),
        ({"block_g": 3, "warp_g": 2}, "block_g must be a multiple of warp_g = 2, got 3"),
        ({"prefetch": 0}, "prefetch must be >= 1, got 0"),
        ({"walk_n": 0}, "walk_n must be >= 1, got 0"),
        ({"block_q": 64, "block_g": 8, "warp_g": 1}, "warps = .* must be at most 16"),
        ({"image_sync": True}, r"image_sync=True needs several warp rows"),
        ({"block_q": 8, "block_n": 2, "image_sync": True}, r"image_sync=True needs several"),
        ({"producer": True}, r"producer=True issues the rows by TMA, so it needs tma=True"),
    ],
)
def test_config_value_errors(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        WgradConfig(**kwargs)


def test_config_type_error() -> None:
    with pytest.raises(TypeError, match=r"block_p must be an int, got 2\.0"):
        WgradConfig(block_p=2.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="image_sync must be a bool, got 1"):
        WgradConfig(block_n=2, image_sync=1)  # type: ignore[arg-type]


def test_image_sync_doubles_the_configs_with_several_images_side_by_side() -> None:
    params = Conv2dGw8Params.make(32, 64, 64, 64)
    space = wgrad_spec.config_space(params)
    split = {c for c in space if c.image_sync}
    assert split
    assert all(c.block_n > 1 for c in split)
    assert {dataclasses.replace(c, image_sync=False) for c in split} == {
        c for c in space if c.block_n > 1 and not c.image_sync
    }


def test_tma_doubles_the_full_line_tiles_only() -> None:
    """TMA rows come with the tiles of whole 128-byte pixel lines (8 groups), each with and
    without; a layer of fewer groups has none."""
    params = Conv2dGw8Params.make(32, 64, 64, 64)
    space = wgrad_spec.config_space(params)
    with_tma = {c for c in space if c.tma}
    assert with_tma
    assert all(c.block_g == wgrad_spec.TMA_BLOCK_G for c in with_tma)
    assert {dataclasses.replace(c, tma=False) for c in with_tma} == {
        c for c in space if c.block_g == wgrad_spec.TMA_BLOCK_G and not c.tma
    }
    narrow = Conv2dGw8Params.make(32, 32, 64, 64)  # 4 groups
    assert not any(c.tma for c in wgrad_spec.config_space(narrow))


def test_tma_pads_ring_rows_to_whole_swizzles_after_the_barriers() -> None:
    params = Conv2dGw8Params.make(8, 64, 32, 32)  # 3 x 3: 18 input columns at block_q 16
    plain = WgradConfig(16, 8, 2, 32, 2, 2, image_sync=True)
    tma = dataclasses.replace(plain, tma=True)
    assert wgrad_spec.ring_columns(params, plain) == 18
    assert wgrad_spec.ring_columns(params, tma) == 24
    # 4 ring rows x 2 images x 8 groups x 16 bytes x (24 input + 16 grad_y pixels)
    assert wgrad_spec.ring_bytes(params, tma) == 4 * 2 * 8 * 16 * (24 + 16)
    assert wgrad_spec.shared_mem_bytes(params, tma) == (
        wgrad_spec.ring_bytes(params, tma) + wgrad_spec.TMA_BARRIER_BYTES
    )
    text = wgrad_types.generate_types(params, tma)
    assert "#define CONV2D_GW8_TMA_LOADS 1" in text
    assert "CONV2D_GW8_TMA_LOADS" not in wgrad_types.generate_types(params, plain)


def test_tma_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="tma must be a bool, got 1"):
        WgradConfig(tma=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="producer must be a bool, got 1"):
        WgradConfig(block_g=8, tma=True, producer=1)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("config", "producer_warps"),
    [
        (WgradConfig(16, 8, 2, 64, 2, 4, image_sync=True, tma=True, producer=True), 4),
        (WgradConfig(16, 8, 2, 64, 2, 4, tma=True, producer=True), 1),  # the block meets
        (WgradConfig(32, 8, 2, 64, 2, 1, 2, tma=True, producer=True), 1),
        (WgradConfig(16, 8, 2, 64, 2, 4, image_sync=True, tma=True), 0),
    ],
)
def test_producer_warps_are_one_per_group_of_warps_that_meet(
    config: WgradConfig, producer_warps: int
) -> None:
    params = Conv2dGw8Params.make(32, 64, 64, 64)
    assert config.producer_warps == producer_warps
    assert config.block_threads == config.threads + 32 * producer_warps
    geometry = wgrad_spec.launch_geometry(params, config)
    assert geometry.block == config.block_threads
    # The walking warps' index space and everything else about the kernel stay the same.
    plain = dataclasses.replace(config, producer=False)
    assert wgrad_spec.shared_mem_bytes(params, config) == wgrad_spec.shared_mem_bytes(params, plain)
    assert wgrad_spec.workspace_bytes(params, config) == wgrad_spec.workspace_bytes(params, plain)
    text = wgrad_types.generate_types(params, config)
    if producer_warps:
        assert f"#define CONV2D_GW8_PRODUCER_WARPS {producer_warps}" in text
        assert text.startswith(wgrad_types.generate_types(params, plain))
    else:
        assert "CONV2D_GW8_PRODUCER_WARPS" not in text


@pytest.mark.parametrize(
    ("params", "config"),
    [
        (Conv2dGw8Params.make(32, 64, 64, 64), WgradConfig(32, 8, 2, 16, 2, 2, image_sync=True)),
        (Conv2dGw8Params.make(8, 64, 28, 28, r=7, s=7, padding=3), WgradConfig(16, 1, 1, 8, 1, 4)),
        (Conv2dGw8Params.make(8, 64, 20, 18, r=3, s=2, padding=(1, 0, 0, 1)), WgradConfig(16, 4)),
    ],
    ids=str,
)
def test_padded_slabs_add_slab_pad_floats_after_each_output_channel(
    params: Conv2dGw8Params, config: WgradConfig
) -> None:
    padded = dataclasses.replace(config, padded_slabs=True)
    taps = params.r * params.s * 8
    assert wgrad_spec.slab_channel_stride(params, config) == taps
    assert wgrad_spec.slab_channel_stride(params, padded) == taps + wgrad_spec.SLAB_PAD
    # Two output channels apart (a warp's stores), the strides' 8-bank groups differ.
    assert (2 * (taps + wgrad_spec.SLAB_PAD)) % 32 in (8, 24)
    slabs = config.warp_rows * config.warps_q * config.block_g * 8
    assert wgrad_spec.reduce_bytes(params, padded) == slabs * (taps + wgrad_spec.SLAB_PAD) * 4
    assert wgrad_spec.reduce_bytes(params, config) == slabs * taps * 4
    text = wgrad_types.generate_types(params, padded)
    assert f"#define CONV2D_GW8_SLAB_PAD {wgrad_spec.SLAB_PAD}" in text
    assert f"spio::DimInfo<K, 8, {taps + wgrad_spec.SLAB_PAD}>" in text
    assert "CONV2D_GW8_SLAB_PAD" not in wgrad_types.generate_types(params, config)


def test_producer_is_placed_not_in_the_space() -> None:
    """The launcher sets producer on a chosen config (wgrad.producer_config_on); the spaces,
    and so the latency models, keep to the tiles."""
    assert {"producer", "padded_slabs", "atomic_sums"} <= set(WgradConfig.PLACEMENT_FIELDS)
    params = Conv2dGw8Params.make(32, 64, 64, 64)
    space = wgrad_spec.config_space(params)
    assert not any(c.producer or c.padded_slabs or c.atomic_sums for c in space)


def test_atomic_sums_make_one_sum_for_the_same_blocks() -> None:
    """Every block adds into one sum of every weight (then the bias gradient's), which the
    zero kernel clears a 16-byte cell per thread; the grid is the same blocks."""
    params = Conv2dGw8Params.make(3, 16, 20, 40, has_bias=True)
    config = WgradConfig(block_q=32, block_g=2, warp_g=2, block_p=8, prefetch=1)
    atomic = dataclasses.replace(config, atomic_sums=True)
    assert wgrad_spec.partial_count(params, config) == 18  # 3 x ceil(20 / 8) x ceil(40 / 32)
    assert wgrad_spec.partial_count(params, atomic) == 1
    assert wgrad_spec.block_sums(params, atomic) == 18
    assert wgrad_spec.grid_blocks(params, atomic) == wgrad_spec.grid_blocks(params, config)
    values = 16 * 9 * 8 + 16
    assert wgrad_spec.workspace_bytes(params, atomic) == values * 4
    assert wgrad_spec.zero_cells(params) == values // 4
    assert wgrad_spec.zero_geometry(params).grid == -(-values // 4 // 256)
    assert wgrad_spec.reduce_slices(params, atomic) == 1  # the reduction copies the one sum
    text = wgrad_types.generate_types(params, atomic)
    assert "#define CONV2D_GW8_ATOMIC_SUMS 1" in text
    assert f"constexpr int kZeroCells = {values // 4};" in text
    assert "kPartials = 1;" in text
    assert "ATOMIC" not in wgrad_types.generate_types(params, config)


def test_atomic_sums_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="atomic_sums must be a bool, got 1"):
        WgradConfig(atomic_sums=1)  # type: ignore[arg-type]


def test_discard_partials_is_a_placement_field_that_only_the_reduce_kernel_reads() -> None:
    params = Conv2dGw8Params.make(4, 64, 16, 16)
    config = WgradConfig(16, 4, 2, 8, 1, 2)
    discarded = dataclasses.replace(config, discard_partials=True)
    assert "discard_partials" in WgradConfig.PLACEMENT_FIELDS
    assert "DISCARD" not in wgrad_types.generate_types(params, config)
    assert "#define CONV2D_GW8_DISCARD_PARTIALS 1" in wgrad_types.generate_types(params, discarded)
    # The same workspace and launches: the main kernel writes the same partial sums.
    assert wgrad_spec.workspace_bytes(params, discarded) == wgrad_spec.workspace_bytes(
        params, config
    )
    assert wgrad_spec.reduce_geometry(params, discarded) == wgrad_spec.reduce_geometry(
        params, config
    )
    with pytest.raises(TypeError, match="discard_partials must be a bool, got 1"):
        WgradConfig(discard_partials=1)  # type: ignore[arg-type]


def test_skip_pad_rows_is_a_placement_field_that_only_the_walk_reads() -> None:
    params = Conv2dGw8Params.make(4, 64, 16, 16, r=5, s=5, padding=2)
    config = WgradConfig(16, 4, 1, 8, 1, 2)
    skipping = dataclasses.replace(config, skip_pad_rows=True)
    assert "skip_pad_rows" in WgradConfig.PLACEMENT_FIELDS
    plain_types = wgrad_types.generate_types(params, config)
    assert "SKIP_PAD_ROWS" not in plain_types
    skipping_types = wgrad_types.generate_types(params, skipping)
    assert "#define CONV2D_GW8_SKIP_PAD_ROWS 1" in skipping_types
    assert skipping_types.startswith(plain_types)  # only the macro more
    # The same grid, shared memory and workspace: the walk's rows and sums are the same.
    for same in (wgrad_spec.launch_geometry, wgrad_spec.workspace_bytes):
        assert same(params, skipping) == same(params, config), same.__name__
    with pytest.raises(TypeError, match="skip_pad_rows must be a bool, got 1"):
        WgradConfig(skip_pad_rows=1)  # type: ignore[arg-type]


def test_the_walk_leaves_products_out_from_the_launchers_filter_rows() -> None:
    # The kernel's threshold for leaving the padding rows' products out is the one the
    # launcher's rule gives the flag by (below it, only the rows below the image go).
    from spio.kernels.conv2d_gw8 import wgrad

    threshold = f"constexpr bool kSkipPadProducts = kRows >= {wgrad.PAD_ROWS_MIN_R};"
    assert threshold in wgrad.kernel_source()


@pytest.mark.parametrize(
    ("config", "discarded"),
    [
        (WgradConfig(16, 8, 2, 8, 1, 2), True),
        (WgradConfig(16, 4, 2, 8, 1, 2), True),
        (WgradConfig(16, 2, 2, 8, 1, 2), False),
        (WgradConfig(16, 1, 1, 8, 1, 2), False),
        (WgradConfig(16, 8, 2, 8, 1, 2, atomic_sums=True), False),
    ],
    ids=["8 groups", "4 groups", "2 groups", "1 group", "atomic sums"],
)
def test_discard_config_on_takes_tiles_of_four_groups_or_more(
    config: WgradConfig, discarded: bool
) -> None:
    placed = discard_config_on(config)
    assert placed.discard_partials is discarded
    assert placed == dataclasses.replace(config, discard_partials=discarded)
    assert discard_config_on(placed) == placed


def test_a_config_with_atomic_sums_needs_deterministic_false() -> None:
    params = Conv2dGw8Params.make(2, 64, 8, 8)
    atomic = WgradConfig(16, 2, 1, 8, 1, 2, atomic_sums=True)
    with pytest.raises(ValueError, match="atomic_sums adds the blocks' sums in an order"):
        wgrad_workspace_bytes(params, atomic)
    assert wgrad_workspace_bytes(params, atomic, deterministic=False) == 0
    rounded = wgrad_workspace_bytes(params, atomic, grad_w_dtype="float16", deterministic=False)
    assert rounded == 64 * 9 * 8 * 4  # one sum to round from


@pytest.mark.parametrize(
    ("shape", "image_sync"),
    [
        ((32, 64, 64, 64), True),  # 4 images side by side, 16 x 16 tiles cover 64 x 64
        ((64, 1024, 16, 16), True),  # 2 images side by side
        ((32, 64, 64, 56), True),  # columns overhanging the image are fine
        ((32, 64, 56, 56), False),  # the last row chunk is short
        ((64, 256, 14, 14), True),  # one short chunk per image, one step
        ((512, 256, 14, 14), False),  # one short chunk per image, walked four steps
        ((64, 64, 64, 64), False),  # one image per block
    ],
)
def test_heuristic_syncs_per_image_on_whole_row_chunks_of_several_images(
    shape: tuple[int, int, int, int], image_sync: bool
) -> None:
    config = wgrad_heuristic.default_config(Conv2dGw8Params.make(*shape))
    assert config.image_sync == image_sync, config


@pytest.mark.parametrize(
    ("shape", "k", "expected"),
    [
        # The longest chunk whose grid holds SHORT_WALK_MIN_BLOCKS blocks, else the shortest.
        ((1, 64, 16, 16), 5, WgradConfig(16, 4, 1, 1, 4, 1)),  # 32 blocks of 1 row
        ((1, 256, 8, 8), 3, WgradConfig(16, 4, 1, 1, 4, 1)),  # 64 blocks
        ((1, 64, 32, 32), 3, WgradConfig(16, 4, 1, 2, 4, 1)),  # 64 blocks of 2 rows
        ((1, 64, 28, 28), 3, WgradConfig(16, 4, 1, 2, 4, 1)),  # 56 blocks of 2 rows
        ((1, 1024, 8, 8), 3, WgradConfig(16, 4, 1, 4, 4, 1)),  # 64 blocks of 4 rows
        ((16, 64, 8, 8), 3, WgradConfig(16, 4, 1, 4, 4, 1)),  # not paired images
        # 7 x 7 filters keep the tile's groups (not _one_group_per_block).
        ((1, 64, 16, 16), 7, WgradConfig(16, 4, 1, 1, 4, 1)),
        # Fewer groups than the tile's: as many as the layer has.
        ((1, 16, 16, 16), 3, WgradConfig(16, 2, 1, 1, 4, 1)),
    ],
    ids=str,
)
def test_small_layers_walk_short_row_chunks(
    shape: tuple[int, int, int, int], k: int, expected: WgradConfig
) -> None:
    params = Conv2dGw8Params.make(*shape, r=k, s=k, padding=k // 2)
    assert wgrad_spec.has_short_chunks(params)
    config = wgrad_heuristic.default_config(params)
    assert config == expected
    assert config in wgrad_spec.config_space(params)


def test_short_chunks_come_after_the_rest_of_a_small_layers_space() -> None:
    params = Conv2dGw8Params.make(2, 64, 16, 16, r=5, s=5, padding=2)
    space = wgrad_spec.config_space(params)
    short = [c.block_p < wgrad_spec.BLOCK_P_VALUES[0] for c in space]
    first = short.index(True)
    assert all(short[first:])
    assert {c.block_p for c in space[first:]} == set(wgrad_spec.SHORT_BLOCK_P_VALUES)
    assert {c.prefetch for c in space[first:]} == set(wgrad_spec.SHORT_PREFETCH_VALUES)
    assert {c.walk_n for c in space[first:]} == {1}
    # The rest is the space without short chunks, as it was.
    large = Conv2dGw8Params.make(64, 64, 16, 16, r=5, s=5, padding=2)
    assert [dataclasses.replace(c, walk_n=1) for c in space[:first] if c.walk_n == 1] == [
        c for c in wgrad_spec.config_space(large) if c.walk_n == 1 and c.block_n <= 2
    ]


@pytest.mark.parametrize(
    "params",
    [
        Conv2dGw8Params.make(128, 64, 64, 64),  # large
        Conv2dGw8Params.make(4, 64, 33, 32),  # one row more than 4096 output pixels
        Conv2dGw8Params.make(1, 64, 4, 4),  # images no taller than the longest short chunk
    ],
    ids=str,
)
def test_other_layers_have_no_short_chunks(params: Conv2dGw8Params) -> None:
    assert not wgrad_spec.has_short_chunks(params)
    space = wgrad_spec.config_space(params)
    assert min(c.block_p for c in space) == wgrad_spec.BLOCK_P_VALUES[0]
    assert wgrad_heuristic.default_config(params).block_p >= wgrad_spec.BLOCK_P_VALUES[0]


def test_short_walks_keep_their_rows_off_tma() -> None:
    # Four groups of 16 columns, as the ladder's tiles that take TMA rows, but timed only
    # without them.
    params = Conv2dGw8Params.make(1, 1024, 48, 48)
    config = wgrad_heuristic.default_config(params)
    assert (config.block_g, config.block_p) == (4, 4)
    assert wgrad_tma_tile.tma_tile(params, config) == config


def test_short_chunks_stop_below_the_images_height() -> None:
    params = Conv2dGw8Params.make(1, 64, 6, 40)  # 6 rows: chunks of 1, 2 and 4
    space = wgrad_spec.config_space(params)
    assert {c.block_p for c in space} == {1, 2, 4, 8}


def test_small_layers_take_the_small_grid_tile() -> None:
    # Too small for the ladder to fill the GPU: one group per block, 8-row walks (too large
    # for short chunks: 8 x 28 x 28 output pixels).
    params = Conv2dGw8Params.make(8, 64, 28, 28)
    assert not wgrad_spec.has_short_chunks(params)
    config = wgrad_heuristic.default_config(params)
    _, block_g, warp_g, block_p, prefetch, block_n = wgrad_heuristic.SMALL_GRID_TILE
    assert (config.block_g, config.warp_g, config.block_p, config.prefetch) == (
        block_g, warp_g, block_p, prefetch,
    )  # fmt: skip
    assert config.block_n == block_n
    ladder = wgrad_heuristic._fit_tile(params, wgrad_heuristic.TILE_LADDER[-1])
    assert ladder is not None
    assert wgrad_heuristic._total_warps(params, config) > wgrad_heuristic._total_warps(
        params, ladder
    )


@pytest.mark.parametrize(
    "shape",
    [
        (1, 256, 112, 112),  # a large image: the short walks' partial sums cost more
        (128, 64, 64, 64),  # the ladder fills the GPU
    ],
)
def test_larger_layers_keep_the_ladder(shape: tuple[int, int, int, int]) -> None:
    config = wgrad_heuristic.default_config(Conv2dGw8Params.make(*shape))
    assert (config.block_g, config.block_p) != wgrad_heuristic.SMALL_GRID_TILE[1:4:2]


def test_seven_by_seven_filters_take_one_group_per_block() -> None:
    params = Conv2dGw8Params.make(256, 512, 7, 7, r=7, s=7, padding=3)
    config = wgrad_heuristic.default_config(params)
    assert (config.block_g, config.warp_g, config.block_n, config.image_sync) == (1, 1, 4, False)
    wgrad_spec.check_config(params, config)
    three = wgrad_heuristic.default_config(Conv2dGw8Params.make(256, 512, 7, 7))
    assert three.block_g > 1  # smaller filters keep the tile rules' groups


def test_check_config_against_params() -> None:
    params = Conv2dGw8Params.make(1, 16, 8, 8)
    with pytest.raises(ValueError, match="block_g = 4 must divide the groups c / 8 = 2"):
        wgrad_spec.check_config(params, WgradConfig(block_g=4, warp_g=2))
    big = Conv2dGw8Params.make(1, 64, 8, 8, r=7, s=7, padding=3)
    with pytest.raises(ValueError, match="accumulator registers exceed"):
        wgrad_spec.check_config(big, WgradConfig(warp_g=2))
    with pytest.raises(TypeError, match="config must be a WgradConfig"):
        wgrad_spec.check_config(params, "fast")  # type: ignore[arg-type]


@pytest.mark.parametrize("params", SHAPES, ids=str)
def test_config_space_is_valid_and_holds_the_default(params: Conv2dGw8Params) -> None:
    space = wgrad_spec.config_space(params)
    assert space
    assert len(set(space)) == len(space)
    for config in space:
        wgrad_spec.check_config(params, config)
        geometry = wgrad_spec.launch_geometry(params, config)
        assert geometry.block == 32 * config.warps <= 512
        assert 0 < geometry.shared_mem <= MAX_SHARED_MEM
        assert wgrad_spec.reduce_bytes(params, config) <= geometry.shared_mem
    assert wgrad_heuristic.default_config(params) in space


def test_workspace_holds_one_partial_per_image_row_chunk_and_strip() -> None:
    params = Conv2dGw8Params.make(3, 16, 20, 40)
    config = WgradConfig(block_q=32, block_g=2, warp_g=2, block_p=8, prefetch=1)
    partials = 3 * 3 * 2  # n x ceil(20 / 8) x ceil(40 / 32)
    assert wgrad_spec.partial_count(params, config) == partials
    assert wgrad_workspace_bytes(params, config) == partials * 16 * 9 * 8 * 4
    assert wgrad_spec.grid_blocks(params, config) == partials
    # 18 partials: 32 slices of 8 cells (32 weights) per reduce block.
    assert wgrad_spec.reduce_geometry(params, config).grid == -(-16 * 9 * 8 // 32)


@pytest.mark.parametrize(("n", "slices"), [(1, 1), (2, 2), (3, 4), (16, 16), (17, 32), (64, 32)])
def test_the_reduce_kernel_adds_a_slice_per_partial_up_to_32(n: int, slices: int) -> None:
    params = Conv2dGw8Params.make(n, 1024, 8, 8)
    config = WgradConfig(block_q=16, block_g=4, warp_g=1, block_p=8, prefetch=1)
    assert wgrad_spec.partial_count(params, config) == n  # one row chunk and strip per image
    assert wgrad_spec.reduce_slices(params, config) == slices
    cells = 256 // slices
    assert wgrad_spec.reduce_cells(params, config) == cells
    geometry = wgrad_spec.reduce_geometry(params, config)
    assert (geometry.grid, geometry.block) == (1024 * 9 * 8 // (4 * cells), 256)
    types_h = wgrad_types.generate_types(params, config)
    assert f"kReduceSlices = {slices};" in types_h
    assert f"kReduceCells = {cells};" in types_h


def test_images_per_block_divide_the_partials() -> None:
    params = Conv2dGw8Params.make(64, 1024, 16, 16)
    config = WgradConfig(16, 2, 2, 16, 1, 4)  # 4 warps of one image each
    single = dataclasses.replace(config, block_n=1)
    assert wgrad_spec.partial_count(params, single) == 4 * wgrad_spec.partial_count(params, config)
    assert config.warps == 4 * single.warps
    assert wgrad_spec.grid_blocks(params, single) == 4 * wgrad_spec.grid_blocks(params, config)
    odd = Conv2dGw8Params.make(5, 16, 9, 9)
    assert wgrad_spec.partial_count(odd, WgradConfig(16, 2, 2, 16, 1, 4)) == 2  # ceil(5 / 4)


def test_walked_images_divide_the_partials_not_the_warps() -> None:
    params = Conv2dGw8Params.make(64, 1024, 16, 16)
    side_by_side = WgradConfig(16, 4, 2, 16, 2, 2)
    walked = dataclasses.replace(side_by_side, walk_n=2)
    assert walked.images == 4
    assert walked.warps == side_by_side.warps
    assert wgrad_spec.partial_count(params, side_by_side) == 2 * wgrad_spec.partial_count(
        params, walked
    )
    assert wgrad_spec.shared_mem_bytes(params, walked) == wgrad_spec.shared_mem_bytes(
        params, side_by_side
    )
    odd = Conv2dGw8Params.make(5, 16, 9, 9)
    assert wgrad_spec.partial_count(odd, WgradConfig(16, 2, 2, 16, 1, 2, 2)) == 2
    assert "constexpr int kWalkImages = 2;" in wgrad_types.generate_types(params, walked)


def test_segments_make_one_partial_per_block_of_each_strip_and_group_slice() -> None:
    params = Conv2dGw8Params.make(7, 64, 20, 40)  # 3 strips of 16 columns
    config = WgradConfig(16, 4, 2, 8, 2, 2, segments=33)
    assert wgrad_spec.column_strips(params, config) == 3
    assert wgrad_spec.stream_rows(params, config) == 4 * 20  # steps x rows
    assert wgrad_spec.partial_count(params, config) == 33 * 3
    assert wgrad_spec.grid_blocks(params, config) == 33 * 3 * 2  # 2 slices of 4 groups
    assert wgrad_workspace_bytes(params, config) == 33 * 3 * 64 * 9 * 8 * 4
    types_h = wgrad_types.generate_types(params, config)
    for constant in ("kSegments = 33;", "kSteps = 4;", "kPartials = 99;"):
        assert f"constexpr int {constant}" in types_h


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"segments": -1}, ValueError, r"segments must be >= 0 \(0: row chunks\), got -1"),
        ({"segments": 4, "walk_n": 2}, ValueError, "so walk_n must be 1, got 2"),
        ({"segments": 2.0}, TypeError, r"segments must be an int, got 2\.0"),
        ({"segments": True}, TypeError, "segments must be an int, got True"),
    ],
)
def test_segments_errors(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        WgradConfig(**kwargs)


def test_segments_at_most_one_per_output_row() -> None:
    params = Conv2dGw8Params.make(2, 16, 5, 20)  # 2 steps x 5 rows
    fits = WgradConfig(16, 2, 2, 8, 1, segments=10)
    wgrad_spec.check_config(params, fits)
    with pytest.raises(ValueError, match=r"segments = 11 must be at most .* = 10\)"):
        wgrad_spec.check_config(params, dataclasses.replace(fits, segments=11))


@pytest.mark.parametrize(
    ("shape", "tile", "slots", "segments"),
    [
        ((128, 64, 64, 64), WgradConfig(16, 8, 2, 64, 2, 4, 2), 132, 33),  # 4 strips
        ((128, 64, 64, 64), WgradConfig(64, 8, 2, 64, 2, 1, 2), 132, 132),  # 1 strip
        ((128, 256, 14, 14), WgradConfig(16, 8, 2, 16, 2, 1), 132, 33),  # 4 slices
        ((128, 1024, 16, 16), WgradConfig(16, 8, 2, 16, 2, 1), 264, 16),  # 16 slices
        ((1, 8, 3, 3), WgradConfig(16, 1, 1, 8, 1, 1), 132, 3),  # one segment per row
    ],
)
def test_stream_config_shares_the_slots_among_strips_and_group_slices(
    shape: tuple[int, int, int, int], tile: WgradConfig, slots: int, segments: int
) -> None:
    params = Conv2dGw8Params.make(*shape)
    config = wgrad_spec.stream_config(params, tile, slots)
    assert config == dataclasses.replace(tile, walk_n=1, segments=segments)
    wgrad_spec.check_config(params, config)


def test_segments_need_steps_of_at_least_prefetch_rows() -> None:
    params = Conv2dGw8Params.make(4, 16, 1, 9, r=1, s=1, padding=0)  # one row per step
    wgrad_spec.check_config(params, WgradConfig(16, 2, 2, 8, 1, segments=3))
    with pytest.raises(ValueError, match=r"p \+ r - 1 = 1\) must be at least as many"):
        wgrad_spec.check_config(params, WgradConfig(16, 2, 2, 8, 2, segments=3))


def test_stream_config_needs_slots() -> None:
    params = Conv2dGw8Params.make(1, 8, 3, 3)
    with pytest.raises(ValueError, match=r"slots must be an int >= 1 .* got 0"):
        wgrad_spec.stream_config(params, WgradConfig(16, 1, 1, 8, 1, 1), 0)


def test_generate_types_is_deterministic() -> None:
    params = SHAPES[1]
    config = wgrad_heuristic.default_config(params)
    first = wgrad_types.generate_types(params, config)
    assert first == wgrad_types.generate_types(dataclasses.replace(params), config)
    assert "constexpr int kPartials" in first


def test_wgrad_reference_matches_torch_grad() -> None:
    torch = pytest.importorskip("torch")
    params = Conv2dGw8Params.make(2, 16, 6, 5, r=3, s=2, padding=1)
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(params.input_shape, generator=gen)
    grad_y = torch.randn(params.output_shape, generator=gen)
    expected = torch.nn.grad.conv2d_weight(
        x.permute(0, 3, 1, 2),
        (params.c, 8, params.r, params.s),
        grad_y.permute(0, 3, 1, 2),
        padding=1,
        groups=params.groups,
    ).permute(0, 2, 3, 1)
    torch.testing.assert_close(wgrad_reference(x, grad_y, params), expected, rtol=1e-5, atol=1e-5)


COMPILE_CASES = (
    [
        (params, config)
        for params in (
            Conv2dGw8Params.make(8, 64, 64, 64),
            Conv2dGw8Params.make(1, 8, 7, 9, r=1, s=7, padding=(0, 0, 3, 2), dtype="bfloat16"),
            Conv2dGw8Params.make(2, 32, 9, 5, r=7, s=2, padding=(6, 0, 1, 0)),
        )
        for config in covering_configs(
            wgrad_spec.config_space(params), wgrad_heuristic.default_config(params)
        )[:14]
    ]
    + [
        # Paired images (block_q = 8), each paired field value: images side by side and walked,
        # per-row barriers, TMA rows.
        (Conv2dGw8Params.make(8, 64, 8, 8), config)
        for config in (
            WgradConfig(8, 1, 1, 8, 1, 2),
            WgradConfig(8, 8, 2, 8, 2, 4, 2, image_sync=True),
            WgradConfig(8, 8, 1, 8, 2, 2, 4, tma=True),
            WgradConfig(8, 8, 2, 8, 1, 4, image_sync=True, tma=True),
        )
    ]
    + [
        # Four images side by side (block_q = 4), walked, with odd images.
        (Conv2dGw8Params.make(7, 64, 4, 3), config)
        for config in (WgradConfig(4, 1, 1, 8, 2, 4), WgradConfig(4, 8, 2, 8, 1, 4, 2))
    ]
    + [
        # Segments of the stream of rows: cp.async and TMA rows, per-image barriers, paired
        # images, a 7 x 7 filter.
        (Conv2dGw8Params.make(8, 64, 64, 64), WgradConfig(16, 8, 2, 64, 2, 4, segments=13)),
        (
            Conv2dGw8Params.make(8, 64, 64, 64),
            WgradConfig(16, 8, 2, 64, 2, 2, image_sync=True, tma=True, segments=9),
        ),
        (Conv2dGw8Params.make(8, 64, 8, 8), WgradConfig(8, 8, 2, 8, 2, 4, segments=5)),
    ]
    + [
        # Producer warps: one for the block, one per warp row, with segments, paired images, a
        # 5 x 5 filter; before sm_90 their warps leave and the walk loads its rows.
        (Conv2dGw8Params.make(8, 64, 64, 64), config)
        for config in (
            WgradConfig(32, 8, 2, 64, 2, 1, 2, tma=True, producer=True),
            WgradConfig(16, 8, 2, 64, 2, 4, image_sync=True, tma=True, producer=True),
            WgradConfig(16, 8, 2, 64, 2, 2, image_sync=True, tma=True, segments=9, producer=True),
        )
    ]
    + [
        (
            Conv2dGw8Params.make(8, 64, 8, 8),
            WgradConfig(8, 8, 2, 8, 1, 4, image_sync=True, tma=True, producer=True),
        ),
        (
            Conv2dGw8Params.make(4, 64, 16, 16, r=5, s=5, padding=2),
            WgradConfig(16, 8, 1, 16, 1, 1, tma=True, segments=5, producer=True),
        ),
        # Padded slabs: with producer warps, a 7 x 2 filter, one partial per weight.
        (
            Conv2dGw8Params.make(8, 64, 64, 64),
            WgradConfig(
                16, 8, 2, 64, 2, 4, image_sync=True, tma=True, producer=True, padded_slabs=True
            ),
        ),
        (
            Conv2dGw8Params.make(2, 32, 9, 5, r=7, s=2, padding=(6, 0, 1, 0)),
            WgradConfig(16, 1, 1, 8, 1, 2, padded_slabs=True),
        ),
        (Conv2dGw8Params.make(2, 64, 8, 8), WgradConfig(8, 8, 2, 8, 2, 2, padded_slabs=True)),
        (
            Conv2dGw8Params.make(2, 32, 9, 5, r=7, s=2, padding=(6, 0, 1, 0)),
            WgradConfig(16, 1, 1, 8, 1, 2, segments=3),
        ),
        # Atomic sums: with TMA rows, producer warps, padded slabs and a bias; with segments
        # and a 7 x 2 filter; images paired in each K step.
        (
            Conv2dGw8Params.make(8, 64, 64, 64, has_bias=True),
            WgradConfig(
                16,
                8,
                2,
                64,
                2,
                4,
                image_sync=True,
                tma=True,
                producer=True,
                padded_slabs=True,
                atomic_sums=True,
            ),
        ),
        (
            Conv2dGw8Params.make(2, 32, 9, 5, r=7, s=2, padding=(6, 0, 1, 0)),
            WgradConfig(16, 1, 1, 8, 1, 2, segments=3, atomic_sums=True),
        ),
        (
            Conv2dGw8Params.make(5, 64, 8, 8, has_bias=True),
            WgradConfig(8, 8, 2, 8, 2, 2, 2, atomic_sums=True),
        ),
    ]
)


def test_compile_cases_cover_every_value() -> None:
    configs = [c for p, c in COMPILE_CASES if p.c == 64]
    for field, values in (
        ("block_q", wgrad_spec.BLOCK_Q_VALUES),
        ("block_g", wgrad_spec.BLOCK_G_VALUES),
        ("warp_g", wgrad_spec.WARP_G_VALUES),
        ("block_p", wgrad_spec.BLOCK_P_VALUES),
        ("prefetch", wgrad_spec.PREFETCH_VALUES),
        ("block_n", wgrad_spec.BLOCK_N_VALUES),
        ("walk_n", wgrad_spec.WALK_N_VALUES),
    ):
        assert {getattr(c, field) for c in configs} == set(values), field


@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
@pytest.mark.parametrize(("params", "config"), COMPILE_CASES, ids=str)
def test_nvrtc_compiles(params: Conv2dGw8Params, config: WgradConfig, arch: str) -> None:
    code = compile_wgrad(params, config, arch)
    assert code.arch == arch
    assert code.code


@pytest.mark.slow
@pytest.mark.parametrize("params", SHAPES, ids=str)
def test_nvrtc_compiles_whole_space(params: Conv2dGw8Params) -> None:
    for config in wgrad_spec.config_space(params):
        compile_wgrad(params, config, "sm_90")


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        # Large images: whole pixel lines, two images side by side on their own barriers.
        (
            Conv2dGw8Params.make(128, 64, 64, 64),
            WgradConfig(16, 8, 2, 64, 2, 2, image_sync=True),
        ),
        (
            Conv2dGw8Params.make(256, 64, 56, 56),
            WgradConfig(16, 8, 2, 64, 2, 2, image_sync=True),
        ),
        # ... not where the row chunks would be uneven (112 = 64 + 48): the ladder's first tile.
        (Conv2dGw8Params.make(64, 64, 112, 112), WgradConfig(32, 4, 2, 64, 2, 1)),
        # ... nor where half as many blocks would not fill the GPU.
        (Conv2dGw8Params.make(64, 64, 64, 64), WgradConfig(32, 4, 2, 32, 2, 1)),
        # The H200 sweeps' best picks (see wgrad_heuristic.TILE_LADDER).
        (Conv2dGw8Params.make(32, 64, 64, 64), WgradConfig(16, 4, 1, 16, 1, 4, image_sync=True)),
        # 16 columns: two images per block keep the 32-column tile's partial count, and the
        # partials (14% of the bytes) halve again by walking two steps of images.
        (
            Conv2dGw8Params.make(64, 1024, 16, 16),
            WgradConfig(16, 4, 2, 16, 2, 2, 2, image_sync=True),
        ),
        # The same tile where half the blocks would not fill the GPU: no walk.
        (Conv2dGw8Params.make(32, 1024, 16, 16), WgradConfig(16, 4, 2, 16, 2, 2, image_sync=True)),
        # Partials 18% of the bytes and blocks to spare: four steps.
        (Conv2dGw8Params.make(512, 256, 14, 14), WgradConfig(16, 4, 2, 16, 2, 2, 4)),
        # Images at most 8 wide: the tiles' 32 columns as 8 of each of four images, two to a
        # warp's K step (the H200 sweep's best config).
        (Conv2dGw8Params.make(256, 1024, 8, 8), WgradConfig(8, 4, 2, 8, 2, 4, 4)),
        # ... and the small-grid tile so (the best of 8x256x8x8's sweep, which now walks
        # short chunks: SHORT_WALK_TILE).
        (Conv2dGw8Params.make(72, 256, 8, 8), WgradConfig(8, 1, 1, 8, 2, 4)),
    ],
    ids=str,
)
def test_default_config_follows_the_ladder(params: Conv2dGw8Params, expected: WgradConfig) -> None:
    assert wgrad_heuristic.default_config(params) == expected


def test_default_config_fits_large_filters() -> None:
    # 7 x 7: the ladder's groups per block need more reduction memory than a block may use.
    params = Conv2dGw8Params.make(32, 64, 56, 56, r=7, s=7, padding=3)
    config = wgrad_heuristic.default_config(params)
    wgrad_spec.check_config(params, config)
    assert config.warp_g == 1


def test_paired_configs_put_two_images_in_each_warp() -> None:
    config = WgradConfig(block_q=8, block_g=4, warp_g=2, block_p=8, prefetch=2, block_n=4)
    assert (config.warp_images, config.warp_rows, config.warps_q, config.warps) == (2, 2, 1, 4)
    unpaired = WgradConfig(block_q=32, block_g=4, warp_g=2, block_p=8, prefetch=2, block_n=2)
    assert (unpaired.warp_images, unpaired.warp_rows, unpaired.warps) == (1, 2, 8)
    params = Conv2dGw8Params.make(8, 64, 8, 8)
    # One slab of reduction memory per warp row: two here, each the block's weights in f32.
    assert wgrad_spec.reduce_bytes(params, config) == 2 * 4 * 8 * 9 * 8 * 4


def test_only_images_at_most_8_wide_get_paired_configs() -> None:
    def paired(params: Conv2dGw8Params) -> list[WgradConfig]:
        return [c for c in wgrad_spec.config_space(params) if c.block_q == 8]

    narrow = paired(Conv2dGw8Params.make(4, 64, 9, 8))
    assert narrow
    assert all(c.block_n % 2 == 0 for c in narrow)
    assert all(c.warp_rows > 1 for c in narrow if c.image_sync)
    assert not paired(Conv2dGw8Params.make(4, 64, 8, 9))  # 9 output columns
    assert not paired(Conv2dGw8Params.make(1, 64, 8, 8))  # one image: nothing to pair


# (Batches of more than SHORT_WALK_MAX_PIXELS output pixels: smaller ones walk short chunks.)
@pytest.mark.parametrize("n", [84, 97, 128, 512])
@pytest.mark.parametrize("r", [1, 3, 7])
def test_paired_defaults_are_in_the_space(n: int, r: int) -> None:
    params = Conv2dGw8Params.make(n, 64, 7, 7, r=r, s=r, padding=r // 2)
    config = wgrad_heuristic.default_config(params)
    assert config.block_q == wgrad_spec.PAIRED_BLOCK_Q
    assert config in wgrad_spec.config_space(params)


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        # The ladder's 4-group tiles take 8 groups, TMA rows and two rows ahead.
        (
            Conv2dGw8Params.make(32, 64, 64, 64),
            WgradConfig(16, 8, 2, 16, 2, 4, image_sync=True, tma=True),
        ),
        # Their images sync on their own, with short last chunks (14 of 16 rows) and walked,
        # four images a step where the grid stays wide enough.
        (
            Conv2dGw8Params.make(512, 256, 14, 14),
            WgradConfig(16, 8, 2, 16, 2, 4, 4, image_sync=True, tma=True),
        ),
        (
            Conv2dGw8Params.make(32, 64, 56, 56),
            WgradConfig(16, 8, 2, 16, 2, 4, image_sync=True, tma=True),
        ),
        (Conv2dGw8Params.make(64, 64, 64, 64), WgradConfig(32, 8, 2, 32, 2, 1, tma=True)),
    ],
    ids=str,
)
def test_tma_tile_takes_eight_groups_and_tma_rows(
    params: Conv2dGw8Params, expected: WgradConfig
) -> None:
    config = wgrad_tma_tile.tma_tile(params, wgrad_heuristic.default_config(params))
    assert config == expected
    assert config in wgrad_spec.config_space(params)


@pytest.mark.parametrize(
    ("params", "block_q"),
    [
        (Conv2dGw8Params.make(128, 64, 48, 48), 48),
        (Conv2dGw8Params.make(128, 64, 40, 40), 48),
        (Conv2dGw8Params.make(64, 64, 36, 36), 48),
        # Images wider than 48 columns keep their 32-column strips.
        (Conv2dGw8Params.make(64, 64, 64, 64), 32),
        (Conv2dGw8Params.make(64, 64, 52, 52), 32),
    ],
    ids=str,
)
def test_tma_tile_covers_images_33_to_48_wide_with_one_strip(
    params: Conv2dGw8Params, block_q: int
) -> None:
    # wgrad_tma_tile._one_strip_tile: the 8-group tile's 32-column strips of one image
    # become one strip of three warps across.
    config = wgrad_tma_tile.tma_tile(params, wgrad_heuristic.default_config(params))
    assert config.block_q == block_q
    assert (config.block_g, config.block_n, config.tma) == (8, 1, True)
    wgrad_spec.check_config(params, config)


@pytest.mark.parametrize(
    "shape",
    [(n, c, hw) for n in (32, 128, 512) for c in (64, 256, 1024) for hw in (13, 14, 28, 56)],
    ids=str,
)
def test_tma_tiles_sync_their_images_on_their_own(shape: tuple[int, int, int]) -> None:
    # Whatever the row chunks and walk: a short last chunk or walked steps included.
    n, c, hw = shape
    params = Conv2dGw8Params.make(n, c, hw, hw)
    config = wgrad_tma_tile.tma_tile(params, wgrad_heuristic.default_config(params))
    if config.tma and config.warp_rows > 1:
        assert config.image_sync
    if config.walk_n not in wgrad_spec.WALK_N_VALUES:  # _fewest_waves' walks
        wgrad_spec.check_config(params, config)
        config = dataclasses.replace(config, walk_n=max(wgrad_spec.WALK_N_VALUES))
    assert config in wgrad_spec.config_space(params)


@pytest.mark.parametrize(
    "params",
    [
        # Already 8 groups (FULL_LINE_TILE) in one and a half waves: TMA rows alone did not
        # pay.
        Conv2dGw8Params.make(192, 64, 64, 64),
        # Half the blocks would leave the GPU under MIN_WARPS_PER_SM warps per SM.
        Conv2dGw8Params.make(8, 64, 56, 56),
        # One group a block (the small grids' tile).
        Conv2dGw8Params.make(16, 128, 28, 28),
        # 4 groups in all: nothing to widen to.
        Conv2dGw8Params.make(64, 32, 64, 64),
        # Narrow images' tiles (8 columns of each of two images a warp) were not timed so.
        Conv2dGw8Params.make(256, 256, 7, 7),
        # Where TMA rows alone did not pay (_overhang_tma_tile): full lines whose strips fit
        # the image, 1 x 1 filters, and half lines of 3 x 3 filters overhanging (a small
        # layer's tile, and 12 groups).
        Conv2dGw8Params.make(192, 128, 32, 32),
        Conv2dGw8Params.make(512, 128, 28, 28, r=1, s=1, padding=0),
        Conv2dGw8Params.make(32, 128, 28, 28),
        Conv2dGw8Params.make(128, 96, 40, 40),
        # The small grids' tile of a wide filter (never timed with TMA rows; its 3 x 3 form
        # lost with them).
        Conv2dGw8Params.make(32, 64, 16, 16, r=5, s=5, padding=2),
        Conv2dGw8Params.make(8, 256, 32, 32, r=7, s=7, padding=3),
    ],
    ids=str,
)
def test_tma_tile_keeps_other_tiles(params: Conv2dGw8Params) -> None:
    default = wgrad_heuristic.default_config(params)
    assert wgrad_tma_tile.tma_tile(params, default) == default


@pytest.mark.parametrize(
    "params",
    [
        # Full pixel lines whose 16-column strips overhang 28, 36 and 40 columns, in grids
        # too small to walk (48 images of 28 x 28: walked, under MIN_WARPS_PER_SM warps).
        Conv2dGw8Params.make(48, 512, 28, 28),
        Conv2dGw8Params.make(96, 128, 36, 36),
        Conv2dGw8Params.make(64, 256, 40, 40),
        # Wide filters, whatever their groups and columns: 8 groups would need more
        # accumulators than a thread may hold; one group a block at 7 x 7.
        Conv2dGw8Params.make(128, 256, 16, 16, r=5, s=5, padding=2),
        Conv2dGw8Params.make(64, 128, 48, 48, r=5, s=5, padding=2),
        Conv2dGw8Params.make(16, 64, 56, 56, r=7, s=7, padding=3),
    ],
    ids=str,
)
def test_tma_tile_gives_overhanging_lines_and_wide_filters_tma_rows(
    params: Conv2dGw8Params,
) -> None:
    default = wgrad_heuristic.default_config(params)
    assert not default.tma
    assert wgrad_tma_tile.tma_tile(params, default) == dataclasses.replace(default, tma=True)


@pytest.mark.parametrize(
    ("params", "walk_n"),
    [
        # Two waves of two-image blocks walk two steps (_walked_full_line_tile) ...
        (Conv2dGw8Params.make(256, 64, 64, 64), 2),
        (Conv2dGw8Params.make(256, 128, 32, 32), 2),
        (Conv2dGw8Params.make(256, 64, 56, 56), 2),  # (its strips overhang the image too)
        # ... and one wave walks one step (_four_image_full_line_tile); either way one wave
        # of two-image blocks, two an SM, becomes one block of four images an SM.
        (Conv2dGw8Params.make(128, 128, 32, 32), 1),
        (Conv2dGw8Params.make(128, 64, 64, 64), 1),
        (Conv2dGw8Params.make(40, 384, 32, 32), 1),  # 240 blocks: 120 reach 90% of the SMs
        # Strips overhanging 28 and 56 columns (without the rule, two images by TMA rows).
        (Conv2dGw8Params.make(128, 128, 28, 28), 1),
        (Conv2dGw8Params.make(128, 64, 56, 56), 1),
    ],
    ids=str,
)
def test_tma_tile_gives_full_lines_four_images_by_tma_in_one_wave(
    params: Conv2dGw8Params, walk_n: int
) -> None:
    default = wgrad_heuristic.default_config(params)
    assert (default.block_g, default.block_n, default.walk_n, default.tma) == (8, 2, 1, False)
    pairs = wgrad_spec.grid_blocks(params, default) // walk_n  # two-image blocks, walked
    assert pairs <= wgrad_tma_tile.FULL_LINE_BLOCKS_PER_SM * 132
    config = wgrad_tma_tile.tma_tile(params, default)
    assert config == dataclasses.replace(default, block_n=4, walk_n=walk_n, tma=True)
    assert config.image_sync
    assert config in wgrad_spec.config_space(params)
    assert 2 * wgrad_spec.grid_blocks(params, config) == pairs


@pytest.mark.parametrize(
    ("params", "sm_count"),
    [
        # 1 x 1 and 2 x 2 filters (1 x 1: 0.92-1.06x with four images by TMA).
        (Conv2dGw8Params.make(128, 256, 14, 14, r=1, s=1, padding=0), 132),
        (Conv2dGw8Params.make(128, 128, 32, 32, r=1, s=1, padding=0), 132),
        (Conv2dGw8Params.make(64, 128, 64, 64, r=2, s=2, padding=(1, 0, 1, 0)), 132),
        # One and a half waves of two-image blocks.
        (Conv2dGw8Params.make(192, 128, 32, 32), 132),
        # 128 blocks of four images would leave 16 of 144 SMs idle.
        (Conv2dGw8Params.make(128, 128, 32, 32), 144),
    ],
    ids=str,
)
def test_tma_tile_keeps_two_images_where_four_would_not_pay(
    params: Conv2dGw8Params, sm_count: int
) -> None:
    default = wgrad_heuristic.default_config(params, sm_count)
    assert wgrad_tma_tile.tma_tile(params, default, sm_count).block_n == default.block_n == 2


@pytest.mark.parametrize(
    ("params", "sm_count"),
    [
        # Walked, the grid would stay two waves (384 blocks), and four images walked into
        # the fewest waves would leave two (192).
        (Conv2dGw8Params.make(32, 768, 64, 64), 132),
        # Walked, the grid would leave the GPU under MIN_WARPS_PER_SM warps per SM.
        (Conv2dGw8Params.make(128, 64, 64, 64), 132),
        (Conv2dGw8Params.make(192, 64, 64, 64), 132),
        # The same layer as walked above, on a GPU of more SMs.
        (Conv2dGw8Params.make(256, 64, 64, 64), 160),
        # A 1 x 1 filter (its full-line tile walked lost 0.97x).
        (Conv2dGw8Params.make(512, 128, 16, 16, r=1, s=1, padding=0), 132),
    ],
    ids=str,
)
def test_tma_tile_leaves_full_lines_unwalked_where_the_waves_would_not_become_one(
    params: Conv2dGw8Params, sm_count: int
) -> None:
    default = wgrad_heuristic.default_config(params, sm_count)
    assert wgrad_tma_tile.tma_tile(params, default, sm_count).walk_n == 1


@pytest.mark.parametrize(
    ("shape", "sm_count", "block_n"),
    [
        ((512, 256, 14), 132, 4),  # 128 blocks of four images, walked four steps
        ((256, 256, 14), 132, 4),  # 128 blocks, walked two steps
        ((128, 1024, 16), 132, 4),
        ((512, 256, 14), 144, 2),  # 128 blocks would leave 16 of 144 SMs idle
        # Not walked: one wave of 256 two-image blocks, two an SM, becomes 128 blocks ...
        ((128, 256, 14), 132, 4),
        ((64, 512, 12), 132, 4),
        ((128, 256, 14), 144, 2),  # ... but for 16 of 144 SMs
        ((192, 256, 14), 132, 2),  # one and a half waves of two-image blocks
    ],
    ids=str,
)
def test_tma_tiles_take_four_images_where_their_grid_stays_wide(
    shape: tuple[int, int, int], sm_count: int, block_n: int
) -> None:
    n, c, hw = shape
    params = Conv2dGw8Params.make(n, c, hw, hw)
    config = wgrad_tma_tile.tma_tile(
        params, wgrad_heuristic.default_config(params, sm_count), sm_count
    )
    assert config.tma
    assert config.image_sync
    assert config.block_n == block_n
    if block_n == 4:
        share = wgrad_tma_tile.FOUR_IMAGES_MIN_SM_SHARE
        assert wgrad_spec.grid_blocks(params, config) >= share * sm_count
    assert config in wgrad_spec.config_space(params)


def test_tma_tile_counts_the_gpus_sms() -> None:
    # 32x64x64x64's 8-group grid holds 2048 warps: enough for 132 SMs, not for 264 (under
    # EIGHT_GROUP_MIN_WARPS_PER_SM each).
    params = Conv2dGw8Params.make(32, 64, 64, 64)
    default = wgrad_heuristic.default_config(params, 264)
    assert wgrad_tma_tile.tma_tile(params, default, 264) == default
    assert wgrad_tma_tile.tma_tile(params, default, 132).tma


@pytest.mark.parametrize(("arch", "tma"), [("sm_90", True), ("sm_80", False)])
def test_the_launchers_default_takes_the_tma_tile_on_gpus_with_tma(
    monkeypatch: pytest.MonkeyPatch, arch: str, tma: bool
) -> None:
    import spio.jit
    from spio.kernels.conv2d_gw8 import wgrad

    info = SimpleNamespace(sm_count=132, arch=arch)
    monkeypatch.setattr(spio.jit, "device_info", lambda device: info)
    # Balancing the walk compiles the kernel to learn its occupancy: not here.
    monkeypatch.setattr(wgrad, "balanced_config_on", lambda params, config, device: config)
    params = Conv2dGw8Params.make(32, 64, 64, 64)
    config = wgrad.default_config_on.__wrapped__(params)
    assert config.tma is tma
    assert config.block_g == (8 if tma else 4)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"block_r": -1}, ValueError, r"block_r must be >= 0 \(0: all filter rows\), got -1"),
        ({"block_r": True}, TypeError, "block_r must be an int, got True"),
        ({"block_r": 1.0}, TypeError, r"block_r must be an int, got 1\.0"),
        ({"block_r": 1, "segments": 4}, ValueError, "so segments must be 0, got 4"),
    ],
)
def test_block_r_errors(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        WgradConfig(**kwargs)


@pytest.mark.parametrize("block_r", [2, 4, 8])
def test_block_r_divides_the_filters_rows(block_r: int) -> None:
    params = Conv2dGw8Params.make(2, 64, 8, 8, r=6, s=3, padding=(3, 1))
    config = WgradConfig(16, 2, 1, 4, 2, 1, block_r=block_r)
    if block_r == 2:
        wgrad_spec.check_config(params, config)
        return
    with pytest.raises(ValueError, match=rf"block_r must divide .* r = 6 .* got {block_r}"):
        wgrad_spec.check_config(params, config)


def test_split_filter_rows_multiply_the_blocks_not_the_partial_sums() -> None:
    params = Conv2dGw8Params.make(2, 64, 8, 8, r=7, s=7, padding=3)
    whole = WgradConfig(8, 2, 1, 4, 2, 2)
    split = dataclasses.replace(whole, block_r=1)
    assert wgrad_spec.filter_row_tiles(params, split) == 7
    assert wgrad_spec.grid_blocks(params, split) == 7 * wgrad_spec.grid_blocks(params, whole)
    assert wgrad_spec.partial_count(params, split) == wgrad_spec.partial_count(params, whole) == 2
    assert wgrad_workspace_bytes(params, split) == wgrad_workspace_bytes(params, whole)
    # A block's accumulators and shared-memory slabs hold its filter rows only.
    assert wgrad_spec.tap_pairs(params, split) * 7 == wgrad_spec.tap_pairs(params, whole)
    assert wgrad_spec.reduce_bytes(params, split) < wgrad_spec.reduce_bytes(params, whole)
    # warp_g 2 of a 7 x 7 filter's 7 x 4 pairs overflows the registers; of one row it fits.
    wgrad_spec.check_config(params, dataclasses.replace(split, warp_g=2))
    with pytest.raises(ValueError, match="accumulator registers exceed"):
        wgrad_spec.check_config(params, dataclasses.replace(whole, warp_g=2))


def test_split_filter_rows_types() -> None:
    params = Conv2dGw8Params.make(2, 64, 8, 8, r=7, s=7, padding=3)
    whole = WgradConfig(8, 2, 1, 4, 2, 2)
    split = wgrad_types.generate_types(params, dataclasses.replace(whole, block_r=1))
    assert "#define CONV2D_GW8_FILTER_ROW_TILES 1" in split
    assert "constexpr int kRows = 1;" in split
    assert "BLOCK_R" in split
    unsplit = wgrad_types.generate_types(params, whole)
    assert "constexpr int kRows = 7;" in unsplit
    assert "FILTER_ROW_TILES" not in unsplit
    assert "BLOCK_R" not in unsplit


def test_stream_config_walks_whole_filters() -> None:
    params = Conv2dGw8Params.make(2, 64, 8, 8, r=7, s=7, padding=3)
    config = wgrad_spec.stream_config(params, WgradConfig(16, 2, 1, 4, 2, 1, block_r=1), 132)
    assert config.block_r == 0
    assert config.segments > 0


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        # One block covers every image's rows: a single partial sum, with the most groups
        # whose grid holds SHORT_WALK_MIN_BLOCKS blocks.
        ((1, 64, 8, 8, 7), WgradConfig(16, 1, 1, 8, 4, 1, 1, block_r=1)),
        ((1, 256, 8, 8, 7), WgradConfig(16, 4, 1, 8, 4, 1, 1, block_r=1)),
        ((2, 64, 8, 8, 7), WgradConfig(8, 1, 1, 8, 4, 2, 1, block_r=1)),
        ((1, 256, 8, 8, 3), WgradConfig(16, 2, 1, 8, 4, 1, 1, block_r=1)),
        # Else the longest chunk whose grid holds a block per SM, else the shortest.
        ((8, 128, 8, 8, 7), WgradConfig(8, 4, 1, 2, 4, 4, 1, block_r=1)),
        ((8, 128, 8, 8, 5), WgradConfig(8, 4, 1, 2, 4, 4, 1, block_r=1)),
        ((1, 128, 16, 16, 7), WgradConfig(16, 4, 1, 2, 4, 1, 1, block_r=1)),
        ((1, 64, 16, 16, 3), WgradConfig(16, 4, 1, 1, 4, 1, 1, block_r=1)),
        ((4, 64, 32, 32, 3), WgradConfig(16, 4, 1, 4, 4, 2, 1, block_r=1)),
        ((1, 64, 56, 56, 3), WgradConfig(16, 4, 1, 8, 4, 1, 1, block_r=1)),
    ],
)
def test_short_walks_split_the_filters_rows(
    shape: tuple[int, int, int, int, int], expected: WgradConfig
) -> None:
    params, tile = _split_short_walk(shape)
    assert tile == expected
    wgrad_spec.check_config(params, expected)


def _split_short_walk(
    shape: tuple[int, int, int, int, int],
) -> tuple[Conv2dGw8Params, WgradConfig]:
    """The layer of (n, c, h, w, k x k filter) and split_walk_tile's tile for its short walk
    on 132 SMs."""
    n, c, h, w, k = shape
    params = Conv2dGw8Params.make(n, c, h, w, r=k, s=k, padding=k // 2)
    short_walk = wgrad_heuristic.default_config(params, 132)
    assert short_walk.block_p < wgrad_spec.BLOCK_P_VALUES[0]
    return params, wgrad_heuristic.split_walk_tile(params, short_walk, 132)


def _fills_the_grid_unsplit(params: Conv2dGw8Params, tile: WgradConfig) -> bool:
    """Whether tile without a split of the filter rows fills the share of 132 SMs past
    which the split does not pay."""
    unsplit = dataclasses.replace(tile, block_r=0)
    return wgrad_spec.grid_blocks(params, unsplit) >= wgrad_heuristic.SPLIT_WALK_MAX_SM_SHARE * 132


@pytest.mark.parametrize(
    ("shape", "split"),
    [
        # The split tile's grid without the split already fills 3/4 of 132 SMs: 384, 192
        # and 128 blocks, where the split ran 1.05-1.58x slower (H200).
        ((4, 768, 28, 28, 3), False),
        ((16, 768, 10, 10, 3), False),
        ((1, 768, 28, 28, 3), False),
        ((2, 512, 28, 28, 3), False),
        # 96 blocks or fewer: the split pays.
        ((8, 384, 14, 14, 3), True),
        ((4, 256, 20, 20, 5), True),
        ((8, 1024, 7, 7, 3), True),
        # 5 x 5 and 7 x 7 filters follow the same line: unsplit grids of 128 to 256 blocks,
        # where the split ran 1.15-1.65x slower (H200); 32 blocks keep the split.
        ((2, 768, 28, 28, 5), False),
        ((16, 256, 10, 10, 5), False),
        ((32, 256, 10, 10, 7), False),
        ((4, 256, 28, 28, 7), False),
        ((1, 128, 16, 16, 7), True),
    ],
)
def test_short_walks_on_full_grids_keep_their_filter_rows(
    shape: tuple[int, int, int, int, int], split: bool
) -> None:
    params, tile = _split_short_walk(shape)
    assert (tile.block_r == 1) == split
    assert _fills_the_grid_unsplit(params, tile) != split
    wgrad_spec.check_config(params, tile)


def test_the_full_grid_line_scales_with_the_sm_count() -> None:
    # 128 unsplit blocks fill 3/4 of 132 SMs but not of 264: there the split pays again.
    params = Conv2dGw8Params.make(2, 512, 28, 28)
    short_walk = wgrad_heuristic.default_config(params, 132)
    assert wgrad_heuristic.split_walk_tile(params, short_walk, 132).block_r == 0
    assert wgrad_heuristic.split_walk_tile(params, short_walk, 264).block_r == 1


@pytest.mark.parametrize(
    "params",
    [
        Conv2dGw8Params.make(1, 64, 16, 16, r=1, s=1, padding=0),  # one filter row
        Conv2dGw8Params.make(128, 64, 64, 64),  # not a short walk
    ],
    ids=str,
)
def test_split_walk_tile_keeps_other_tiles(params: Conv2dGw8Params) -> None:
    tile = wgrad_heuristic.default_config(params, 132)
    assert wgrad_heuristic.split_walk_tile(params, tile, 132) == tile


@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
def test_the_launchers_default_splits_a_short_walks_filter_rows(
    monkeypatch: pytest.MonkeyPatch, arch: str
) -> None:
    import spio.jit
    from spio.kernels.conv2d_gw8 import wgrad

    monkeypatch.setattr(
        spio.jit, "device_info", lambda device: SimpleNamespace(sm_count=132, arch=arch)
    )
    params = Conv2dGw8Params.make(1, 256, 8, 8, r=7, s=7, padding=3)
    tile = wgrad.default_tile_on(params)
    assert tile == wgrad_heuristic.split_walk_tile(
        params, wgrad_heuristic.default_config(params), 132
    )
    assert tile.block_r == 1
    assert not tile.tma
