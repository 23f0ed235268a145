"""fprop on a GPU against the fp32 reference, output poisoned with NaN so gaps show."""

import dataclasses
from typing import Any

import pytest
from gw8_cases import (
    GROUP_COUNT_SHAPES,
    PAIRED_SHAPES,
    SEGMENT_SHAPES,
    SHAPES,
    STEADY_WALK_CASES,
    assert_close_16bit,
    covering_configs,
    group_count_configs,
    paired_configs,
    segment_configs,
    uniform,
)

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    FpropConfig,
    config_space,
    conv2d_gw8_dgrad,
    conv2d_gw8_fprop,
    default_config,
    dgrad,
    dgrad_spec,
    fprop,
    fprop_spec,
    get_kernel,
)
from spio.kernels.conv2d_gw8._tiling import WAVE_FILL, grid_slots, wave_fill
from spio.kernels.conv2d_gw8.fprop_pointwise import POINTWISE_BLOCK_P
from spio.kernels.conv2d_gw8.fprop_segments import slots_on
from spio.kernels.conv2d_gw8.reference import dgrad_reference, fprop_reference

pytestmark = pytest.mark.gpu

CASES = (
    [
        (params, config)
        for params in SHAPES
        for config in covering_configs(config_space(params), default_config(params))
    ]
    + [
        # Paired images (block_q = 8: 8 columns of each of two images per block).
        (params, config)
        for params in PAIRED_SHAPES
        for config in paired_configs(config_space(params))
    ]
    + [
        # Walks of segments of the default's tile.
        (params, config)
        for params in SEGMENT_SHAPES
        for config in segment_configs(default_config(params), params.n * params.p)
    ]
    + [
        # Groups per block that are not a power of two.
        (params, config)
        for params in GROUP_COUNT_SHAPES
        for config in group_count_configs(params, config_space(params), fprop_spec.check_config)
    ]
    # Walks with steady groups of rows (filters of 5 rows or more).
    + [(params, FpropConfig(**fields)) for params, fields in STEADY_WALK_CASES]
)


@pytest.mark.parametrize(("params", "config"), CASES, ids=str)
def test_fprop_matches_reference(params: Conv2dGw8Params, config: FpropConfig) -> None:
    import torch

    x = uniform(params.input_shape, params, 0)
    w = uniform(params.weight_shape, params, 1)
    bias = None
    if params.has_bias:
        gen = torch.Generator("cuda").manual_seed(2)
        bias = torch.randn(params.c, device="cuda", generator=gen)
    y = torch.full(params.output_shape, float("nan"), device="cuda", dtype=x.dtype)
    conv2d_gw8_fprop(y, x, w, bias, params, config)
    torch.cuda.synchronize()
    assert not torch.isnan(y).any(), "the kernel left output elements unwritten"
    # Inputs are exact in both; depth = 8 * R * S terms per output.
    assert_close_16bit(y, fprop_reference(x, w, bias, params), params, 8 * params.r * params.s)


def test_default_kernel_uses_no_local_memory() -> None:
    params = Conv2dGw8Params.make(128, 64, 64, 64)
    for config in covering_configs(config_space(params), default_config(params)):
        attributes = get_kernel(params, config).attributes
        assert attributes.local_mem == 0, (config, attributes)


@pytest.mark.parametrize("module", [fprop, dgrad], ids=["fprop", "dgrad"])
def test_default_config_on_keeps_14_row_images_whole(module: Any) -> None:
    # Walks of 8 rows would split each image into blocks of 8 and 6 rows: slower, whatever
    # the waves' fill (512x256x14x14, H100: 41.7 against 38.7 us).
    import spio.jit

    params = Conv2dGw8Params.make(512, 256, 14, 14)
    spec = dgrad_spec if module is dgrad else fprop_spec
    heuristic = spec.default_config(params, spio.jit.device_info(0).sm_count)
    assert heuristic.block_p >= params.h
    assert module.default_config_on(params, 0) == heuristic


@pytest.mark.parametrize("module", [fprop, dgrad], ids=["fprop", "dgrad"])
def test_default_config_on_balances_an_uneven_last_wave(module: Any) -> None:
    # 192 images of the ladder's first tile (32 rows per block) leave the second wave of
    # blocks under half full on a 132-SM GPU; walks of 16 rows fill three waves.
    import spio.jit

    params = Conv2dGw8Params.make(192, 64, 64, 64)
    spec = dgrad_spec if module is dgrad else fprop_spec
    heuristic = spec.default_config(params, spio.jit.device_info(0).sm_count)
    chosen = module.chunks_config_on(params, 0)
    launch = (dgrad.dgrad_launch if module is dgrad else fprop.fprop_launch)(params, heuristic, 0)
    slots = grid_slots(launch.kernel, launch.geometry)
    before = wave_fill(spec.grid_blocks(params, heuristic), slots)
    after = wave_fill(spec.grid_blocks(params, chosen), slots)
    assert after >= before
    if before < WAVE_FILL:
        assert chosen.block_p < heuristic.block_p, (chosen, before, after)
        assert after > before
    # A launch without a config runs it: the result matches the reference.
    _check_launch(module, params)


def _check_launch(module: Any, params: Conv2dGw8Params, config: FpropConfig | None = None) -> None:
    """A launch of module's pass without a config (default_config_on's), or with config,
    matches the reference: every image the same input, so two images checked stand for
    all."""
    import torch

    x = uniform(params.input_shape, params, 0)[:1].expand(params.input_shape).contiguous()
    w = uniform(params.weight_shape, params, 1)
    y = torch.full(params.output_shape, float("nan"), device="cuda", dtype=x.dtype)
    if module is fprop:
        conv2d_gw8_fprop(y, x, w, None, params, config)
        expected = fprop_reference(x[:2], w, None, dataclasses.replace(params, n=2))
    else:
        conv2d_gw8_dgrad(y, x, w, params, config)
        expected = dgrad_reference(x[:2], w, dataclasses.replace(params, n=2))
    torch.cuda.synchronize()
    assert not torch.isnan(y).any()
    assert_close_16bit(y[:2], expected, params, 8 * params.r * params.s)
    assert torch.equal(y[0], y[-1])


@pytest.mark.parametrize("module", [fprop, dgrad], ids=["fprop", "dgrad"])
@pytest.mark.parametrize("rows", [48, 64])
def test_default_config_on_halves_a_one_wave_grid(module: Any, rows: int) -> None:
    # 512 blocks of 32-row chunks on 132 SMs (one wave): 48 rows make uneven chunks (32 +
    # 16), and 3 x 3 filters gain from 16-row ones even where 32 divides the rows
    # (one_wave.split_one_wave). (64 columns: images 48 wide take 16-column strips.)
    import spio.jit

    params = Conv2dGw8Params.make(128, 64, rows, 64)
    spec = dgrad_spec if module is dgrad else fprop_spec
    heuristic = spec.default_config(params, spio.jit.device_info(0).sm_count)
    launch = (dgrad.dgrad_launch if module is dgrad else fprop.fprop_launch)(params, heuristic, 0)
    if spec.grid_blocks(params, heuristic) > grid_slots(launch.kernel, launch.geometry):
        pytest.skip("the heuristic's grid is more than one wave on this GPU")
    assert heuristic.block_p == 32
    assert module.chunks_config_on(params, 0) == spec.shorter_walk(params, heuristic)
    _check_launch(module, params)


@pytest.mark.parametrize("module", [fprop, dgrad], ids=["fprop", "dgrad"])
@pytest.mark.parametrize(
    ("n", "side", "segments"),
    [
        (80, 64, True),  # 640 blocks of 16-row chunks: a second wave a fifth full
        # 5 x 5, 48 rows in chunks of 32, two waves: cut evenly, 24 + 24 (even_chunks), so
        # row chunks (which walked segments while the chunks were 32 + 16).
        (64, 48, False),
        (128, 64, False),  # 1024 blocks of 16-row chunks fill two waves
        (256, 16, False),  # images of 16 rows keep their chunks
    ],
)
def test_default_config_on_walks_segments_where_the_chunks_leave_the_waves_uneven(
    module: Any, n: int, side: int, segments: bool
) -> None:
    import spio.jit
    from spio.kernels.conv2d_gw8.fprop_segments import walks_segments

    k = 5 if side == 48 else 3
    params = Conv2dGw8Params.make(
        n, 128 if side == 48 else 64, side, side, r=k, s=k, padding=k // 2
    )
    kernel_params = dgrad_spec.to_fprop_params(params) if module is dgrad else params
    launch = dgrad.dgrad_launch if module is dgrad else fprop.fprop_launch
    spec = dgrad_spec if module is dgrad else fprop_spec
    chunks = module.chunks_config_on(params, 0)
    slots = grid_slots(launch(params, chunks, 0).kernel, spec.launch_geometry(params, chunks))
    if spio.jit.device_info(0).sm_count != 132:
        pytest.skip("the cases are an H100 or H200's waves (132 SMs)")
    chosen = module.default_config_on(params, 0)
    assert walks_segments(kernel_params, chunks, slots) is segments
    if segments:
        assert chosen == fprop_spec.stream_config(
            kernel_params, dataclasses.replace(chunks, segments=1), slots
        )
        assert spec.grid_blocks(params, chosen) == slots
        _check_launch(module, params)
    else:
        assert chosen == chunks


@pytest.mark.parametrize("module", [fprop, dgrad], ids=["fprop", "dgrad"])
@pytest.mark.parametrize("shape", [(128, 64, 48, 48), (64, 64, 40, 80), (32, 64, 112, 112)])
def test_default_config_on_walks_16_column_strips_where_32_overhang_the_image(
    module: Any, shape: tuple[int, int, int, int]
) -> None:
    # fprop_spec.strip_columns: the whole launch, its walk placed as the launcher places
    # it (row chunks or segments), against the reference.
    params = Conv2dGw8Params.make(*shape)
    assert module.default_config_on(params, 0).block_q == 16
    _check_launch(module, params)


@pytest.mark.parametrize("module", [fprop, dgrad], ids=["fprop", "dgrad"])
@pytest.mark.parametrize(
    ("shape", "deeper"),
    [
        ((8, 128, 32, 32), True),  # 256 blocks of the one-row-ahead tile: two an SM
        ((32, 64, 64, 64), False),  # 512 blocks: one wave of four an SM
    ],
)
def test_default_config_on_loads_two_rows_ahead_where_the_sms_hold_few_blocks(
    module: Any, shape: tuple[int, int, int, int], deeper: bool
) -> None:
    import spio.jit

    if spio.jit.device_info(0).sm_count != 132:
        pytest.skip("the cases are an H100 or H200's grids (132 SMs)")
    params = Conv2dGw8Params.make(*shape)
    spec = dgrad_spec if module is dgrad else fprop_spec
    assert spec.default_config(params, 132).prefetch == 1
    assert module.chunks_config_on(params, 0).prefetch == (2 if deeper else 1)
    _check_launch(module, params)


@pytest.mark.parametrize("module", [fprop, dgrad], ids=["fprop", "dgrad"])
def test_walk_chunks_load_two_rows_ahead_where_the_grid_takes_more_than_one_wave(
    module: Any,
) -> None:
    import spio.jit

    if spio.jit.device_info(0).sm_count != 132:
        pytest.skip("the case is an H100 or H200's grid (132 SMs)")
    # 800 blocks of 8-row chunks at 100x256x14x14: the heuristic's tile there before
    # LONG_WALK_MIN_WARPS_PER_SM, whose 16-row chunks now fill the GPU's warps; its grids of
    # one-row-ahead tiles that outgrow a wave are rarer since.
    params = Conv2dGw8Params.make(100, 256, 14, 14)
    pass_name = "dgrad" if module is dgrad else "fprop"
    tile = FpropConfig(16, 8, 2, 1, 8, 1, mma_k=16)
    slots = slots_on(pass_name, params, tile)
    assert fprop_spec.grid_blocks(params, tile) > slots
    kernel_params = dgrad_spec.to_fprop_params(params) if module is dgrad else params
    chunks = fprop.walk_chunks(kernel_params, tile, slots, 132)
    assert chunks.prefetch == 2
    _check_launch(module, params, chunks)


@pytest.mark.parametrize("module", [fprop, dgrad], ids=["fprop", "dgrad"])
@pytest.mark.parametrize(
    ("shape", "kernel", "groups"),
    [
        ((9, 96, 29, 31), 1, 12),  # whole pixels, odd sides
        ((66, 224, 26, 30), 3, 14),  # halves of 28 groups, a 3 x 3 filter on 32 columns
        ((130, 480, 14, 13), 1, 20),  # runs of 20 of 60 groups
        ((21, 160, 15, 17), 1, 20),  # 20 groups, one group a warp widened to two
    ],
)
def test_default_config_on_reads_whole_pixels_where_8_does_not_divide_the_groups(
    module: Any, shape: tuple[int, int, int, int], kernel: int, groups: int
) -> None:
    # fprop_pixel_groups: the launch without a config, as the launcher places the wider
    # tile, against the reference.
    import spio.jit

    if spio.jit.device_info(0).sm_count != 132:
        pytest.skip("the cases are an H100 or H200's grids (132 SMs)")
    params = Conv2dGw8Params.make(*shape, r=kernel, s=kernel, padding=kernel // 2)
    assert module.default_config_on(params, 0).block_g == groups
    _check_launch(module, params)


@pytest.mark.parametrize("module", [fprop, dgrad], ids=["fprop", "dgrad"])
@pytest.mark.parametrize(
    ("shape", "block_q", "prefetch"),
    [
        ((140, 512, 28, 28), 32, 6),  # 1120 blocks two rows ahead: several waves
        ((17, 256, 55, 56), 32, 6),  # 544 blocks: one wave, odd rows
        ((19, 128, 80, 80), 16, 6),  # 16-column strips of a wider image
        ((7, 96, 112, 112), 16, 6),  # the same, whole pixels of 12 groups
        ((41, 160, 56, 56), 32, 5),  # 20 groups a block: five rows ahead fit, not six
    ],
)
def test_default_config_on_walks_short_chunks_of_a_1x1_tile(
    module: Any, shape: tuple[int, int, int, int], block_q: int, prefetch: int
) -> None:
    # fprop_pointwise.pointwise_walk: 4-row chunks (or shorter, where the waves ask) as deep as
    # fits, in row chunks rather than segments.
    import spio.jit

    if spio.jit.device_info(0).sm_count != 132:
        pytest.skip("the cases are an H100 or H200's grids (132 SMs)")
    params = Conv2dGw8Params.make(*shape, r=1, s=1, padding=0)
    chosen = module.default_config_on(params, 0)
    assert (chosen.block_q, chosen.prefetch, chosen.segments) == (block_q, prefetch, 0)
    assert chosen.block_p <= POINTWISE_BLOCK_P
    _check_launch(module, params)
