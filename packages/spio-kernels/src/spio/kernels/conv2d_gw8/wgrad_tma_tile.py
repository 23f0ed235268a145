"""wgrad's heuristic tile for a GPU with TMA (sm_90 and newer): tma_tile turns the tile of
wgrad_heuristic.default_config into one whose rows come by TMA where that has paid, with
eight groups, one strip across the image, walked steps or four images a block.

Kept out of the sources digest (sources_digest.PASS_FILES), as wgrad_heuristic is: it
decides which config runs, not what a config compiles to.
"""

from __future__ import annotations

import dataclasses

from . import wgrad_heuristic
from ._tiling import ceil_div
from .params import Conv2dGw8Params
from .wgrad_heuristic import SMALL_GRID_TILE, _fit_tile, _min_warps, _total_warps
from .wgrad_spec import (
    BLOCK_P_VALUES,
    TILE_Q,
    TMA_BLOCK_G,
    WgradConfig,
    _images_fit,
    _is_valid,
    grid_blocks,
)


def tma_tile(params: Conv2dGw8Params, config: WgradConfig, sm_count: int = 132) -> WgradConfig:
    """The heuristic's tile for a GPU with TMA (sm_90 and newer): config, where it has half
    of TMA_BLOCK_G groups a block and warps of TILE_Q columns, with TMA_BLOCK_G groups, two to
    a warp, its rows by TMA and two rows of prefetch (one where two do not fit), where that is
    a valid config whose grid still holds wgrad_heuristic.EIGHT_GROUP_MIN_WARPS_PER_SM warps per SM
    (_eight_group_tile), its strips one across images 33 to 48 columns wide
    (_one_strip_tile); else FULL_LINE_TILE's walking two steps with its rows by TMA where
    its two waves become one, or four images walking into one wave where more
    (_walked_full_line_tile); else FULL_LINE_TILE's with four images a block by TMA where its
    one wave of two blocks per SM becomes one block per SM (_four_image_full_line_tile);
    else config, with its rows by TMA where its filter is wide, or it has TMA_BLOCK_G groups
    and its column strips overhang the image (_overhang_tma_tile). Walked four-image tiles
    walk as many steps as put their grid in the fewest waves (_fewest_waves).

    From H200 runs (2026-11-28, tools/wgrad_heuristic_check.py: each tile as the launcher
    runs it, producer warps included, alternating in one process; the heuristic's config ->
    this at the config's own prefetch): 32x64x64x64 11.41 -> 10.38 us, 64x128x32x32 11.67 ->
    10.44, 64x64x64x64 21.66 -> 20.44, 512x256x14x14 33.97 -> 31.22, 32x1024x16x16 11.27 ->
    10.23, 128x1024x16x16 38.22 -> 36.89, 256x256x14x14 19.01 -> 17.97 (1.036-1.117x); the
    ladder's one-row prefetch tiles ran faster still with two (32x64x64x64 10.04 us,
    64x128x32x32 10.25). Tiles that already had 8 groups (FULL_LINE_TILE) went 0.98-1.05x
    with TMA rows alone, so only the walk and overhang rules above give them TMA rows;
    grids the extra groups would halve lost (8x64x56x56 8.80 -> 12.15 us, 16x128x28x28
    6.89 -> 8.62), SMs left idle. The narrow images' tiles (block_q 8 or 4) were not timed;
    the shipped models, which know no producer warps, predict 0.80-0.93x for them
    (256x256x7x7, 512x128x8x8), so they stay too, as do the short walks of small layers
    (SHORT_WALK_TILE, timed only without TMA rows). On the other campaign layers the rule
    changes they predict 0.92-1.50x on the H200 (28 of 215 layers, 1.005x in geometric mean)
    and 0.99-1.34x on the H100 (24 of 170, 1.012x), before the producer warps' 1.06-1.08x on
    TMA tiles (wgrad.producer_config_on).

    Its images side by side sync on their own (_images_synced), whatever their row chunks;
    walked steps take four images where the grid stays wide enough (_four_images).
    """
    if config.block_q < TILE_Q or config.block_p < BLOCK_P_VALUES[0]:
        # Narrow images' tiles, and SHORT_WALK_TILE: measured as they are, never with TMA rows.
        return config
    widened = _eight_group_tile(params, config, sm_count)
    if widened is not None:
        return _one_strip_tile(params, widened)
    walked = _walked_full_line_tile(params, config, sm_count)
    if walked is not None:
        return walked
    widened = _four_image_full_line_tile(params, config, sm_count)
    return widened if widened is not None else _overhang_tma_tile(params, config)


def _eight_group_tile(
    params: Conv2dGw8Params, config: WgradConfig, sm_count: int
) -> WgradConfig | None:
    """tma_tile's tile of TMA_BLOCK_G groups for config's of half as many, or None where
    config has other groups, or that tile is not valid or would leave the GPU under
    EIGHT_GROUP_MIN_WARPS_PER_SM warps per SM (_eight_group_min_warps)."""
    if config.block_g != TMA_BLOCK_G // 2 or params.groups % TMA_BLOCK_G:
        return None
    for prefetch in dict.fromkeys((max(config.prefetch, 2), config.prefetch)):
        try:
            tiled = dataclasses.replace(
                config, block_g=TMA_BLOCK_G, warp_g=2, prefetch=prefetch, tma=True
            )
        except ValueError:
            return None
        if _is_valid(params, tiled):
            break
    else:
        return None
    if _total_warps(params, tiled) < _eight_group_min_warps(params, sm_count):
        return None
    return _four_images(params, _images_synced(params, tiled), sm_count)


def _eight_group_min_warps(params: Conv2dGw8Params, sm_count: int) -> int:
    """The warps the grid of _eight_group_tile's tile should hold on sm_count SMs:
    EIGHT_GROUP_MIN_WARPS_PER_SM an SM, or _min_warps where that asks fewer. (Both read
    wgrad_heuristic's thresholds when called, so that a tool or test may set them.)"""
    per_sm = wgrad_heuristic.EIGHT_GROUP_MIN_WARPS_PER_SM
    return min(per_sm * sm_count, _min_warps(params, sm_count))


#: The widest image (columns) _one_strip_tile covers with one strip of 16-column warps: at
#: most 48, three warps of a warp row.
ONE_STRIP_MAX_Q = 48


def _one_strip_tile(params: Conv2dGw8Params, config: WgradConfig) -> WgradConfig:
    """config, or where it has 32-column strips of one image and the image is 33 to
    ONE_STRIP_MAX_Q columns wide, the same tile with one strip as wide as the image's columns
    rounded up to 16 (three warps across instead of two strips of two), where that is valid:
    the second 32-column strip of a 48-column image is half past its edge, which its warps
    load and multiply all the same.

    H200 (2026-11-29, tools/wgrad_variants_check.py, each as the launcher places it,
    alternating in one process; the 32-column tile -> 48 columns): 128x64x48x48 23.46 ->
    22.68 us (1.034x), 64x128x48x48 24.07 -> 23.00 (1.046x), 128x64x40x40 19.56 -> 18.56
    (1.054x). The 48-column tile in 32-row chunks lost (0.75-0.81x of the 32-column tile), in
    a wave of segments it ran about as its whole-image walk (1.00-1.06x), and with four groups
    a block it lost (0.89-0.92x); 16-column strips of two images had lost before (0.65-0.99x,
    thirty-ninth session). Held out (the same tool, the default against the 32-column tile):
    1.037-1.299x on 9 layers, 1.125x in geometric mean (64x64x36x36 15.13 -> 11.64 us,
    8x512x48x48 1.18x, 128x64x48x48 1 x 1 1.06x).
    """
    if config.block_q != 2 * TILE_Q or config.block_n != 1:
        return config
    if not 2 * TILE_Q < params.q <= ONE_STRIP_MAX_Q:
        return config
    one_strip = dataclasses.replace(config, block_q=ceil_div(params.q, TILE_Q) * TILE_Q)
    return one_strip if _is_valid(params, one_strip) else config


#: Blocks of FULL_LINE_TILE an SM holds with TMA rows (82 registers a thread, 8 walking
#: warps and a producer warp: the registers allow two), as of the eight-group TMA tile;
#: _walked_full_line_tile's grid fits one wave of them, and _one_wave_of_pairs asks it.
FULL_LINE_BLOCKS_PER_SM = 2


def _walked_full_line_tile(
    params: Conv2dGw8Params, config: WgradConfig, sm_count: int
) -> WgradConfig | None:
    """config, a cp.async tile of TMA_BLOCK_G groups and two images a step not walked
    (FULL_LINE_TILE's), walking two steps with its rows by TMA, where that is valid and its
    grid, half as many blocks, still holds MIN_WARPS_PER_SM warps per SM and fits one wave
    of FULL_LINE_BLOCKS_PER_SM blocks per SM: two waves of blocks become one wave of walks
    twice as long; then with four images a step where _four_images takes them. Where the
    walked grid is more than one such wave, only with four images a step walked into one
    wave of one block an SM (_four_images' _fewest_waves). None otherwise.

    H200 (2026-11-29, tools/wgrad_variants_check.py, each as the launcher places it,
    alternating in one process; the heuristic's tile -> walked with TMA rows): 256x64x64x64
    71.68 -> 65.27 us (1.098x, 97% of copy; 1.025x walked with cp.async rows, 1.062x in
    segments with TMA rows), 256x128x32x32 42.18 -> 36.78 (1.147x), 256x64x56x56 (already
    TMA rows) 60.45 -> 52.79 (1.145x); one group a warp, 256x128x28x28 35.50 -> 30.72
    (1.156x). Grids that stay two waves walked were left alone: 512x64x64x64 gained 1.085x,
    but 512x128x28x28 and 128x512x28x28, whose tiles the launcher walks in segments, lost
    (0.880x and 0.908x); so were grids that walking leaves short of a wave (192x64x64x64
    1.011x, 128x64x64x64 0.872x, 32x256x56x56 0.890x).

    Held out (H200, 2026-11-29, the rule timed on layers it was not
    written from; walked with TMA rows against one step with TMA rows, and the former
    default): 128x128x64x64 65.55 us against 70.67 and 72.95, 128x256x32x32 35.68 / 41.16 /
    41.36, 320x64x40x40 37.15 / 44.99 / 45.01, 512x64x28x28 28.73 / 35.07 / 36.52,
    128x128x56x56 52.26 / 58.48 / 62.81 (1.12-1.27x over the former default); but the 1 x 1
    filter of 512x128x16x16 lost, 18.82 against 18.24 and 18.14 us, so 1 x 1 filters keep
    their tile.

    Four images a step (H200, 2026-11-30, the same tool; two images walked -> four): on four
    layers 1.014x in geometric mean (128x256x32x32 36.54 -> 35.41 us, 256x128x32x32 1.015x,
    128x128x64x64 1.011x, 256x64x64x64 0.999x), held out on four more 1.009x
    (256x128x28x28 29.78 -> 29.01 us, 512x64x32x32 1.005x, 320x64x48x48 1.007x,
    64x512x32x32 0.997x). Small, as these walks already run at 81-96% of copy, but as
    everywhere else the four-image blocks keep the walks and halve the partial sums.

    Walked into one wave where two steps leave more (H200, 2026-11-30, the same tool; the
    launcher's tile, 768 to 2048 blocks of two images or its segments -> four images a
    step walked 3 to 8 steps, 128 blocks): 512x64x64x64 140.35 -> 121.81 us (1.152x, 2.44x
    -> 2.81x cuDNN), 1024x64x32x32 1.070x, 512x128x28x28 1.033x, 128x512x28x28 1.020x;
    held out on four more, 1.152x in geometric mean: 256x128x64x64 144.51 -> 123.44 us
    (1.171x, 3.00x cuDNN), 384x64x56x56 89.32 -> 75.03 (1.190x, 2.19x -> 2.61x),
    768x64x32x32 62.27 -> 50.08 (1.243x, 2.34x -> 2.90x), 512x256x28x28 1.018x.
    """
    if config.block_g != TMA_BLOCK_G or config.block_n != 2 or config.walk_n != 1 or config.tma:
        return None
    if params.r * params.s == 1:
        # A 1 x 1 filter's rows share no halo between the steps: 512x128x16x16 lost 0.97x.
        return None
    walked = dataclasses.replace(config, walk_n=2, tma=True)
    if not (_images_fit(params, walked.images) and _is_valid(params, walked)):
        return None
    if _total_warps(params, walked) < _min_warps(params, sm_count):
        return None
    wider = _four_images(params, walked, sm_count)
    if grid_blocks(params, walked) > FULL_LINE_BLOCKS_PER_SM * sm_count:
        # Two steps of two images leave more than one wave: only four images walked into
        # one wave (_fewest_waves) were measured to pay there.
        four_image_slots = FOUR_IMAGE_BLOCKS_PER_SM * sm_count
        if wider == walked or grid_blocks(params, wider) > four_image_slots:
            return None
    return wider


def _four_image_full_line_tile(
    params: Conv2dGw8Params, config: WgradConfig, sm_count: int
) -> WgradConfig | None:
    """config, a cp.async tile of TMA_BLOCK_G groups and two images a step not walked
    (FULL_LINE_TILE's), with its rows by TMA and four images a block where _four_images
    takes them: its images sync on their own, the filter is 3 x 3, its grid fits one wave of
    FULL_LINE_BLOCKS_PER_SM blocks per SM, and the wider grid, half as many blocks, still
    reaches FOUR_IMAGES_MIN_SM_SHARE of the sm_count SMs. None otherwise.

    Two blocks of 8 walking warps an SM become one of 16 (and a producer warp for each
    image): the walks stay as long, the SMs keep as many warps, and the partial sums halve,
    which these grids of short walks pay for (7% of the pass's bytes at 32 x 32).
    _walked_full_line_tile takes the grids of two waves instead; this takes one wave.

    H200 (2026-11-30, tools/wgrad_variants_check.py, as the launcher places them,
    alternating in one process; the cp.async tile -> four images by TMA). Nine layers of
    grids of 256 blocks: 1.037x at 16x512x64x64, 1.004x 16x1024x32x32, 1.044x 32x256x64x64,
    1.015x 32x512x32x32, 1.049x 64x128x64x64 (37.09 -> 35.35 us), 1.025x 64x256x32x32,
    0.999x 128x64x64x64, 1.027x 256x64x32x32 and 1.033x 128x128x32x32 (21.38 -> 20.70 us,
    2.43x -> 2.51x cuDNN): 1.026x in geometric mean. Four images with cp.async rows ran
    1.024x, and deeper rings (prefetch 4) 0.946-1.025x. Held out, ten 3 x 3 layers of grids
    of 240 to 256 blocks: 1.025x in geometric mean, 0.994-1.053x (80x192x32x32 21.17 ->
    20.10 us, 40x256x48x48 27.83 -> 26.62, 40x384x32x32 1.048x; 120x64x64x64 0.994x).
    Strips overhanging 28 and 56 columns, which took two images by TMA rows before
    (_overhang_tma_tile), gained over those on six layers: 1.004-1.044x (128x128x28x28 17.55
    -> 16.80 us, 32x512x28x28 1.037x, 128x64x56x56 1.004x). 1 x 1 filters, whose two-image
    blocks fit four an SM, went either way: 0.917-1.064x with TMA rows (32x1024x14x14 and
    512x64x14x14 0.92x), so they keep their tile.
    """
    if config.block_g != TMA_BLOCK_G or config.block_n != 2 or config.walk_n != 1 or config.tma:
        return None
    by_tma = dataclasses.replace(config, tma=True)
    if not _is_valid(params, by_tma):
        return None
    wider = _four_images(params, by_tma, sm_count)
    return wider if wider != by_tma else None


#: Filters at least this wide take TMA rows whatever their tile (_overhang_tma_tile).
TMA_WIDE_FILTER_S = 5


def _overhang_tma_tile(params: Conv2dGw8Params, config: WgradConfig) -> WgradConfig:
    """config with its rows by TMA (its own groups, walk and images), where it is a cp.async
    tile and that is a valid config, for filters at least TMA_WIDE_FILTER_S wide (but for
    the small grids' tile, SMALL_GRID_TILE), and for narrower filters of more than one
    column where config has TMA_BLOCK_G groups (whole 128-byte pixel lines) and its column
    strips overhang the image (q not a multiple of block_q); else config. (Likely why, not
    profiled: the TMA unit fills the zero columns past the image and the halo, which each
    warp of a cp.async tile issues itself.)

    H200 (2026-11-29, tools/wgrad_variants_check.py, each as the launcher places it, producer
    warps included, alternating in one process; cp.async -> TMA rows). Overhanging full
    lines, 3 x 3: 128x512x28x28 62.81 -> 53.82 us (1.167x), 64x1024x28x28 61.40 -> 52.55
    (1.168x), 256x128x28x28 1.021x, 128x128x40x40 35.13 -> 30.43 (1.154x), 128x64x56x56
    1.056x, 32x256x56x56 1.060x. Wide filters: 128x512x28x28 5 x 5 112.75 -> 95.61 (1.179x),
    128x64x56x56 5 x 5 57.55 -> 48.84 (1.178x), 128x256x16x16 5 x 5 1.048x, 16x64x56x56
    7 x 7 19.93 -> 18.45 (1.080x), 64x128x32x32 5 x 5 0.996x. Full lines that fit the image
    stayed even or lost (128x64x64x64 1.003x, 128x128x32x32 0.994x, 256x64x64x64 0.985x),
    as did 1 x 1 filters (512x128x28x28 0.983x).
    A second set of layers, not used for the rule above: overhanging full lines 1.032-1.229x
    (96x128x36x36 25.48 -> 20.73 us, 64x256x40x40 35.36 -> 29.79, 512x128x28x28 61.26 ->
    52.16, 256x64x56x56 1.032x, 32x512x28x28 1.036x), wide filters 1.004-1.206x
    (64x128x48x48 5 x 5 51.13 -> 42.37 us, 256x64x28x28 5 x 5 30.83 -> 27.21, 32x64x112x112
    5 x 5 1.024x, 128x64x56x56 7 x 7 1.004x). Half-line and single-group tiles of 3 x 3
    filters, which the rule first took too, lost 0.77-0.84x (the small layers' 32x128x28x28,
    16x128x28x28, 8x64x56x56 and 16x256x28x28; 128x96x40x40), so it leaves them.
    """
    # (The small grids' tile lost with TMA rows at 3 x 3 and was never timed with them wider.)
    wide = params.s >= TMA_WIDE_FILTER_S and config != _fit_tile(params, SMALL_GRID_TILE)
    overhanging_lines = config.block_g == TMA_BLOCK_G and params.q % config.block_q != 0
    if config.tma or params.s == 1 or not (wide or overhanging_lines):
        return config
    try:
        rows_by_tma = dataclasses.replace(config, tma=True)
    except ValueError:  # block_q not a multiple of TMA_ROW_PIXELS
        return config
    return rows_by_tma if _is_valid(params, rows_by_tma) else config


def _images_synced(params: Conv2dGw8Params, config: WgradConfig) -> WgradConfig:
    """TMA tile config with image_sync where it has several warp rows: each image's warps
    then have a producer warp and barriers of their own (wgrad.producer_config_on), so a
    slow warp holds back only its image's refills. Unlike the cp.async tiles of
    _with_image_sync, short last row chunks and walked steps gain too.

    H200 (2026-11-29, tools/wgrad_variants_check.py: the launcher's config against the same
    with image_sync, alternating in one process): 1.34-1.35x where four images of 28 x 28 or
    56 x 56 met at the block's barrier (32x64x56x56 13.54 -> 10.05 us, 128x64x28x28 13.43 ->
    9.93, 64x128x28x28, 32x256x28x28), 1.005-1.036x on nine layers of 13-15 pixel images
    walked two or four steps (512x256x14x14 31.74 -> 30.94 us, 256x512x14x14 31.72 ->
    30.63, 256x1024x14x14 61.59 -> 59.79, 256x256x15x15 1.005x), none slower; already synced,
    128x1024x16x16 ran 1.007x faster than without.
    """
    if config.image_sync or config.warp_rows == 1:
        return config
    synced = dataclasses.replace(config, image_sync=True)
    return synced if _is_valid(params, synced) else config


#: The share of the SMs whose each a block of _four_images' grid must reach.
FOUR_IMAGES_MIN_SM_SHARE = 0.9


def _four_images(params: Conv2dGw8Params, config: WgradConfig, sm_count: int) -> WgradConfig:
    """TMA tile config with four images a step instead of two where its images sync on their
    own, it walks several steps or its grid of a 3 x 3 filter is one wave of
    FULL_LINE_BLOCKS_PER_SM blocks an SM (_one_wave_of_pairs), and the grid of the wider
    blocks, half as many, still reaches FOUR_IMAGES_MIN_SM_SHARE of the sm_count SMs; else
    config. Each wider block is two of config's side by side, on one SM where two of those
    fit (the 14 x 14 tile: 82 registers, 10 warps or 20), so the walks stay as they were and
    the partial sums halve. A walked tile then walks as many steps as put its grid in the
    fewest waves (_fewest_waves).

    H200 (2026-11-29, tools/wgrad_variants_check.py, as the launcher runs them, one process
    each run): 1.020-1.051x on 128x512x14x14, 256x1024x14x14, 512x512x16x16, 1024x256x14x14
    (58.29 -> 56.20 us) and 512x512x14x14; 1.008-1.030x in three runs on 512x256x14x14
    (29.76 -> 28.89 us) and 1.005-1.015x on 256x512x14x14; 128x1024x14x14 1.003x,
    64x1024x16x16 1.005x, 128x1024x16x16 0.994-1.000x; walked two steps (grids of 128),
    256x256x14x14 1.008x and 64x1024x14x14 1.024x. Walked four steps there, grids of 64
    such blocks, half the SMs, lost: 0.765x and 0.749x. Not walked, one wave of two blocks
    an SM (2026-11-30, the same tool): 1.044-1.117x on five layers of the eight-group tile
    (64x512x14x14 9.49 -> 9.09 us, 40x768x14x14 10.09 -> 9.04, 32x1024x16x16 1.044x,
    64x512x16x16 1.050x, 32x1024x12x12 1.047x), and held out on eight more 1.027-1.056x,
    1.044x in geometric mean (128x256x14x14 9.89 -> 9.37 us, 256x128x14x14 10.59 -> 10.03,
    64x512x12x12 8.79 -> 8.35); the full-line tile's figures are
    _four_image_full_line_tile's.
    """
    if not config.image_sync or config.block_n != 2:
        return config
    if config.walk_n == 1 and not _one_wave_of_pairs(params, config, sm_count):
        return config
    wider = dataclasses.replace(config, block_n=4)
    if not (_is_valid(params, wider) and _images_fit(params, wider.images)):
        return config
    if grid_blocks(params, wider) < FOUR_IMAGES_MIN_SM_SHARE * sm_count:
        return config
    return _fewest_waves(params, wider, sm_count) if wider.walk_n > 1 else wider


#: Blocks of four images (_four_images) an SM holds: their 16 walking warps and 4 producer
#: warps take 82 registers a thread or more, over half of an SM's 64 K.
FOUR_IMAGE_BLOCKS_PER_SM = 1
#: The share of the SMs a grid of _fewest_waves' longer walks must reach.
FEWEST_WAVES_MIN_SM_SHARE = 0.95


def _fewest_waves(params: Conv2dGw8Params, config: WgradConfig, sm_count: int) -> WgradConfig:
    """Walked four-image tile config walking as many steps (walk_n) as puts its grid in the
    fewest waves of FOUR_IMAGE_BLOCKS_PER_SM blocks an SM, the fewest steps that do, where
    that grid still reaches FEWEST_WAVES_MIN_SM_SHARE of the sm_count SMs; config where no
    longer walk has fewer waves. Each wave pays the blocks' fixed costs (the rings' first
    rows, the accumulators' sums and stores, ~1.8 us) and the spread of its walks' ends;
    longer walks pay them once and write fewer partial sums. The walks may be of any number
    of steps, outside the config space's WALK_N_VALUES, as _one_strip_tile's strips are.

    H200 (2026-11-30, tools/wgrad_variants_check.py, as the launcher places them,
    alternating in one process; the tile before, walking 2 or 4 steps -> this): grids of
    two to four waves 1.064-1.084x (1024x256x14x14 55.87 -> 52.51 us, 2.43x -> 2.59x
    cuDNN, 512x512x14x14 1.073x, 1024x512x14x14 107.92 -> 99.60, 97% of copy); grids the
    launcher walked in segments to even out their waves (wgrad.balanced_config_on)
    1.017-1.044x (192x512x14x14 23.78 -> 22.77 us, 384x256x16x16 1.036x, 256x768x14x14),
    on grids of 128 or 132 blocks, but 192x768x14x14's of 120 (91% of the SMs) lost against
    its segments, 0.986x, hence the share. Walks that leave more SMs idle lost more:
    512x256x14x14 walking eight steps instead of four (64 blocks) 0.76x, 64x1024x16x16
    (32) 0.51x. Held out (seven layers of 10 x 10 to 16 x 16 images, none timed before):
    1.069x in geometric mean, 0.999-1.236x (512x1024x10x10 70.48 -> 57.04 us, walking 16
    steps; 768x256x13x13 1.061x, 2.53x cuDNN; 128x768x12x12 1.062x; 160x1024x14x14 1.050x;
    256x1024x16x16 1.047x; 96x1024x14x14 1.045x; 384x768x14x14 0.999x). 384x384x14x14,
    whose 120 blocks the share keeps in segments, ran 1.008x walking five steps.

    Grids this leaves as one wave on fewer SMs than the GPU has (the launcher walks segments
    only past one wave, wgrad._balanced_walk) keep their blocks: segments on every SM ran
    0.942-1.081x, 0.998x in geometric mean, on 15 layers of 72 to 120 blocks (H200,
    2026-11-30, the same tool; 96x192x14x14 8.70 -> 8.05 us but 80x384x14x14 9.26 -> 9.83,
    80x192x32x32 1.041x but 160x64x48x48 1.001x). About 4 us of such a pass is not its walk
    (tools/wgrad_time_split.py at 128x768x12x12 and 80x192x32x32: launch, the walks' spread,
    the blocks' sums, the reduction), and more SMs do not shorten it.
    """
    slots = FOUR_IMAGE_BLOCKS_PER_SM * sm_count
    best, best_waves = config, ceil_div(grid_blocks(params, config), slots)
    walk_n = config.walk_n
    while _images_fit(params, config.block_n * (walk_n + 1)):
        walk_n += 1
        walked = dataclasses.replace(config, walk_n=walk_n)
        blocks = grid_blocks(params, walked)
        if blocks < FEWEST_WAVES_MIN_SM_SHARE * sm_count:
            break
        waves = ceil_div(blocks, slots)
        if waves < best_waves and _is_valid(params, walked):
            best, best_waves = walked, waves
    return best


def _one_wave_of_pairs(params: Conv2dGw8Params, config: WgradConfig, sm_count: int) -> bool:
    """Whether config's grid, of a 3 x 3 filter, fits one wave of FULL_LINE_BLOCKS_PER_SM
    blocks an SM: where _four_images' wider blocks, one an SM, keep the SMs' warps. (Other
    filters were not timed so, but for 1 x 1: their blocks fit four an SM, and four images
    went 0.92-1.06x.)"""
    if (params.r, params.s) != (3, 3):
        return False
    return grid_blocks(params, config) <= FULL_LINE_BLOCKS_PER_SM * sm_count
