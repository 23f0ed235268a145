"""compute-sanitizer's memcheck, racecheck and synccheck on a sampled set of configs per pass.

Each case runs `python -m spio.kernels.conv2d_gw8.run_once` under one tool and asserts the
tool's summary reports nothing. The sample: each pass's default on a layer with odd sizes,
the configs of the covering set that change how blocks load and meet (prefetch, a ring
deeper than a block's walk, the tensor-core K, images side by side with their own barriers,
a single partial sum that skips the reduction, TMA rows, images paired in each K step,
segments of the stream of rows, with the deeper prefetch autotuning times, groups per block
that are not a power of two; fprop and dgrad walking segments), and
a 5 x 3 filter with asymmetric padding and bias. Small layers keep racecheck, which
serialises the blocks, to seconds per case.
"""

from __future__ import annotations

import dataclasses

import pytest
from sanitizer_summary import check_clean

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, wgrad_spec

pytestmark = pytest.mark.gpu

TOOLS = ("memcheck", "racecheck", "synccheck")
_ODD = "3x64x20x18"
_FILTER = ["--r", "5", "--s", "3", "--padding", "2", "1", "0", "2"]
_PREFETCH2_MMA8 = ["prefetch=2", "mma_k=8", "warp_g=2", "block_p=8"]
_OWN_BARRIERS = ["block_q=16", "block_n=2", "image_sync=1"]
# TMA rows (sm_90): one producer per block, and one per image with their own barriers.
_TMA = ["block_q=16", "block_g=8", "warp_g=2", "block_p=8", "prefetch=2", "block_n=2", "tma=1"]
# Segments of the stream of rows over 5 images two at a time (11 per strip of 16 columns),
# TMA rows on per-image barriers.
_TMA_SEGMENTS = ["wgrad", "5x64x12x20", "--config", *_TMA, "image_sync=1", "segments=11"]
# The TMA heuristic's tile on 14 x 14 images (wgrad_tma_tile._images_synced): a short last
# row chunk, two steps walked, the second block's last images past the batch.
_WALKED_IMAGES = [
    "wgrad",
    "6x64x14x14",
    "--config",
    *[field for field in _TMA if not field.startswith("block_p=")],
    "block_p=16",
    "walk_n=2",
    "image_sync=1",
    "producer=1",
]
# fprop_spec.strip_columns' tile: 16 columns, 8 groups two to a warp, six rows ahead.
_NARROWED = ["block_q=16", "block_g=8", "warp_g=2", "warp_q16=1", "block_p=16", "prefetch=6"]
# wgrad with the bias's sums and grad_w rounded to fp16, before the config's fields.
_BIAS_ROUNDED = ["wgrad", "4x64x12x12", "--bias", "--grad-w-dtype", "float16", "--config"]


def _single_partial_wgrad() -> list[str]:
    """A wgrad config whose one partial sum per weight is written to grad_w directly."""
    params = Conv2dGw8Params.make(2, 64, 8, 8)
    config = next(
        c for c in wgrad_spec.config_space(params) if wgrad_spec.partial_count(params, c) == 1
    )
    fields = [f"{name}={int(value)}" for name, value in dataclasses.asdict(config).items()]
    return ["2x64x8x8", "--config", *fields]


CASES = {
    "fprop-default": ["fprop", _ODD],
    "fprop-prefetch2-mma8": ["fprop", _ODD, "--config", *_PREFETCH2_MMA8],
    "fprop-filter-bias": ["fprop", "3x16x9x7", *_FILTER, "--bias"],
    # A ring of 8 rows: 6 loading ahead, more than a 4-row block's walk of 6 input rows.
    "fprop-prefetch6-short-walk": ["fprop", _ODD, "--config", "prefetch=6", "block_p=4"],
    # Row chunks of 16, 16 and 8 rows (one_wave.split_one_wave's walk on 40-row images).
    "fprop-uneven-chunks": ["fprop", "2x64x40x40", "--config", "block_p=16"],
    # Even chunks of 13 rows and a last one of 11 (even_chunks' walk of 50-row images).
    "fprop-even-chunks": ["fprop", "2x64x50x50", "--config", "block_p=13"],
    "dgrad-default": ["dgrad", _ODD],
    "dgrad-uneven-chunks": ["dgrad", "2x64x40x40", "--config", "block_p=16"],
    "dgrad-prefetch6-filter": ["dgrad", "3x16x9x7", *_FILTER, "--config", "prefetch=6"],
    "dgrad-filter": ["dgrad", "3x16x9x7", *_FILTER, "--dtype", "bfloat16"],
    "wgrad-default": ["wgrad", _ODD],
    "wgrad-images-own-barriers": ["wgrad", "4x64x12x12", "--config", *_OWN_BARRIERS],
    "wgrad-single-partial": ["wgrad", *_single_partial_wgrad()],
    # The bias gradient with the weights' (segments: parts of images per block).
    "wgrad-bias": ["wgrad", _ODD, "--bias"],
    "wgrad-bias-segments-tma": ["wgrad", "4x64x12x12", "--bias", "--config", *_TMA, "segments=5"],
    # grad_w in the activations' dtype: the rounding reduction, also after one partial.
    "wgrad-rounded": ["wgrad", _ODD, "--grad-w-dtype", "float16"],
    "wgrad-rounded-single-partial": [
        "wgrad",
        *_single_partial_wgrad(),
        "--dtype",
        "bfloat16",
        "--grad-w-dtype",
        "bfloat16",
    ],
    "wgrad-filter": ["wgrad", "3x16x9x7", *_FILTER],
    # Two even chunks of 10 rows (even_chunks' walk of 20-row images).
    "wgrad-even-chunks": ["wgrad", "2x64x20x20", "--config", "block_p=10"],
    # The TMA tile of small images a walk would leave SMs without a block
    # (wgrad_heuristic._walked): four images a step, each with its producer and barriers, in
    # even chunks of 10 rows; the second block's last two images past the batch.
    "wgrad-tma-four-images-even-chunks": [
        "wgrad",
        "6x64x20x20",
        "--config",
        *[field for field in _TMA if field not in ("block_p=8", "block_n=2")],
        "block_p=10",
        "block_n=4",
        "image_sync=1",
        "producer=1",
    ],
    # Atomic sums (deterministic=False): the zero kernel, then every block adding into grad_w,
    # or into the workspace that the reduce kernel copies and rounds, with the bias's sums.
    "wgrad-atomic": ["wgrad", _ODD, "--config", "atomic_sums=1"],
    "wgrad-atomic-bias-rounded-tma": [*_BIAS_ROUNDED, *_TMA, "atomic_sums=1"],
    "wgrad-tma": ["wgrad", "3x64x20x18", "--config", *_TMA],
    "wgrad-tma-images-own-barriers": ["wgrad", "4x64x12x12", "--config", *_TMA, "image_sync=1"],
    # A wide filter's tile with TMA rows (wgrad_tma_tile._overhang_tma_tile): 4 groups, one
    # producer, strips of 32 columns overhanging 40, two steps walked.
    "wgrad-tma-wide-filter-walked": [
        "wgrad",
        "4x64x21x40",
        *["--r", "5", "--s", "5", "--padding", "2", "--config"],
        *["block_q=32", "block_g=4", "warp_g=1", "block_p=16", "prefetch=2", "block_n=1"],
        *["walk_n=2", "image_sync=0", "segments=0", "block_r=0", "tma=1", "producer=1"],
    ],
    # One strip of three warps across an image 44 wide (wgrad_tma_tile._one_strip_tile),
    # TMA rows from a producer warp.
    "wgrad-tma-one-strip": [
        "wgrad",
        "3x64x20x44",
        "--config",
        *["block_q=48", "block_g=8", "warp_g=2", "block_p=16", "prefetch=2", "block_n=1"],
        *["tma=1", "producer=1"],
    ],
    # The tile fprop and dgrad's default gives large images 48 wide: three 16-column strips
    # (fprop_spec.strip_columns), six rows ahead; here chunks of 16 and 8 rows.
    "fprop-narrowed-strips": ["fprop", "2x64x24x48", "--bias", "--config", *_NARROWED],
    "dgrad-narrowed-strips": ["dgrad", "2x64x24x48", "--config", *_NARROWED],
    # fprop and dgrad walking segments (FpropConfig.segments): 7 per strip over 3 images of
    # 20 rows, crossing images mid-walk, and 5 per strip of a 5 x 3 filter, 6 rows ahead.
    "fprop-segments": ["fprop", _ODD, "--bias", "--config", "block_q=16", "segments=7"],
    "dgrad-segments": [
        "dgrad",
        _ODD,
        *_FILTER,
        "--config",
        "block_q=16",
        "prefetch=6",
        "segments=5",
    ],
    # fprop and dgrad with images paired in each A fragment: an odd batch (the last pair
    # half past it), bias, a 5 x 3 filter.
    "fprop-paired": ["fprop", "5x64x8x8", "--bias", "--config", "block_q=8", "warp_q16=1"],
    "dgrad-paired": ["dgrad", "3x16x7x7", *_FILTER, "--config", "block_q=8", "warp_q16=1"],
    # Steady walks (filters of 5 rows or more): a 7 x 7 filter's walk of 31 rows in one chunk,
    # one row ahead, with a bias; a 5 x 5 filter's segments crossing images, 6 rows ahead.
    "fprop-steady-walk": [
        "fprop",
        "2x32x31x21",
        *["--r", "7", "--s", "7", "--padding", "3", "--bias", "--config"],
        *["block_q=16", "block_g=4", "warp_g=1", "block_p=32", "prefetch=1"],
    ],
    "dgrad-steady-walk-segments": [
        "dgrad",
        "3x32x23x21",
        *["--r", "5", "--s", "5", "--padding", "2", "--config"],
        *["block_q=16", "block_g=4", "warp_g=1", "prefetch=6", "segments=5"],
    ],
    # Four images side by side (images at most 4 wide), the last block one image short.
    "fprop-quad": ["fprop", "7x64x4x3", "--bias", "--config", "block_q=4", "warp_q16=1"],
    "wgrad-quad": ["wgrad", "7x64x4x3", "--config", "block_q=4", "block_n=4"],
    # Images paired in each K step (the default on images at most 8 wide): an odd batch
    # walked in two steps, and warp rows on their own barriers, with cp.async and TMA rows.
    "wgrad-paired": ["wgrad", "5x64x8x8", "--config", "block_g=2", "walk_n=2"],
    "wgrad-paired-own-barriers": ["wgrad", "7x64x7x6", "--config", "image_sync=1"],
    "wgrad-paired-tma-own-barriers": [
        "wgrad",
        "7x64x7x6",
        "--config",
        "block_g=8",
        "tma=1",
        "image_sync=1",
    ],
    # Segments of the stream of rows: 7 per strip of 16 columns (of 2) over 3 images, and 11
    # per strip over 5 images two at a time, crossing images mid-walk, with cp.async rows and
    # with TMA rows on per-image barriers.
    "wgrad-segments": ["wgrad", _ODD, "--config", "block_q=16", "segments=7"],
    "wgrad-segments-tma-own-barriers": _TMA_SEGMENTS,
    # The deeper walks autotuning times (wgrad_walks): segments 4 rows ahead with TMA rows,
    # and 3 rows ahead with cp.async rows on per-image barriers.
    "wgrad-segments-tma-prefetch4": [
        "wgrad",
        "5x64x12x20",
        "--config",
        *_TMA,
        "prefetch=4",
        "segments=11",
    ],
    # Producer warps (wgrad.producer_config_on): the walking warps release each slot through
    # an mbarrier instead of meeting per row; one producer for the block, one per image, and
    # segments with per-image producers.
    "wgrad-producer": ["wgrad", _ODD, "--config", *_TMA, "producer=1"],
    "wgrad-producer-images-own-barriers": [
        "wgrad",
        "4x64x12x12",
        "--config",
        *_TMA,
        "image_sync=1",
        "producer=1",
    ],
    "wgrad-producer-segments-own-barriers": [*_TMA_SEGMENTS, "producer=1"],
    "wgrad-producer-images-own-barriers-walked": _WALKED_IMAGES,
    # Padded slabs of partial sums (wgrad.padded_config_on): the epilogue's shared memory at
    # other addresses, with a 5 x 3 filter and with images on their own barriers.
    "wgrad-padded-slabs-filter": ["wgrad", "3x16x9x7", *_FILTER, "--config", "padded_slabs=1"],
    "wgrad-padded-slabs-images-own-barriers": [
        "wgrad",
        "4x64x12x12",
        "--config",
        *_OWN_BARRIERS,
        "padded_slabs=1",
    ],
    # Lanes' ldmatrix addresses in registers (lane_registers): each row's fragments loaded
    # before its mma, the slot released early; with cp.async rows and a 5 x 3 filter, and
    # with producer warps on per-image barriers over segments.
    "wgrad-lane-registers-filter": ["wgrad", "3x16x9x7", *_FILTER, "--config", "lane_registers=1"],
    "wgrad-lane-registers-producer-segments": [*_TMA_SEGMENTS, "producer=1", "lane_registers=1"],
    # Groups per block that are not a power of two (the rings' ring_swizzle): wgrad's 1 x 1
    # tile of a whole 12-group pixel walking two steps over an odd batch, with the bias's
    # sums (wgrad_pixel_groups), and fprop and dgrad taking 12 of 12 groups.
    "wgrad-pixel-groups": [
        "wgrad",
        "5x96x12x20",
        *["--r", "1", "--s", "1", "--padding", "0", "--bias", "--config"],
        *["block_q=16", "block_g=12", "warp_g=4", "block_p=16", "prefetch=2", "block_n=2"],
        *["walk_n=2", "image_sync=1", "segments=0", "tma=0", "producer=0", "block_r=0"],
    ],
    "fprop-pixel-groups": ["fprop", "3x96x20x18", "--bias", "--config", "block_g=12", "warp_g=4"],
    "dgrad-pixel-groups": ["dgrad", "3x96x20x18", "--config", "block_g=12", "warp_g=4"],
    # fprop_pixel_groups' tiles: runs of 20 of a 1 x 1 layer's 60 groups in 16-column strips
    # six rows ahead, and halves of 28 groups at 3 x 3 in 32-column strips.
    "fprop-pixel-runs": [
        "fprop",
        "3x480x9x13",
        *["--r", "1", "--s", "1", "--padding", "0", "--bias", "--config"],
        *["block_q=16", "block_g=20", "warp_g=2", "warp_q16=1", "block_p=16", "prefetch=6"],
    ],
    # fprop_pointwise.pointwise_walk: a 1 x 1 tile of 32 columns walking 4 rows six rows ahead,
    # the last chunk short (odd rows), over more blocks than fit at once.
    "fprop-pointwise-walk": [
        "fprop",
        "5x64x31x45",
        *["--r", "1", "--s", "1", "--padding", "0", "--bias", "--config"],
        *["block_q=32", "block_g=8", "warp_g=2", "warp_q16=2", "block_p=4", "prefetch=6"],
    ],
    # The same on 16-column strips of an image wider than one, 20 groups a block five rows
    # ahead (the ring 32-column strips of 20 groups walk, where six do not fit).
    "dgrad-pointwise-strips": [
        "dgrad",
        "3x160x11x37",
        *["--r", "1", "--s", "1", "--padding", "0", "--config"],
        *["block_q=16", "block_g=20", "warp_g=2", "warp_q16=1", "block_p=4", "prefetch=5"],
    ],
    "dgrad-pixel-halves": [
        "dgrad",
        "2x224x11x35",
        *["--config", "block_q=32", "block_g=14", "warp_g=2", "warp_q16=2", "block_p=8"],
    ],
    # Partial sums dropped from L2 once the reduce kernel has read them (discard_partials),
    # with the bias's sums and grad_w rounded to the activations' dtype.
    "wgrad-discard-bias-rounded": [
        *_BIAS_ROUNDED,
        "block_g=8",
        "warp_g=2",
        "block_n=2",
        "discard_partials=1",
    ],
    # Filter rows split among a chunk's blocks (block_r): a 7 x 7 filter one row a block
    # on short chunks, and a 5 x 3 filter's rows one a block with the bias's sums.
    "wgrad-split-rows-short-chunks": [
        "wgrad",
        "1x64x8x8",
        "--r",
        "7",
        "--s",
        "7",
        "--padding",
        "3",
        "3",
        "3",
        "3",
        "--config",
        "block_q=16",
        "block_g=4",
        "warp_g=1",
        "block_p=2",
        "prefetch=4",
        "block_n=1",
        "segments=0",
        "block_r=1",
    ],
    "wgrad-split-rows-filter-bias": [
        "wgrad",
        "3x16x9x7",
        *_FILTER,
        "--bias",
        "--config",
        "segments=0",
        "block_r=1",
        "lane_registers=1",
    ],
    # The padding rows' products left out (skip_pad_rows): a 5 x 3 filter's asymmetric
    # padding with the bias's sums, and segments crossing images with producer warps.
    "wgrad-skip-pad-rows-filter-bias": [
        "wgrad",
        "3x16x9x7",
        *_FILTER,
        "--bias",
        "--config",
        "skip_pad_rows=1",
    ],
    "wgrad-skip-pad-rows-producer-segments": [*_TMA_SEGMENTS, "producer=1", "skip_pad_rows=1"],
    # ... walks whose steps end before the bottom padding row and, after the first, start
    # below the top one (TMA rows); and the same by cp.async, with the bias's sums.
    "wgrad-skip-pad-rows-walked": [*_WALKED_IMAGES, "skip_pad_rows=1"],
    # ... with four images a step (wgrad_tma_tile._four_images), six of them past the batch.
    "wgrad-skip-pad-rows-walked-four-images": [
        "wgrad",
        "10x64x14x14",
        "--config",
        *[field for field in _WALKED_IMAGES[3:] if not field.startswith("block_n=")],
        "block_n=4",
        "skip_pad_rows=1",
    ],
    # One wave of full-line blocks of four images by TMA, not walked
    # (wgrad_tma_tile._four_image_full_line_tile), two of them past the batch.
    "wgrad-four-images-full-line": [
        "wgrad",
        "6x64x16x16",
        "--config",
        *[field for field in _TMA if field.split("=")[0] not in ("block_p", "block_n")],
        *["block_p=16", "block_n=4", "walk_n=1", "image_sync=1", "producer=1"],
    ],
    # Four-image blocks walking three steps, outside the space's walks
    # (wgrad_tma_tile._fewest_waves), two of the images past the batch.
    "wgrad-four-images-walked-three-steps": [
        "wgrad",
        "10x64x14x14",
        "--config",
        *[f for f in _WALKED_IMAGES[3:] if f.split("=")[0] not in ("block_n", "walk_n")],
        *["block_n=4", "walk_n=3", "skip_pad_rows=1"],
    ],
    # Full lines of 32 rows, four images a step by TMA, walked three steps into one wave
    # (wgrad_tma_tile._walked_full_line_tile), two of the images past the batch.
    "wgrad-four-images-full-line-walked-three-steps": [
        "wgrad",
        "10x64x32x32",
        "--config",
        *[f for f in _TMA if f.split("=")[0] not in ("block_p", "block_n")],
        *["block_p=32", "block_n=4", "walk_n=3", "image_sync=1", "skip_pad_rows=1"],
    ],
    "wgrad-skip-pad-rows-walked-cp-async-bias": [
        "wgrad",
        "5x64x10x12",
        "--bias",
        "--config",
        *["block_q=16", "block_g=4", "warp_g=2", "block_p=16", "prefetch=2", "block_n=2"],
        *["walk_n=3", "image_sync=0", "tma=0", "producer=0", "segments=0", "block_r=0"],
        "skip_pad_rows=1",
    ],
    "wgrad-segments-prefetch3-own-barriers": [
        "wgrad",
        "4x64x12x12",
        "--config",
        *_OWN_BARRIERS,
        "prefetch=3",
        "segments=5",
    ],
}


def run_once_args(case: str) -> list[str]:
    """CASES[case] as run_once takes it. On these small layers the launcher's wgrad default
    splits the filter's rows among blocks (wgrad_heuristic.split_walk_tile), which segments
    do not walk: a wgrad case that names its config's fields walks whole filters unless it
    names block_r, so that each case keeps the walk it was written for."""
    args = CASES[case]
    if args[0] != "wgrad" or "--config" not in args:
        return args
    if any(arg.startswith("block_r=") for arg in args):
        return args
    start = args.index("--config") + 1
    return [*args[:start], "block_r=0", *args[start:]]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("tool", TOOLS)
def test_sanitizer_reports_nothing(tool: str, case: str) -> None:
    check_clean(tool, "spio.kernels.conv2d_gw8.run_once", run_once_args(case))
