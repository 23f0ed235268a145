"""wgrad on a GPU against the fp32 reference (autograd), and its determinism.

grad_w and the workspace of partial sums are poisoned with NaN, so a weight or a partial
the kernels leave unwritten shows as NaN in grad_w.
"""

import dataclasses

import pytest
from gw8_cases import PAIRED_SHAPES, SHAPES, covering_configs, paired_configs, uniform

from spio.kernels.conv2d_gw8 import (
    Conv2dGw8Params,
    WgradConfig,
    conv2d_gw8_wgrad,
    wgrad_heuristic,
    wgrad_spec,
    wgrad_workspace_bytes,
)
from spio.kernels.conv2d_gw8.reference import wgrad_reference
from spio.kernels.conv2d_gw8.wgrad import get_wgrad_kernels

pytestmark = pytest.mark.gpu

CASES = [
    (params, config)
    for params in SHAPES
    for config in covering_configs(
        wgrad_spec.config_space(params), wgrad_heuristic.default_config(params)
    )
] + [
    # Paired images (block_q = 8: each K step is 8 columns of two images), every value of
    # every field of the paired configs.
    (params, config)
    for params in PAIRED_SHAPES
    for config in paired_configs(wgrad_spec.config_space(params))
]


def _segment_counts(params: Conv2dGw8Params, config: WgradConfig) -> list[int]:
    """One segment; a count that cuts parts mid-way; one output row per segment."""
    rows = wgrad_spec.stream_rows(params, config)
    return sorted({1, min(rows, 7), rows})


def _segment_tiles(params: Conv2dGw8Params) -> list[WgradConfig]:
    """The heuristic's tile and the space's first with TMA, with per-image barriers and with
    images side by side in each K step, where the space has them; walked once (segments
    walk the whole stream)."""
    space = wgrad_spec.config_space(params)
    picks = [wgrad_heuristic.default_config(params)]
    for wanted in (lambda c: c.tma, lambda c: c.image_sync, lambda c: c.block_q < 16):
        picks += [c for c in space if wanted(c)][:1]
    # (Steps of fewer rows than prefetch take no segments: check_config.)
    tiles = (
        dataclasses.replace(c, walk_n=1, prefetch=min(c.prefetch, params.p + params.r - 1))
        for c in picks
    )
    return list(dict.fromkeys(tiles))


# Segments (stream-K): each block walks an equal share of its column strip's stream of rows,
# crossing steps of images mid-segment; every shape of the covering sets.
SEGMENT_CASES = [
    (params, dataclasses.replace(tile, segments=segments))
    for params in SHAPES + PAIRED_SHAPES
    for tile in _segment_tiles(params)
    for segments in _segment_counts(params, tile)
] + [
    (Conv2dGw8Params.make(128, 64, 64, 64), WgradConfig(16, 8, 2, 64, 2, 4, segments=132)),
    (
        Conv2dGw8Params.make(6, 64, 20, 37, r=5, s=3, padding=(2, 1, 0, 2)),
        WgradConfig(16, 8, 2, 16, 2, 2, image_sync=True, tma=True, segments=29),
    ),
    # Deeper prefetch than the space's tiles have (the walks autotuning times, wgrad_walks).
    (Conv2dGw8Params.make(64, 64, 64, 64), WgradConfig(32, 8, 2, 64, 4, 1, tma=True, segments=66)),
    (
        Conv2dGw8Params.make(6, 64, 20, 37, r=5, s=3, padding=(2, 1, 0, 2)),
        WgradConfig(16, 8, 2, 16, 3, 2, image_sync=True, segments=29),
    ),
    (Conv2dGw8Params.make(5, 64, 2, 9), WgradConfig(16, 8, 2, 16, 3, 2, segments=4)),
]


def _run(params: Conv2dGw8Params, config: WgradConfig, x, grad_y):  # type: ignore[no-untyped-def]
    """grad_w of params and config; with params.has_bias, the bias gradient that comes with
    it is checked against the reference here."""
    import torch

    from spio.kernels.conv2d_gw8.reference import wgrad_bias_reference

    grad_w = torch.full(params.weight_shape, float("nan"), device="cuda", dtype=torch.float32)
    workspace = torch.full(
        (wgrad_workspace_bytes(params, config) // 4,), float("nan"), device="cuda"
    )
    grad_bias = torch.full((params.c,), float("nan"), device="cuda") if params.has_bias else None
    conv2d_gw8_wgrad(grad_w, x, grad_y, params, config, workspace=workspace, grad_bias=grad_bias)
    torch.cuda.synchronize()
    if grad_bias is not None:
        depth = params.n * params.p * params.q
        expected = wgrad_bias_reference(grad_y)
        torch.testing.assert_close(grad_bias, expected, rtol=1e-4, atol=1e-6 * depth + 1e-6)
    return grad_w


@pytest.mark.parametrize(("params", "config"), CASES + SEGMENT_CASES, ids=str)
def test_wgrad_matches_reference(params: Conv2dGw8Params, config: WgradConfig) -> None:
    import torch

    x = uniform(params.input_shape, params, 5)
    grad_y = uniform(params.output_shape, params, 6)
    grad_w = _run(params, config, x, grad_y)
    assert not torch.isnan(grad_w).any(), "the kernels left weights or partials unwritten"
    # Products of 16-bit values are exact in f32; the error is f32 summation over
    # depth = n * p * q terms of magnitude <= 1, in either order.
    depth = params.n * params.p * params.q
    expected = wgrad_reference(x, grad_y, params)
    torch.testing.assert_close(grad_w, expected, rtol=1e-4, atol=1e-6 * depth + 1e-6)


def test_one_partial_per_weight_writes_grad_w_without_a_reduction() -> None:
    import torch

    params = Conv2dGw8Params.make(2, 64, 8, 8)
    config = WgradConfig(block_q=16, block_g=2, warp_g=1, block_p=8, prefetch=1, block_n=2)
    assert wgrad_spec.partial_count(params, config) == 1
    assert wgrad_workspace_bytes(params, config) == 0
    x = uniform(params.input_shape, params, 7)
    grad_y = uniform(params.output_shape, params, 8)
    grad_w = torch.full(params.weight_shape, float("nan"), device="cuda", dtype=torch.float32)
    conv2d_gw8_wgrad(grad_w, x, grad_y, params, config)  # no workspace, none allocated
    torch.cuda.synchronize()
    expected = wgrad_reference(x, grad_y, params)
    depth = params.n * params.p * params.q
    torch.testing.assert_close(grad_w, expected, rtol=1e-4, atol=1e-6 * depth + 1e-6)


# grad_w in the activations' dtype (grad_w_dtype = params.dtype): the reduce kernel rounds
# each f32 sum once, which must be the bits torch's cast of the f32 result gives; fp16 and
# bf16, many partials, one partial per weight (then reduced from a workspace), segments.
ROUNDED_CASES = [
    (Conv2dGw8Params.make(3, 64, 20, 18), WgradConfig(16, 8, 2, 8, 2, 2)),
    (
        Conv2dGw8Params.make(5, 64, 13, 40, dtype="bfloat16"),
        WgradConfig(32, 8, 2, 8, 1, 1, 2, tma=True),
    ),
    (Conv2dGw8Params.make(2, 64, 8, 8), WgradConfig(16, 2, 1, 8, 1, 2)),
    (Conv2dGw8Params.make(2, 64, 8, 8, dtype="bfloat16"), WgradConfig(16, 2, 1, 8, 1, 2)),
    (
        Conv2dGw8Params.make(6, 64, 17, 21, r=5, s=3, padding=(2, 1, 0, 2)),
        WgradConfig(16, 2, 1, 8, 1, 2, segments=7),
    ),
]


@pytest.mark.parametrize(("params", "config"), ROUNDED_CASES, ids=str)
def test_rounded_grad_w_is_the_f32_result_cast(
    params: Conv2dGw8Params, config: WgradConfig
) -> None:
    import torch

    dtype = getattr(torch, params.dtype)
    x = uniform(params.input_shape, params, 15)
    grad_y = uniform(params.output_shape, params, 16)
    grad_w = torch.full(params.weight_shape, float("nan"), device="cuda", dtype=dtype)
    nbytes = wgrad_workspace_bytes(params, config, grad_w_dtype=params.dtype)
    assert nbytes == wgrad_spec.workspace_bytes(params, config) > 0
    workspace = torch.full((nbytes // 4,), float("nan"), device="cuda")
    conv2d_gw8_wgrad(
        grad_w, x, grad_y, params, config, workspace=workspace, grad_w_dtype=params.dtype
    )
    torch.cuda.synchronize()
    assert not torch.isnan(grad_w).any(), "the kernels left weights or partials unwritten"
    assert torch.equal(grad_w, _run(params, config, x, grad_y).to(dtype))


# The bias gradient from the wgrad kernels (params.has_bias): against the reference; the
# weights the same bits as without the bias; the same bits run to run. Many partials and one,
# segments, TMA rows with producer warps and padded slabs, images side by side and paired in
# a K step, grad_w in the activations' dtype, a 5 x 3 filter, bf16.
BIAS_CASES = [
    (Conv2dGw8Params.make(3, 64, 20, 18), WgradConfig(16, 8, 2, 8, 2, 2)),
    (Conv2dGw8Params.make(2, 64, 8, 8), WgradConfig(16, 2, 1, 8, 1, 2)),
    (
        Conv2dGw8Params.make(6, 64, 17, 21, r=5, s=3, padding=(2, 1, 0, 2), dtype="bfloat16"),
        WgradConfig(16, 2, 1, 8, 1, 2, segments=7),
    ),
    (
        Conv2dGw8Params.make(32, 64, 64, 64),
        WgradConfig(
            32, 8, 2, 16, 2, 2, image_sync=True, tma=True, producer=True, padded_slabs=True
        ),
    ),
    (Conv2dGw8Params.make(7, 64, 7, 6), WgradConfig(8, 8, 1, 8, 1, 4, image_sync=True)),
    (Conv2dGw8Params.make(5, 64, 8, 8), WgradConfig(8, 8, 2, 8, 2, 2, 2)),
    (Conv2dGw8Params.make(2, 16, 9, 30), WgradConfig(32, 2, 2, 16, 1, 1)),
]


@pytest.mark.parametrize("rounded", [False, True])
@pytest.mark.parametrize(("params", "config"), BIAS_CASES, ids=str)
def test_the_bias_gradient_comes_with_the_weights(
    params: Conv2dGw8Params, config: WgradConfig, rounded: bool
) -> None:
    import torch

    from spio.kernels.conv2d_gw8.reference import wgrad_bias_reference

    with_bias = dataclasses.replace(params, has_bias=True)
    grad_w_dtype = params.dtype if rounded else "float32"
    x = uniform(params.input_shape, params, 17)
    grad_y = uniform(params.output_shape, params, 18)

    def run():  # type: ignore[no-untyped-def]
        grad_w = torch.full(
            params.weight_shape, float("nan"), device="cuda", dtype=getattr(torch, grad_w_dtype)
        )
        grad_bias = torch.full((params.c,), float("nan"), device="cuda")
        nbytes = wgrad_workspace_bytes(with_bias, config, grad_w_dtype=grad_w_dtype)
        workspace = torch.full((nbytes // 4,), float("nan"), device="cuda")
        conv2d_gw8_wgrad(
            grad_w, x, grad_y, with_bias, config, workspace=workspace,
            grad_w_dtype=grad_w_dtype, grad_bias=grad_bias,
        )  # fmt: skip
        torch.cuda.synchronize()
        return grad_w, grad_bias

    grad_w, grad_bias = run()
    assert not torch.isnan(grad_bias).any(), "the kernels left bias sums unwritten"
    expected_w = _run(params, config, x, grad_y)
    assert torch.equal(grad_w, expected_w.to(grad_w.dtype)), "the bias changed the weights"
    depth = params.n * params.p * params.q
    expected = wgrad_bias_reference(grad_y)
    torch.testing.assert_close(grad_bias, expected, rtol=1e-4, atol=1e-6 * depth + 1e-6)
    again_w, again_bias = run()
    assert torch.equal(again_bias, grad_bias)
    assert torch.equal(again_w, grad_w)


def test_wgrad_is_deterministic() -> None:
    import torch

    params = Conv2dGw8Params.make(32, 64, 33, 31, dtype="bfloat16")
    x = uniform(params.input_shape, params, 7)
    grad_y = uniform(params.output_shape, params, 8)
    config = wgrad_heuristic.default_config(params)
    first = _run(params, config, x, grad_y)
    for _ in range(3):
        assert torch.equal(_run(params, config, x, grad_y), first)


def test_wgrad_allocates_its_workspace_from_torch() -> None:
    import torch

    params = Conv2dGw8Params.make(2, 16, 9, 9)
    x = uniform(params.input_shape, params, 9)
    grad_y = uniform(params.output_shape, params, 10)
    grad_w = torch.empty(params.weight_shape, device="cuda", dtype=torch.float32)
    conv2d_gw8_wgrad(grad_w, x, grad_y, params)
    torch.testing.assert_close(grad_w, wgrad_reference(x, grad_y, params), rtol=1e-4, atol=1e-4)


def test_wgrad_kernels_use_no_local_memory() -> None:
    for params in (Conv2dGw8Params.make(128, 64, 64, 64), Conv2dGw8Params.make(64, 256, 8, 8)):
        space = wgrad_spec.config_space(params)
        configs = covering_configs(space, wgrad_heuristic.default_config(params))
        # and each walking segments (stream_config), whose part loop adds state, and with
        # producer warps where its rows arrive by TMA (their launch bounds cap the registers)
        configs += [wgrad_spec.stream_config(params, config, 132) for config in configs]
        configs += [dataclasses.replace(c, producer=True) for c in configs if c.tma]
        configs += [dataclasses.replace(c, padded_slabs=True) for c in configs]
        for config in configs:
            for kernel in get_wgrad_kernels(params, config):
                assert kernel.attributes.local_mem == 0, (config, kernel.attributes)


# TMA rows against cp.async rows: the same config with and without tma adds the same
# products in the same order, so grad_w is the same bits. Every tile size of groups, with
# images side by side (one producer per block or per image), walked images, a short last
# row chunk, columns past the edge, 1 x 1 to 7 x 7 filters and asymmetric padding.
TMA_CASES = [
    (Conv2dGw8Params.make(3, 64, 20, 18), WgradConfig(16, 8, 2, 8, 2, 2)),
    (Conv2dGw8Params.make(3, 64, 20, 18), WgradConfig(16, 8, 2, 8, 2, 2, image_sync=True)),
    (Conv2dGw8Params.make(5, 64, 13, 40, dtype="bfloat16"), WgradConfig(32, 8, 2, 8, 1, 1, 2)),
    (
        Conv2dGw8Params.make(2, 64, 30, 70, r=3, s=5, padding=(0, 2, 2, 1)),
        WgradConfig(32, 8, 2, 16, 2, 1),
    ),
    (Conv2dGw8Params.make(4, 128, 11, 9, r=1, s=1, padding=0), WgradConfig(16, 8, 2, 8, 2, 4)),
    (Conv2dGw8Params.make(2, 64, 12, 12, r=5, s=5, padding=2), WgradConfig(16, 8, 1, 8, 1, 1)),
    (Conv2dGw8Params.make(2, 64, 12, 12, r=7, s=7, padding=3), WgradConfig(16, 2, 1, 8, 1, 1)),
    (Conv2dGw8Params.make(6, 32, 17, 21), WgradConfig(16, 4, 1, 8, 2, 2, image_sync=True)),
    (Conv2dGw8Params.make(2, 16, 9, 30), WgradConfig(32, 2, 2, 16, 1, 1)),
    (Conv2dGw8Params.make(3, 8, 10, 10), WgradConfig(16, 1, 1, 8, 2, 2)),
    (Conv2dGw8Params.make(128, 64, 64, 64), WgradConfig(16, 8, 2, 64, 2, 4, image_sync=True)),
    (Conv2dGw8Params.make(5, 64, 8, 8), WgradConfig(8, 8, 2, 8, 2, 2, 2)),
    (Conv2dGw8Params.make(7, 64, 7, 6), WgradConfig(8, 8, 1, 8, 1, 4, image_sync=True)),
    # The wide filters' tiles wgrad_tma_tile._overhang_tma_tile gives TMA rows: 4 groups
    # walked two steps over strips overhanging the image.
    (Conv2dGw8Params.make(4, 64, 21, 40, r=5, s=5, padding=2), WgradConfig(32, 4, 1, 16, 2, 1, 2)),
    # One strip of three warps across an image 44 wide (wgrad_tma_tile._one_strip_tile).
    (Conv2dGw8Params.make(3, 64, 20, 44), WgradConfig(48, 8, 2, 8, 2, 1)),
]


@pytest.mark.parametrize(("params", "config"), TMA_CASES, ids=str)
def test_tma_rows_give_the_same_bits_as_cp_async_rows(
    params: Conv2dGw8Params, config: WgradConfig
) -> None:
    import dataclasses

    import torch

    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("TMA needs sm_90 (older GPUs load a tma config's rows with cp.async)")
    x = uniform(params.input_shape, params, 11)
    grad_y = uniform(params.output_shape, params, 12)
    with_tma = _run(params, dataclasses.replace(config, tma=True), x, grad_y)
    assert torch.equal(with_tma, _run(params, config, x, grad_y))
    depth = params.n * params.p * params.q
    expected = wgrad_reference(x, grad_y, params)
    torch.testing.assert_close(with_tma, expected, rtol=1e-4, atol=1e-6 * depth + 1e-6)


# Producer warps against the walking warps loading their own rows: the same products in the
# same order, so the same bits (before sm_90 the producer warps leave and the walk loads its
# rows by cp.async). The TMA cases' tiles, and segments with per-image and block barriers,
# deeper prefetch and a 5 x 3 filter.
PRODUCER_CASES = [
    (params, dataclasses.replace(config, tma=True)) for params, config in TMA_CASES
] + [
    (
        Conv2dGw8Params.make(6, 64, 20, 37, r=5, s=3, padding=(2, 1, 0, 2)),
        WgradConfig(16, 8, 2, 16, 2, 2, image_sync=True, tma=True, segments=29),
    ),
    (Conv2dGw8Params.make(64, 64, 64, 64), WgradConfig(32, 8, 2, 64, 4, 1, tma=True, segments=66)),
    (Conv2dGw8Params.make(9, 64, 33, 17), WgradConfig(16, 8, 2, 16, 2, 4, tma=True, segments=5)),
    (
        Conv2dGw8Params.make(32, 64, 64, 64),
        WgradConfig(32, 8, 2, 16, 2, 2, image_sync=True, tma=True),
    ),
    # The TMA heuristic's synced images (wgrad_tma_tile._images_synced) where the last row
    # chunk is short: walked steps of two images, and four images of one step.
    (
        Conv2dGw8Params.make(6, 64, 14, 14),
        WgradConfig(16, 8, 2, 16, 2, 2, 2, image_sync=True, tma=True),
    ),
    (
        Conv2dGw8Params.make(8, 64, 28, 28),
        WgradConfig(16, 8, 2, 16, 2, 4, image_sync=True, tma=True),
    ),
]

# Images synced on their own against the block's barrier: the same products in the same
# order, so the same bits; TMA rows with producer warps (one per image against one per
# block), short last row chunks, walked steps, and cp.async rows.
IMAGE_SYNC_CASES = [
    (
        Conv2dGw8Params.make(6, 64, 14, 14),
        WgradConfig(16, 8, 2, 16, 2, 2, 2, tma=True, producer=True),
    ),
    (Conv2dGw8Params.make(8, 64, 28, 28), WgradConfig(16, 8, 2, 16, 2, 4, tma=True, producer=True)),
    (Conv2dGw8Params.make(3, 64, 20, 18), WgradConfig(16, 8, 2, 8, 2, 2, 2)),
]


# Padded slabs of partial sums: the same sums in the same order at other addresses, so the
# same bits; with producer warps, one partial per weight written to grad_w, paired images,
# 1 x 1 to 7 x 7 filters and asymmetric padding.
PADDED_CASES = [
    (Conv2dGw8Params.make(3, 64, 20, 18), WgradConfig(16, 8, 2, 8, 2, 2, image_sync=True)),
    (
        Conv2dGw8Params.make(32, 64, 64, 64),
        WgradConfig(32, 8, 2, 16, 2, 2, image_sync=True, tma=True, producer=True),
    ),
    (Conv2dGw8Params.make(2, 64, 8, 8), WgradConfig(8, 8, 2, 8, 2, 2)),
    (Conv2dGw8Params.make(4, 128, 11, 9, r=1, s=1, padding=0), WgradConfig(16, 4, 2, 8, 2, 4)),
    (
        Conv2dGw8Params.make(6, 64, 17, 21, r=5, s=3, padding=(2, 1, 0, 2)),
        WgradConfig(16, 2, 1, 8, 1, 2),
    ),
    (Conv2dGw8Params.make(2, 64, 12, 12, r=7, s=7, padding=3), WgradConfig(16, 1, 1, 8, 1, 2)),
    (
        Conv2dGw8Params.make(5, 64, 8, 8),
        WgradConfig(8, 8, 1, 8, 1, 4, image_sync=True, segments=3),
    ),
]


# Lanes' addresses in registers: the same loads from the same cells, the same mma in the same
# order, so the same bits; with producer warps (the release moves before the mma), cp.async
# rows, segments, bias-free narrow images and 1 x 1 to 7 x 7 filters.
LANE_CASES = [
    (params, dataclasses.replace(config, producer=True)) for params, config in PRODUCER_CASES
] + PADDED_CASES


@pytest.mark.parametrize(
    ("params", "config", "field"),
    [(p, c, "producer") for p, c in PRODUCER_CASES]
    + [(p, c, "padded_slabs") for p, c in PADDED_CASES]
    + [(p, c, "lane_registers") for p, c in LANE_CASES]
    + [(p, c, "image_sync") for p, c in IMAGE_SYNC_CASES],
    ids=str,
)
def test_placed_improvements_give_the_same_bits(
    params: Conv2dGw8Params, config: WgradConfig, field: str
) -> None:
    import torch

    x = uniform(params.input_shape, params, 13)
    grad_y = uniform(params.output_shape, params, 14)
    improved = _run(params, dataclasses.replace(config, **{field: True}), x, grad_y)
    assert not torch.isnan(improved).any(), "the kernels left weights or partials unwritten"
    assert torch.equal(improved, _run(params, config, x, grad_y))
    depth = params.n * params.p * params.q
    expected = wgrad_reference(x, grad_y, params)
    torch.testing.assert_close(improved, expected, rtol=1e-4, atol=1e-6 * depth + 1e-6)


# Filter rows split among a chunk's blocks (block_r): each weight's products are added in the
# same order by one block, so the same bits as the unsplit tile. One partial per weight
# (grad_w written directly), paired images, R of 6 split in 2 and 3 with asymmetric padding
# and a bias, TMA rows with lanes' addresses in registers and walked images, bf16, deep
# prefetch on short chunks.
SPLIT_CASES = [
    (
        Conv2dGw8Params.make(1, 256, 8, 8, r=7, s=7, padding=3),
        WgradConfig(16, 1, 1, 8, 4, 1, 1, block_r=1),
    ),
    (
        Conv2dGw8Params.make(2, 64, 8, 8, r=7, s=7, padding=3),
        WgradConfig(8, 2, 1, 4, 2, 2, 1, block_r=1, lane_registers=True),
    ),
    (
        Conv2dGw8Params.make(6, 64, 17, 21, r=6, s=3, padding=(3, 1, 0, 2), has_bias=True),
        WgradConfig(16, 2, 1, 8, 2, 2, image_sync=True, block_r=3),
    ),
    (
        Conv2dGw8Params.make(6, 64, 17, 21, r=6, s=3, padding=(3, 1, 0, 2)),
        WgradConfig(16, 2, 1, 8, 2, 2, block_r=2, padded_slabs=True),
    ),
    (
        Conv2dGw8Params.make(4, 64, 16, 16, r=5, s=5, padding=2, dtype="bfloat16"),
        WgradConfig(16, 8, 1, 8, 2, 1, 2, tma=True, lane_registers=True, block_r=1),
    ),
    (
        Conv2dGw8Params.make(1, 64, 16, 16, r=5, s=5, padding=2, has_bias=True),
        WgradConfig(16, 4, 1, 2, 4, 1, 1, block_r=1, discard_partials=True),
    ),
]


@pytest.mark.parametrize(("params", "config"), SPLIT_CASES, ids=str)
def test_split_filter_rows_give_the_same_bits(params: Conv2dGw8Params, config: WgradConfig) -> None:
    import torch

    assert wgrad_spec.filter_row_tiles(params, config) > 1
    x = uniform(params.input_shape, params, 19)
    grad_y = uniform(params.output_shape, params, 20)
    split = _run(params, config, x, grad_y)  # with a bias, checks its gradient too
    assert not torch.isnan(split).any(), "the kernels left weights or partials unwritten"
    assert torch.equal(split, _run(params, dataclasses.replace(config, block_r=0), x, grad_y))
    depth = params.n * params.p * params.q
    expected = wgrad_reference(x, grad_y, params)
    torch.testing.assert_close(split, expected, rtol=1e-4, atol=1e-6 * depth + 1e-6)


# The padding rows' products left out (skip_pad_rows): every walk of the kernel. Chunks of
# one image with a bias and asymmetric padding (top 3, bottom 1, of a 6-row filter), chunks
# walking several images, segments crossing images (TMA rows, producer warps, the lanes'
# addresses in registers), filter rows split among blocks (7 x 7 on 8 x 8: more padding than
# image in some walks), paired narrow images, bf16, and a layer without vertical padding.
PAD_ROWS_CASES = [
    (
        Conv2dGw8Params.make(3, 64, 17, 21, r=6, s=3, padding=(3, 1, 0, 2), has_bias=True),
        WgradConfig(16, 2, 1, 8, 2, 1),
    ),
    (
        Conv2dGw8Params.make(8, 128, 14, 14),
        WgradConfig(16, 8, 2, 16, 2, 2, 2, lane_registers=True, padded_slabs=True),
    ),
    (
        Conv2dGw8Params.make(5, 64, 11, 16, r=5, s=5, padding=2),
        WgradConfig(16, 4, 1, 8, 2, 1, segments=7, tma=True, producer=True, lane_registers=True),
    ),
    (
        Conv2dGw8Params.make(1, 256, 8, 8, r=7, s=7, padding=3),
        WgradConfig(16, 1, 1, 8, 4, 1, 1, block_r=1),
    ),
    (
        Conv2dGw8Params.make(4, 64, 6, 8, dtype="bfloat16"),
        WgradConfig(8, 2, 1, 4, 2, 2, 2, tma=True),
    ),
    (Conv2dGw8Params.make(2, 64, 9, 12, padding=(0, 0, 1, 1)), WgradConfig(16, 2, 2, 8, 1, 1)),
    # Walks that end before the bottom padding: the TMA heuristic's 14 x 14 tile (images on
    # their own producers, two steps walked), and filter rows split in tiles of 2 whose
    # last reaches below the image within its chunk's output rows.
    (
        Conv2dGw8Params.make(6, 64, 14, 14),
        WgradConfig(
            16, 8, 2, 16, 2, 2, 2, image_sync=True, tma=True, producer=True, lane_registers=True
        ),
    ),
    (
        Conv2dGw8Params.make(2, 64, 10, 12, r=6, s=3, padding=(3, 2, 1, 1)),
        WgradConfig(16, 4, 1, 4, 2, 1, 1, block_r=2),
    ),
    # Walks whose steps after the first start below the top padding row, its grad_y row 0
    # carried by the step before: the TMA tile walking 4 steps (the second block's last six
    # images past the batch); cp.async with the bias's sums; images on their own barriers,
    # padded above only; a 5 x 5 filter (the second padding row walked, its products left
    # out); row chunks, only the top one starting below; steps of 2 image rows with a bias;
    # narrow images paired in each K step, bf16; and the TMA heuristic's four-image steps
    # (wgrad_tma_tile._four_images), the second block's last ten images past the batch.
    (
        Conv2dGw8Params.make(10, 64, 14, 14),
        WgradConfig(
            16, 8, 2, 16, 2, 2, 4, image_sync=True, tma=True, producer=True, lane_registers=True
        ),
    ),
    (Conv2dGw8Params.make(7, 64, 12, 10, has_bias=True), WgradConfig(16, 4, 2, 16, 2, 2, 3)),
    (
        Conv2dGw8Params.make(6, 64, 9, 12, padding=(1, 0, 1, 1)),
        WgradConfig(16, 2, 2, 16, 2, 2, 3, image_sync=True),
    ),
    (
        Conv2dGw8Params.make(6, 64, 10, 10, r=5, s=5, padding=2),
        WgradConfig(16, 4, 1, 16, 2, 1, 3),
    ),
    (Conv2dGw8Params.make(4, 64, 20, 16), WgradConfig(16, 4, 2, 8, 2, 1, 4, tma=True)),
    (
        Conv2dGw8Params.make(5, 64, 2, 16, has_bias=True),
        WgradConfig(16, 2, 2, 4, 1, 1, 4, lane_registers=True),
    ),
    (
        Conv2dGw8Params.make(9, 64, 6, 8, dtype="bfloat16"),
        WgradConfig(8, 2, 1, 8, 2, 4, 3, tma=True, image_sync=True),
    ),
    (
        Conv2dGw8Params.make(22, 64, 14, 14),
        WgradConfig(
            16, 8, 2, 16, 2, 4, 4, image_sync=True, tma=True, producer=True, lane_registers=True
        ),
    ),
]


@pytest.mark.parametrize(("params", "config"), PAD_ROWS_CASES, ids=str)
def test_skipped_padding_rows_give_the_same_bits(
    params: Conv2dGw8Params, config: WgradConfig
) -> None:
    import torch

    x = uniform(params.input_shape, params, 23)
    grad_y = uniform(params.output_shape, params, 24)
    skipping = _run(params, dataclasses.replace(config, skip_pad_rows=True), x, grad_y)
    assert not torch.isnan(skipping).any(), "the kernels left weights or partials unwritten"
    assert torch.equal(skipping, _run(params, config, x, grad_y))
    depth = params.n * params.p * params.q
    expected = wgrad_reference(x, grad_y, params)
    torch.testing.assert_close(skipping, expected, rtol=1e-4, atol=1e-6 * depth + 1e-6)


# Partial sums discarded from L2 after the reduction: the reduce kernel reads the same cells
# and adds them in the same order before it drops their lines, so the same bits; with a bias,
# bf16, grad_w rounded to the activations' dtype, a workspace 16 bytes past a 128-byte line
# (where the kernel discards nothing), and a second launch on the same workspace after the
# first one's discards.
DISCARD_CASES = [
    *PADDED_CASES,
    (Conv2dGw8Params.make(8, 64, 20, 16, has_bias=True), WgradConfig(16, 8, 2, 8, 2, 2)),
    (Conv2dGw8Params.make(4, 64, 16, 16, dtype="bfloat16"), WgradConfig(16, 4, 2, 8, 1, 2)),
]


@pytest.mark.parametrize(("params", "config"), DISCARD_CASES, ids=str)
@pytest.mark.parametrize("offset", [0, 16], ids=["workspace on a line", "16 bytes past a line"])
@pytest.mark.parametrize("rounded", [False, True], ids=["f32 grad_w", "rounded grad_w"])
def test_discarded_partial_sums_give_the_same_bits(
    params: Conv2dGw8Params, config: WgradConfig, offset: int, rounded: bool
) -> None:
    import torch

    x = uniform(params.input_shape, params, 15)
    grad_y = uniform(params.output_shape, params, 16)
    grad_w_dtype = params.dtype if rounded else "float32"
    dtype = getattr(torch, grad_w_dtype)

    def run(discard: bool) -> list:  # type: ignore[type-arg]
        launched = dataclasses.replace(config, discard_partials=discard)
        floats = wgrad_workspace_bytes(params, launched, grad_w_dtype=grad_w_dtype) // 4
        memory = torch.full((floats + 32,), float("nan"), device="cuda")
        workspace = memory[offset // 4 : offset // 4 + floats]
        if floats == 0:
            workspace = None  # one partial sum per weight: the main kernel writes grad_w
        else:
            assert workspace.data_ptr() % 128 == offset
        results = []
        for _ in range(2):
            grad_w = torch.full(params.weight_shape, float("nan"), device="cuda", dtype=dtype)
            grad_bias = torch.full((params.c,), float("nan"), device="cuda")
            conv2d_gw8_wgrad(
                grad_w,
                x,
                grad_y,
                params,
                launched,
                workspace=workspace,
                grad_w_dtype=grad_w_dtype,
                grad_bias=grad_bias if params.has_bias else None,
            )
            torch.cuda.synchronize()
            results += [grad_w, grad_bias]
        return results

    discarded, kept = run(True), run(False)
    assert not torch.isnan(discarded[0]).any(), "the kernels left weights unwritten"
    for a, b in zip(discarded, kept, strict=True):
        assert torch.equal(a.nan_to_num(-1.0), b.nan_to_num(-1.0))
    assert torch.equal(discarded[0], discarded[2])


def test_improved_config_on_pads_the_slabs_then_keeps_lane_addresses_where_the_blocks_fit() -> None:
    import torch

    from spio.kernels.conv2d_gw8._tiling import grid_slots
    from spio.kernels.conv2d_gw8.wgrad import (
        discard_config_on,
        improved_config_on,
        lane_config_on,
        padded_config_on,
        wgrad_launch,
    )

    def fits_as_well(config: WgradConfig, variant: WgradConfig) -> bool:
        base, changed = (wgrad_launch(params, c, device).main for c in (config, variant))
        slots = [
            grid_slots(k, wgrad_spec.launch_geometry(params, c))
            for k, c in ((base, config), (changed, variant))
        ]
        spills = changed.attributes.local_mem > base.attributes.local_mem
        return slots[1] >= slots[0] and not spills

    device = torch.cuda.current_device()
    params = Conv2dGw8Params.make(64, 128, 32, 32)
    for tile in (WgradConfig(16, 4, 1, 16, 1, 4, image_sync=True), WgradConfig(16, 8, 2, 16, 2, 2)):
        padded = padded_config_on(params, tile, device)
        with_slabs = dataclasses.replace(tile, padded_slabs=True)
        assert padded == (with_slabs if fits_as_well(tile, with_slabs) else tile)
        lanes = lane_config_on(params, padded, device)
        with_lanes = dataclasses.replace(padded, lane_registers=True)
        assert lanes == (with_lanes if fits_as_well(padded, with_lanes) else padded)
        assert lane_config_on(params, lanes, device) == lanes
        # No TMA: no producer warps; partial sums discarded for tiles of 4 groups or more.
        assert improved_config_on(params, tile, device) == discard_config_on(lanes)


def test_pad_rows_config_on_leaves_out_padding_rows_of_padded_large_filters_where_they_fit() -> (
    None
):
    import torch

    from spio.kernels.conv2d_gw8._tiling import grid_slots
    from spio.kernels.conv2d_gw8.wgrad import (
        PAD_ROWS_MIN_R,
        improved_config_on,
        pad_rows_config_on,
        wgrad_launch,
    )

    device = torch.cuda.current_device()
    tile = WgradConfig(16, 4, 1, 16, 2, 2, 2, image_sync=True)
    padded = Conv2dGw8Params.make(16, 256, 16, 16, r=5, s=5, padding=2)
    unpadded_rows = Conv2dGw8Params.make(16, 256, 16, 16, r=5, s=5, padding=(0, 0, 2, 2))
    three = Conv2dGw8Params.make(16, 256, 16, 16)
    assert padded.r >= PAD_ROWS_MIN_R > three.r

    def placed(params: Conv2dGw8Params, config: WgradConfig) -> WgradConfig:
        # config with the flag where its kernel keeps the blocks per SM without spilling.
        skipping = dataclasses.replace(config, skip_pad_rows=True)
        base, changed = (wgrad_launch(params, c, device).main for c in (config, skipping))
        fits = (
            grid_slots(changed, wgrad_spec.launch_geometry(params, skipping))
            >= grid_slots(base, wgrad_spec.launch_geometry(params, config))
            and changed.attributes.local_mem <= base.attributes.local_mem
        )
        return skipping if fits else config

    assert pad_rows_config_on(padded, tile, device) == placed(padded, tile)
    assert pad_rows_config_on(unpadded_rows, tile, device) == tile  # no padding row
    # A 3 x 3 walk of one step waits on its loads; walking several steps (tile's two), each
    # leaves out its row below the image and the second its row above, where there are.
    one_step = dataclasses.replace(tile, walk_n=1)
    assert pad_rows_config_on(three, one_step, device) == one_step
    assert pad_rows_config_on(three, tile, device) == placed(three, tile)
    top_only = Conv2dGw8Params.make(16, 256, 16, 16, padding=(1, 0, 1, 1))
    assert pad_rows_config_on(top_only, tile, device) == placed(top_only, tile)
    no_rows = Conv2dGw8Params.make(16, 256, 16, 16, padding=(0, 0, 1, 1))
    assert pad_rows_config_on(no_rows, tile, device) == tile
    split = dataclasses.replace(tile, block_r=1)
    assert pad_rows_config_on(padded, split, device) == split  # so does a split one
    assert (
        improved_config_on(padded, tile, device).skip_pad_rows == placed(padded, tile).skip_pad_rows
    )


def test_producer_config_on_gives_tma_tiles_producer_warps_where_the_gpu_has_tma() -> None:
    import torch

    from spio.kernels.conv2d_gw8._tiling import grid_slots
    from spio.kernels.conv2d_gw8.wgrad import balanced_config_on, producer_config_on, wgrad_launch

    device = torch.cuda.current_device()
    has_tma = torch.cuda.get_device_capability() >= (9, 0)
    params = Conv2dGw8Params.make(32, 64, 64, 64)
    for tile in (
        WgradConfig(32, 8, 2, 16, 2, 2, image_sync=True, tma=True),
        WgradConfig(16, 8, 2, 64, 2, 4, image_sync=True, tma=True),
        WgradConfig(32, 8, 2, 64, 2, 1, 2, tma=True),
    ):
        placed = producer_config_on(params, tile, device)
        assert placed in (tile, dataclasses.replace(tile, producer=True))
        if has_tma:
            # These tiles keep their blocks per SM with producer warps (one block of up to
            # 16 warps: 17-20 with them), so they get them.
            assert placed.producer, tile
            slots = [
                grid_slots(
                    wgrad_launch(params, c, device).main, wgrad_spec.launch_geometry(params, c)
                )
                for c in (tile, placed)
            ]
            assert slots[1] >= slots[0]
        else:
            assert placed == tile
        assert producer_config_on(params, placed, device) == placed
        assert balanced_config_on(params, tile, device).producer == placed.producer
    cp_async = WgradConfig(16, 8, 2, 64, 2, 2, image_sync=True)
    assert producer_config_on(params, cp_async, device) == cp_async


@pytest.mark.parametrize(
    "params",
    [
        # Full pixel lines in 16-column strips overhanging 28 columns; one group a block of
        # a 7 x 7 filter (wgrad_tma_tile._overhang_tma_tile; the small grids' tile, which
        # smaller layers of wide filters take, keeps cp.async rows).
        Conv2dGw8Params.make(32, 512, 28, 28),
        Conv2dGw8Params.make(8, 64, 56, 56, r=7, s=7, padding=3),
        # One 48-column strip across an image 44 wide (wgrad_tma_tile._one_strip_tile).
        Conv2dGw8Params.make(32, 128, 44, 44),
    ],
    ids=str,
)
def test_the_default_with_tma_rows_for_overhanging_strips_matches_reference(
    params: Conv2dGw8Params,
) -> None:
    import torch

    config = _default_matching_reference(params, 21)
    assert config.tma is (torch.cuda.get_device_capability() >= (9, 0))


def _skip_below_100_sms() -> None:
    """Skip on a GPU of fewer than 100 SMs: the heuristic rules these tests check size their
    grids for 100 SMs or more."""
    import torch

    if torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count < 100:
        pytest.skip("the rules' grids are sized for a GPU of 100 SMs or more")


def _default_matching_reference(params: Conv2dGw8Params, salt: int) -> WgradConfig:
    """The config a launch without one runs on this GPU, after checking its grad_w against
    the fp32 reference (inputs seeded by salt and salt + 1)."""
    import torch

    from spio.kernels.conv2d_gw8.wgrad import default_config_on

    config = default_config_on(params, torch.cuda.current_device())
    x = uniform(params.input_shape, params, salt)
    grad_y = uniform(params.output_shape, params, salt + 1)
    grad_w = _run(params, config, x, grad_y)
    depth = params.n * params.p * params.q
    expected = wgrad_reference(x, grad_y, params)
    torch.testing.assert_close(grad_w, expected, rtol=1e-4, atol=1e-6 * depth + 1e-6)
    return config


@pytest.mark.parametrize(
    "params",
    [
        # One wave of two-image full-line blocks, two an SM, becomes one block of four
        # images an SM with TMA rows (wgrad_tma_tile._four_image_full_line_tile).
        Conv2dGw8Params.make(32, 512, 32, 32),
        Conv2dGw8Params.make(16, 1024, 32, 32, dtype="bfloat16", has_bias=True),
        # ... and of the eight-group TMA tile's 14 x 14 blocks (wgrad_tma_tile._four_images).
        Conv2dGw8Params.make(64, 512, 14, 14),
        # ... and of full lines walked two steps (wgrad_tma_tile._walked_full_line_tile).
        Conv2dGw8Params.make(128, 256, 28, 28),
    ],
    ids=str,
)
def test_the_default_with_four_images_by_tma_matches_reference(params: Conv2dGw8Params) -> None:
    import torch

    config = _default_matching_reference(params, 23)
    hopper = torch.cuda.get_device_capability() >= (9, 0)
    assert (config.block_n, config.tma) == ((4, True) if hopper else (2, False))


@pytest.mark.parametrize(
    "params",
    [
        # Four-image blocks walking as many steps as make one wave on an H100 or H200
        # (wgrad_tma_tile._fewest_waves): 3 steps, the last blocks' partly past the batch ...
        Conv2dGw8Params.make(128, 768, 12, 12),
        # ... and 5 steps, with the bias's sums in bf16.
        Conv2dGw8Params.make(160, 1024, 14, 14, dtype="bfloat16", has_bias=True),
        # Full lines of four images walking 3 steps (wgrad_tma_tile._walked_full_line_tile).
        Conv2dGw8Params.make(768, 64, 32, 32),
    ],
    ids=str,
)
def test_the_default_walking_into_one_wave_matches_reference(params: Conv2dGw8Params) -> None:
    import torch

    from spio.kernels.conv2d_gw8.wgrad_spec import WALK_N_VALUES

    config = _default_matching_reference(params, 25)
    if torch.cuda.get_device_capability() >= (9, 0):
        assert config.block_n == 4
        assert config.walk_n not in WALK_N_VALUES


@pytest.mark.parametrize(
    ("params", "fields"),
    [
        # Four images of four groups where the groups are not a multiple of 8
        # (wgrad_heuristic.HALF_LINE_IMAGES), with a bias's sums in bf16 ...
        (Conv2dGw8Params.make(128, 96, 56, 56), {"block_g": 4, "warp_g": 2, "block_n": 4}),
        (
            Conv2dGw8Params.make(126, 160, 27, 30, dtype="bfloat16", has_bias=True),
            {"block_g": 4, "warp_g": 2, "block_n": 4},
        ),
        # ... two steps of images where the partial sums are heavy (_heavy_partials_walked),
        # the second step past the batch's end ...
        (Conv2dGw8Params.make(93, 768, 8, 8), {"walk_n": 2}),
        (Conv2dGw8Params.make(96, 768, 4, 4, r=5, s=5, padding=2), {"walk_n": 2}),
        # ... and a 5 x 5 and a 7 x 7 short walk kept whole on a full grid
        # (split_walk_tile's SPLIT_WALK_MAX_SM_SHARE).
        (Conv2dGw8Params.make(16, 256, 10, 10, r=5, s=5, padding=2), {"block_r": 0}),
        (Conv2dGw8Params.make(4, 256, 28, 28, r=7, s=7, padding=3), {"block_r": 0}),
    ],
    ids=str,
)
def test_the_defaults_of_half_lines_heavy_walks_and_unsplit_filters_match_reference(
    params: Conv2dGw8Params, fields: dict[str, int]
) -> None:

    _skip_below_100_sms()
    config = _default_matching_reference(params, 27)
    assert {name: getattr(config, name) for name in fields} == fields


@pytest.mark.parametrize(
    ("params", "block_p"),
    [
        # Four images of half the rows, synced on chunks the launcher cuts evenly (56 rows
        # as two of 28), two images past the batch's end ...
        (Conv2dGw8Params.make(62, 96, 56, 56), 28),
        # ... four images of 64-row chunks cut as two of 56 ...
        (Conv2dGw8Params.make(30, 96, 112, 112), 56),
        # ... 81 rows as three of 27, in bf16 with a bias's sums ...
        (Conv2dGw8Params.make(24, 160, 81, 81, dtype="bfloat16", has_bias=True), 27),
        # ... and 24 rows in 16-row chunks cut as two of 12, partials 12% of the bytes.
        (Conv2dGw8Params.make(15, 672, 24, 24), 12),
    ],
    ids=str,
)
def test_the_four_image_tiles_on_rows_cut_evenly_match_reference(
    params: Conv2dGw8Params, block_p: int
) -> None:

    _skip_below_100_sms()
    config = _default_matching_reference(params, 29)
    assert (config.block_n, config.block_g, config.image_sync) == (4, 4, True)
    assert config.block_p == block_p


@pytest.mark.parametrize(
    ("params", "block_p"),
    [
        # 1 x 1 filters, 28 groups (whose runs of 14 wgrad_pixel_groups leaves): two images
        # of four groups in 16-row chunks (wgrad_pointwise), one image past the batch's end
        # ...
        (Conv2dGw8Params.make(31, 224, 112, 112, r=1, s=1, padding=0), 16),
        # ... and 56 rows as four chunks of 14, in bf16 with a bias's sums.
        (
            Conv2dGw8Params.make(
                65, 224, 56, 56, r=1, s=1, padding=0, dtype="bfloat16", has_bias=True
            ),
            14,
        ),
    ],
    ids=str,
)
def test_the_pointwise_tiles_in_short_chunks_match_reference(
    params: Conv2dGw8Params, block_p: int
) -> None:

    _skip_below_100_sms()
    config = _default_matching_reference(params, 31)
    assert (config.block_n, config.block_g, config.image_sync, config.segments) == (2, 4, True, 0)
    assert config.block_p == block_p


@pytest.mark.parametrize(
    ("params", "block_g"),
    [
        # 1 x 1 filters, groups not a multiple of 8 (wgrad_pixel_groups): runs of 12 of 84
        # groups walking two steps, one image past the batch's end ...
        (Conv2dGw8Params.make(7, 672, 112, 112, r=1, s=1, padding=0), 12),
        # ... runs of 20 of 60 groups, 28 rows as two chunks of 14 ...
        (Conv2dGw8Params.make(47, 480, 28, 28, r=1, s=1, padding=0), 20),
        # ... whole 12-group pixels in bf16 with a bias's sums, 80 rows as two of 40 ...
        (
            Conv2dGw8Params.make(
                33, 96, 80, 80, r=1, s=1, padding=0, dtype="bfloat16", has_bias=True
            ),
            12,
        ),
        # ... and four images side by side, an odd batch.
        (Conv2dGw8Params.make(7, 96, 112, 112, r=1, s=1, padding=0), 12),
    ],
    ids=str,
)
def test_the_pixel_group_tiles_match_reference(params: Conv2dGw8Params, block_g: int) -> None:
    _skip_below_100_sms()
    config = _default_matching_reference(params, 37)
    assert (config.block_g, config.warp_g) == (block_g, 4)


def test_tma_launches_keep_a_tensor_map_pair_per_address_pair() -> None:
    import torch

    from spio.kernels.conv2d_gw8.wgrad import wgrad_launch

    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("TMA needs sm_90")
    params = Conv2dGw8Params.make(2, 64, 16, 16)
    config = WgradConfig(16, 8, 2, 16, 2, 1, tma=True)
    launch = wgrad_launch(params, config, torch.cuda.current_device())
    assert launch.tensor_maps is not None
    results = []
    for salt in (1, 2, 1):  # a second pair of arrays, then the first again
        x = uniform(params.input_shape, params, salt)
        grad_y = uniform(params.output_shape, params, salt + 10)
        results.append(_run(params, config, x, grad_y))
        torch.testing.assert_close(
            results[-1], wgrad_reference(x, grad_y, params), rtol=1e-4, atol=1e-3
        )
    assert torch.equal(results[0], results[2])
    assert 1 <= len(launch.tensor_maps) <= 3


def test_stream_config_on_fills_the_gpu_with_one_segment_per_block() -> None:
    import torch

    from spio.kernels.conv2d_gw8._tiling import grid_slots
    from spio.kernels.conv2d_gw8.wgrad import stream_config_on, wgrad_launch

    device = torch.cuda.current_device()
    params = Conv2dGw8Params.make(128, 64, 64, 64)
    for tile in (WgradConfig(16, 8, 2, 64, 2, 4, 2), WgradConfig(16, 1, 1, 8, 2, 4)):
        config = stream_config_on(params, tile, device)
        assert config.walk_n == 1
        assert config.segments >= 1
        main = wgrad_launch(params, config, device).main
        slots = grid_slots(main, wgrad_spec.launch_geometry(params, config))
        blocks = wgrad_spec.grid_blocks(params, config)
        columns = wgrad_spec.column_strips(params, config) * params.groups // config.block_g
        assert slots - columns < blocks <= slots, (config, slots)


@pytest.mark.parametrize(
    ("shape", "segmented"),
    [
        ((160, 64, 64, 64), True),  # 320 blocks: the third wave's slots mostly idle
        ((128, 64, 64, 64), False),  # 256 blocks: 97% of two waves
        ((2, 64, 64, 64), False),  # under one wave
    ],
)
def test_balanced_config_walks_segments_where_the_waves_leave_sms_idle(
    shape: tuple[int, int, int, int], segmented: bool
) -> None:
    import torch

    from spio.kernels.conv2d_gw8.wgrad import (
        balanced_config_on,
        improved_config_on,
        stream_config_on,
    )

    device = torch.cuda.current_device()
    params = Conv2dGw8Params.make(*shape)
    tile = WgradConfig(16, 8, 2, 64, 2, 2, image_sync=True)  # 8 warps: two blocks per SM
    config = balanced_config_on(params, tile, device)
    walk = stream_config_on(params, tile, device) if segmented else tile
    assert config == improved_config_on(params, walk, device)
    assert balanced_config_on(params, config, device) == config


def test_walks_are_the_tile_its_segments_and_deeper_prefetch_while_the_blocks_fit() -> None:
    import torch

    from spio.kernels.conv2d_gw8._tiling import grid_slots
    from spio.kernels.conv2d_gw8.wgrad import improved_config_on, stream_config_on, wgrad_launch
    from spio.kernels.conv2d_gw8.wgrad_walks import MAX_WALK_PREFETCH, walks_on

    def slots(params: Conv2dGw8Params, config: WgradConfig) -> int:
        main = wgrad_launch(params, config, device).main
        return grid_slots(main, wgrad_spec.launch_geometry(params, config))

    device = torch.cuda.current_device()
    params = Conv2dGw8Params.make(256, 64, 64, 64)
    tile = WgradConfig(32, 8, 2, 64, 2, 1, 2, tma=True)
    walks = walks_on(params, tile, device)
    # Each walk as the launcher runs it: with the kernel's improvements where they fit.
    assert walks[:2] == [
        improved_config_on(params, walk, device)
        for walk in (tile, stream_config_on(params, tile, device))
    ]
    # 2 blocks per SM of 8 warps whatever the prefetch (70 KB of shared memory at 4).
    assert [walk.prefetch for walk in walks[1:]] == list(range(2, MAX_WALK_PREFETCH + 1))
    assert all(slots(params, walk) >= slots(params, walks[1]) for walk in walks[2:])
    assert all(walk.segments > 0 and walk.walk_n == 1 for walk in walks[1:])
    # One output row: a step's rows and halo (1 + 3 - 1) allow no prefetch past 3.
    short = Conv2dGw8Params.make(8, 64, 1, 64)
    assert [walk.prefetch for walk in walks_on(short, tile, device)[1:]] == [2, 3]
    with pytest.raises(ValueError, match="block_g"):
        walks_on(Conv2dGw8Params.make(8, 8, 8, 8), tile, device)
