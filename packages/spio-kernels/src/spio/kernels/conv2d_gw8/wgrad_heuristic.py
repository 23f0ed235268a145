"""wgrad's default config by rule of thumb: the heuristic's tiles (TILE_LADDER,
FULL_LINE_TILE), the small-grid, short-walk and split-walk rules, and the tile for a GPU
with TMA (tma_tile). The config, its space and geometry are wgrad_spec's.

Kept out of the sources digest (sources_digest.PASS_FILES): a heuristic decides which config
runs, not what a config compiles to.
"""

from __future__ import annotations

import dataclasses

from ._tiling import ceil_div, first_filling, images_per_fragment, next_power_of_two
from .params import Conv2dGw8Params
from .wgrad_spec import (
    BLOCK_N_VALUES,
    BLOCK_P_VALUES,
    MAX_BLOCK_COLUMNS,
    PAIRED_BLOCK_Q,
    SHORT_BLOCK_P_VALUES,
    SHORT_PREFETCH_VALUES,
    TILE_Q,
    TMA_BLOCK_G,
    WALK_N_VALUES,
    WgradConfig,
    _images_fit,
    _is_valid,
    config_space,
    grid_blocks,
    has_short_chunks,
    workspace_bytes,
)

#: The heuristic's tiles, most work per block first: (block_q, block_g, warp_g, block_p,
#: prefetch, block_n). From H200 sweeps of the whole space (3 x 3, fp16): the first is the
#: best at 128x64x64x64 (44.4 us: long walks, few partials), the last at 32x64x64x64
#: (14.8 us: short walks, four images per block keep the partials few) and 4.5% from the best
#: at 64x128x32x32; the middle one, half the walk, keeps the grid full between them
#: (64x64x64x64: 36.1 us with the last tile).
TILE_LADDER: tuple[tuple[int, int, int, int, int, int], ...] = (
    (32, 4, 2, 64, 2, 1),
    (32, 4, 2, 32, 2, 1),
    (16, 4, 1, 16, 1, 4),
)

#: The tile tried before TILE_LADDER where the partial sums stay a small share of the bytes
#: (large images): whole 128-byte pixel lines (8 groups) and two images side by side, each
#: image's warps meeting at their own barrier. H200, alternating in one process against the
#: ladder's first tile: 128x64x64x64 42.5 -> 40.8-41.6 us, 256x64x64x64 81.0-82.3 ->
#: 78.2-79.9, 128x64x56x56 34.7 -> 34.5, 128x128x32x32 24.9 -> 24.7. Where the partials
#: call for walking steps of images, the ladder's half-line tiles walk better (128x1024x16x16:
#: 42.7 us walked four steps, 52.4 with this tile unwalked, 47.3 with four images walked two).
FULL_LINE_TILE = (16, 8, 2, 64, 2, 2)

#: Resident warps per SM a grid should fill before a larger tile is preferred (as fprop's).
#: Where the rules below say MIN_WARPS_PER_SM, filters of LARGE_FILTER_TAPS taps or more ask
#: LARGE_FILTER_MIN_WARPS_PER_SM instead (_min_warps).
MIN_WARPS_PER_SM = 13
#: The same for filters of at least LARGE_FILTER_TAPS taps (5 x 5 and wider, _min_warps):
#: their warps each have R x S products a row for every byte they load, so fewer warps hide
#: the loads' latency, and the larger tiles or longer walks this lets in write fewer partial
#: sums. H200 (2026-11-30, tools/min_warps_check.py --passes wgrad, each placed as the
#: launcher places it, alternating in one process; the default at 13 warps -> at 10): every
#: 5 x 5 and 7 x 7 layer timed gained, 96x64x28x28 7 x 7 24.41 -> 19.61 us (32-column TMA
#: tiles instead of segments), 96x64x24x24 5 x 5 1.19x, 96x128x24x24 5 x 5 1.12x (two
#: steps of images), 96x128x40x40 7 x 7 1.10x (four), 96x64x48x48 7 x 7 1.07x; at 3 x 3 the
#: same threshold lost on 8 of 11 layers (0.80-0.98x: the full-line cp.async tile in place
#: of 48-column and segmented TMA tiles, 256x64x40x40 walking two steps, 96x128x14x14), though
#: it gained 1.16-1.29x on 3 (24x64x56x56, 96x64x24x24, 48x64x28x28), so 3 x 3 keeps 13.
#: Held out (10 layers, the same tool and day, 13 -> 10): 1.085x in geometric mean,
#: 0.906-1.245x, 8 faster (48x64x56x56 5 x 5 29.76 -> 23.90 us, 128x96x28x28 5 x 5 1.20x,
#: 24x1024x20x20 7 x 7 1.17x, 24x256x28x28 5 x 5 1.16x, 48x512x16x16 7 x 7 1.15x) and 2
#: slower (96x1024x8x8 5 x 5 0.91x, walking four steps instead of segments; 48x64x24x24
#: 7 x 7 0.93x).
LARGE_FILTER_MIN_WARPS_PER_SM = 10
LARGE_FILTER_TAPS = 25
#: The warps per SM the grid of the eight-group TMA tile needs (_eight_group_tile, on a GPU
#: with TMA): its rows come by TMA from producer warps, so fewer walking warps keep the bytes
#: in flight, and it loads whole 128-byte pixel lines where the ladder's four-group tile
#: loads halves. Of the forty-sixth session's 3 x 3 layers at 10 warps (above), the two
#: that gained most took this tile (24x64x56x56 1.29x, 96x64x24x24 1.24x), and the losses
#: were other tiles. H200 (2026-11-30, tools/min_warps_check.py --passes wgrad, alternating
#: in one process; each run on layers its threshold changes, none timed before):
#: - 10 against 13 (the rule before), 14 layers of 8 x 8 to 112 x 112, 1 x 1 and 3 x 3:
#:   the tile ran 1.151x faster in geometric mean than the ladder's four-group cp.async tile
#:   that 13 kept, 0.956-1.686x, 12 faster (16x64x80x80 16.00 -> 9.50 us, 192x128x14x14
#:   12.93 -> 8.92, 48x512x14x14 12.73 -> 8.98, 24x256x28x28 1.20x; two 1 x 1 layers
#:   1.006x and 1.012x) and 2 slower (2x256x112x112 0.956x, 192x128x12x12 1 x 1 0.960x);
#: - 8 against 10, the 10 layers of 40 x 40 and 48 x 48 images that 8 lets in (8.7 warps an
#:   SM): 1.259x in geometric mean, 1.043-1.465x, all faster (8x256x40x40 12.00 -> 8.41 us,
#:   8x256x48x48 1 x 1 7.89 -> 5.39, 32x64x40x40 1.41x).
#: At 6 (6 of the 102 grid layers it would change) the tile went either way, 0.871-1.184x:
#: 16x256x20x20 and 32x512x14x14 1 x 1 lost.
EIGHT_GROUP_MIN_WARPS_PER_SM = 8

#: The tile for layers too small for the ladder to fill the GPU (its grid under
#: MIN_WARPS_PER_SM warps per SM) and no larger than SMALL_GRID_MAX_PIXELS: one group per block
#: and per warp, 8-row walks, two rows ahead, up to four images side by side meeting at the
#: block's barrier. Many small blocks spread a small layer over more SMs than the ladder's
#: 16-warp blocks. Against the previous rule (the ladder's tile with the most warps), in the
#: campaigns' data (layers whose sampled configs hold both): 1.03-1.56x on 16 layers on the
#: H200 and 1.02-1.61x on 11 on the H100, none slower; the shipped models predict 1.29x and
#: 1.25x (geometric means) over the 160 of 428 campaign layers it changes. Per-image
#: barriers lost on these layers (H200 sweep: 4x1024x8x8 3.69 us with, 3.52 without).
SMALL_GRID_TILE = (16, 1, 1, 8, 2, 4)
#: Filters of this many taps (7 x 7) get one group per block and per warp, with up to four
#: images side by side (_one_group_per_block): a block's reduction memory grows with its
#: groups times R x S, and with one group more blocks fit on an SM. From the campaigns' data
#: (H200, the layers whose sampled configs hold both): 1.20-1.69x on 5 layers
#: (4x64x112x112, 256x512x7x7, 256x1024x8x8, ...), none slower; the shipped models predict
#: 1.23x (H200) and 1.14x (H100) over the 49 of 425 campaign layers it changes, none more
#: than 4% slower. (5 x 5 filters lose as often as they gain.)
ONE_GROUP_MIN_TAPS = 49
#: The tile of small layers (has_short_chunks) whose grid would leave the GPU under
#: MIN_WARPS_PER_SM warps per SM: 16 columns, 4 groups (SHORT_WALK_GROUPS) of one to a warp,
#: one image, short row chunks (SHORT_BLOCK_P_VALUES: the longest whose grid holds
#: SHORT_WALK_MIN_BLOCKS blocks) loaded 4 rows ahead. Such a layer waits on one block's walk
#: of R - 1 + block_p rows, so shorter walks on more blocks win even with the partial sums
#: they add. H200 (2026-11-29, tools/wgrad_short_chunks_check.py, each as the launcher runs
#: it, one process), the previous heuristic's time -> this tile's: 1x64x16x16 1 x 1 2.45 ->
#: 1.94 us, 3 x 3 4.12 -> 2.63, 5 x 5 5.48 -> 3.38 (cuDNN 4.42), 7 x 7 7.40 -> 5.01 (cuDNN
#: 5.29), 1x64x8x8 5 x 5 4.39 -> 3.22 (cuDNN 3.66), 1x256x16x16 4.09 -> 2.61, 1x64x32x32
#: 4.12 -> 2.73, 8x128x8x8 4.19 -> 3.09, 16x64x8x8 4.29 -> 3.35, 1x64x56x56 6.24 -> 4.14;
#: about even at 1x512x7x7 (2.94 -> 2.89) and 4x64x32x32 (4.17 -> 4.14); 1.30x in geometric
#: mean over 27 layers of 1 to 16 images, 1 x 1 to 7 x 7, none slower; within 6% of the
#: fastest of the 8-12 short tiles timed on each, but for 1x64x56x56 (13%: 3.65 us with 2
#: groups and 448 blocks). Images of 4 rows lost (1x64x4x4: 2.18 -> 2.35), hence
#: has_short_chunks' taller images.
SHORT_WALK_GROUPS = (4, 2, 1)
#: The blocks SHORT_WALK_TILE's grid should hold: 1x64x28x28 took 3.00 us in 56 blocks of
#: 2-row chunks, 3.25 in 112 of 1 row.
SHORT_WALK_MIN_BLOCKS = 48

#: The largest images (output pixels) SMALL_GRID_TILE is for: on larger ones its short walks
#: and single groups write more partial sums than the extra blocks gain back (the models
#: predict losses at 56 x 56 and above).
SMALL_GRID_MAX_PIXELS = 32 * 32

#: Share of the pass's compulsory bytes above which the partial sums (written once, read once
#: more) are worth dividing by walking steps of images per block, as many as keep the grid
#: filling the GPU. H200, 3 x 3: 64x1024x16x16 (partials 14% of the bytes) 30.1 -> 26.5 us
#: walking two steps (the sweep's best); 512x256x14x14 (18%) 46.8 -> 38.3 us walking four
#: (best 37.6); 128x64x64x64 and 256x64x64x64 (3.5%) lose with fewer blocks.
WALK_PARTIALS_SHARE = 0.10


def _fit_tile(params: Conv2dGw8Params, fields: tuple[int, ...]) -> WgradConfig | None:
    """Return the ladder tile `fields` shrunk to params, or None where it cannot fit.

    Columns and rows no larger than the layer's; images narrower than the tile take more
    images per block (the same pixel columns, so the same number of partials), two to a
    warp's K step where images_per_fragment says (up to four images side by side); groups that
    divide the layer's; then, until it fits, one group per warp, one row of prefetch and
    fewer groups per block (large filters need many accumulators and reduction memory).
    """
    tile_q, block_g, warp_g, block_p, prefetch, block_n = fields
    block_p = min(block_p, max(BLOCK_P_VALUES[0], next_power_of_two(params.p)))
    images = images_per_fragment(params)
    if images > 1:
        # The tile's pixel columns as 16 / images of each image, at most BLOCK_N_VALUES'
        # largest and the batch rounded up to a power of two.
        block_q = TILE_Q // images
        block_n = min(
            max(images, block_n * tile_q // block_q),
            BLOCK_N_VALUES[-1],
            next_power_of_two(params.n),
        )
    else:
        block_q = min(tile_q, max(TILE_Q, next_power_of_two(params.q)))
        block_n = min(
            block_n * (tile_q // block_q),
            next_power_of_two(params.n),
            MAX_BLOCK_COLUMNS // block_q,
        )
    while params.groups % block_g:
        block_g //= 2
    for groups in (g for g in (block_g, block_g // 2, block_g // 4) if g >= 1):
        for groups_per_warp in dict.fromkeys((min(warp_g, groups), 1)):
            for ahead in dict.fromkeys((prefetch, 1)):
                try:
                    config = WgradConfig(block_q, groups, groups_per_warp, block_p, ahead, block_n)
                except ValueError:
                    continue
                if _is_valid(params, config):
                    return config
    return None


# Images side by side (_tiling.images_per_fragment), from H200 and H100 sweeps of every
# config (3 x 3 unless noted; best against best with one image per K step, H200): two
# images, 256x1024x8x8 25.1 against 40.4 us, 512x256x7x7 11.7 against 18.0, 64x512x7x7 5.5
# against 7.0, 32x1024x8x8 5.9 against 7.2, 128x256x8x8 5 x 5 9.6 against 13.3,
# 256x512x7x7 7 x 7 47.0 against 71.4, small layers (8x256x8x8, 16x128x7x7) within 2%;
# four images, 512x512x4x4 10.8 against 13.4 (two) and 23.3. The H100's are alike.


def _total_warps(params: Conv2dGw8Params, config: WgradConfig) -> int:
    return grid_blocks(params, config) * config.warps


def _min_warps(params: Conv2dGw8Params, sm_count: int) -> int:
    """The warps a grid should hold on sm_count SMs: LARGE_FILTER_MIN_WARPS_PER_SM an SM for
    filters of LARGE_FILTER_TAPS taps or more, else MIN_WARPS_PER_SM."""
    large = params.r * params.s >= LARGE_FILTER_TAPS
    return (LARGE_FILTER_MIN_WARPS_PER_SM if large else MIN_WARPS_PER_SM) * sm_count


def default_config(params: Conv2dGw8Params, sm_count: int = 132) -> WgradConfig:
    """Pick a config by rule of thumb (the perf model replaces this later): the tile rules
    of _tile_config, then for 7 x 7 filters one group per block (_one_group_per_block),
    except in short walks (SHORT_WALK_TILE: at 1x64x16x16 7 x 7, H200, one group a block
    took 5.31 us against the tile's 4.96)."""
    config = _tile_config(params, sm_count)
    if config.block_p < BLOCK_P_VALUES[0]:
        return config
    return _one_group_per_block(params, config)


def _tile_config(params: Conv2dGw8Params, sm_count: int) -> WgradConfig:
    """The heuristic's tile.

    FULL_LINE_TILE (fitted to params) where its grid holds MIN_WARPS_PER_SM warps per SM,
    its partial sums stay within WALK_PARTIALS_SHARE of the pass's bytes and its images sync
    on their own (its measured gain needs them to). Else the first tile of TILE_LADDER whose
    grid holds MIN_WARPS_PER_SM warps per SM (where none does, the one with the most warps);
    then, where the partial sums exceed WALK_PARTIALS_SHARE, the most steps of images per
    block (walk_n 4 or 2) whose grid still holds MIN_WARPS_PER_SM warps per SM and a block
    per SM (_walked). Blocks of several images side by side sync per image (image_sync) where
    their row chunks cover the output rows exactly, or where one chunk covers them and the
    block walks one step. Where the result still leaves the grid under MIN_WARPS_PER_SM warps
    per SM: for a layer with short chunks in its space (has_short_chunks), SHORT_WALK_TILE;
    else, where the images are small (SMALL_GRID_MAX_PIXELS), SMALL_GRID_TILE (fitted) if its
    grid holds as many warps or more.
    """
    min_warps = _min_warps(params, sm_count)
    full_line = _fit_tile(params, FULL_LINE_TILE)
    if full_line is not None:
        full_line = _with_image_sync(params, full_line)
        if (
            full_line.image_sync
            and _total_warps(params, full_line) >= min_warps
            and not _partials_call_for_walking(params, full_line)
        ):
            return full_line
    candidates = [
        config
        for config in dict.fromkeys(_fit_tile(params, fields) for fields in TILE_LADDER)
        if config is not None
    ]
    if not candidates:
        space = config_space(params)
        if not space:
            raise ValueError(f"no wgrad config fits {params}")
        return space[0]
    config = first_filling(
        candidates, lambda config: _total_warps(params, config), lambda _: min_warps
    )
    config = _with_image_sync(params, _walked(params, config, sm_count))
    if _total_warps(params, config) < min_warps and has_short_chunks(params):
        short = _short_walk_tile(params)
        if short is not None:
            return short
    if _total_warps(params, config) < min_warps and params.p * params.q <= SMALL_GRID_MAX_PIXELS:
        small = _fit_tile(params, SMALL_GRID_TILE)
        if small is not None and _total_warps(params, small) >= _total_warps(params, config):
            return small
    return config


def _short_walk_tile(params: Conv2dGw8Params) -> WgradConfig | None:
    """SHORT_WALK_TILE for params: the most groups of SHORT_WALK_GROUPS that divide the
    layer's, and the longest row chunk of SHORT_BLOCK_P_VALUES whose grid holds
    SHORT_WALK_MIN_BLOCKS blocks (else the shortest), at the deepest prefetch that is valid;
    None where none is."""
    block_g = next(g for g in SHORT_WALK_GROUPS if params.groups % g == 0)
    chunks = [block_p for block_p in SHORT_BLOCK_P_VALUES if block_p < params.p]
    tiles = []
    for block_p in reversed(chunks):
        for prefetch in sorted(SHORT_PREFETCH_VALUES, reverse=True):
            config = WgradConfig(TILE_Q, block_g, 1, block_p, prefetch, 1, 1)
            if _is_valid(params, config):
                tiles.append(config)
                break
    if not tiles:
        return None
    return next((t for t in tiles if grid_blocks(params, t) >= SHORT_WALK_MIN_BLOCKS), tiles[-1])


#: Row chunks (longest first) and prefetches (deepest first) of split_walk_tile's tiles.
SPLIT_WALK_CHUNKS = (8, 4, 2, 1)
SPLIT_WALK_PREFETCHES = (4, 2, 1)


def split_walk_tile(
    params: Conv2dGw8Params, config: WgradConfig, sm_count: int = 132
) -> WgradConfig:
    """config, or where it is SHORT_WALK_TILE's (a row chunk shorter than BLOCK_P_VALUES') and
    the filter has several rows, the tile whose blocks take one filter row each (block_r 1):
    a block's walk is then block_p input rows instead of R - 1 + block_p, on R times the blocks,
    for the same partial sums.

    Its columns: 8 of each of up to 4 images per K step where the images are at most 8 wide
    and the batch has two, else 16 of up to 2 images side by side; the most groups of
    SHORT_WALK_GROUPS, one to a warp; the deepest of SPLIT_WALK_PREFETCHES that is valid.
    Where one block can cover the layer's images (at most 8 rows, one column strip, every
    image), a chunk of all the rows, so that a single partial sum is grad_w and no reduction
    runs: with the most groups whose grid holds SHORT_WALK_MIN_BLOCKS blocks. Else the
    longest of SPLIT_WALK_CHUNKS whose grid holds a block per SM (else the shortest).

    H200 (2026-11-29, tools/wgrad_row_split_check.py, each as the launcher runs it, one
    process), the short walk's time -> this tile's, and the fastest split tile timed:
    1x64x8x8 7 x 7 4.71 -> 2.59 us (2.53; cuDNN 12.6), 1x256x8x8 7 x 7 5.92 -> 2.71 (2.65;
    cuDNN 4.42), 2x64x8x8 7 x 7 5.03 -> 2.73 (2.59; cuDNN 4.45), 1x128x16x16 7 x 7 6.02 ->
    3.31 (3.22; cuDNN 5.47), 8x128x8x8 5 x 5 5.19 -> 2.98 (2.91; cuDNN 5.24), 1x64x16x16
    5 x 5 3.49 -> 2.55 (2.47), 3 x 3 2.70 -> 2.34 (the fastest), 1x256x8x8 3 x 3 2.57 ->
    2.25 (the fastest), 4x64x32x32 3 x 3 4.21 -> 3.19 (the fastest), 1x64x56x56 3 x 3 4.20
    -> 3.48 (the fastest); 8x128x8x8 7 x 7 7.84 -> over 3.46 (the 2-row chunk was not among
    the 6 fastest printed; 3.36 the fastest, cuDNN 6.49), 3.51 in the benchmark's process
    (cuDNN 6.41). Held out (7 layers not used to set the rule): 1.08-1.56x the short walk,
    within 6.5% of the fastest split tile, 1.71-2.24x cuDNN (1x64x8x8 5 x 5 3.22 -> 2.24 us,
    4x64x16x16 5 x 5 4.29 -> 2.85, 1x512x7x7 3 x 3 3.19 -> 2.04, 16x64x8x8 3 x 3 2.76 ->
    2.55).
    """
    if config.block_p >= BLOCK_P_VALUES[0] or params.r == 1:
        return config
    paired = params.q <= PAIRED_BLOCK_Q and params.n >= 2
    block_q = PAIRED_BLOCK_Q if paired else TILE_Q
    block_n = min(4 if paired else 2, next_power_of_two(params.n))
    groups = [g for g in SHORT_WALK_GROUPS if params.groups % g == 0]

    def tile(block_g: int, block_p: int) -> WgradConfig | None:
        for prefetch in SPLIT_WALK_PREFETCHES:
            split = WgradConfig(block_q, block_g, 1, block_p, prefetch, block_n, 1, block_r=1)
            if _is_valid(params, split):
                return split
        return None

    if params.p <= SPLIT_WALK_CHUNKS[0] and params.q <= block_q and block_n >= params.n:
        for block_g in groups:
            whole = tile(block_g, next_power_of_two(params.p))
            if whole is not None and grid_blocks(params, whole) >= SHORT_WALK_MIN_BLOCKS:
                return whole
    chunks = [p for p in SPLIT_WALK_CHUNKS if p <= next_power_of_two(params.p)]
    tiles = [t for t in (tile(groups[0], p) for p in chunks) if t is not None]
    if not tiles:
        return config
    return next((t for t in tiles if grid_blocks(params, t) >= sm_count), tiles[-1])


def tma_tile(params: Conv2dGw8Params, config: WgradConfig, sm_count: int = 132) -> WgradConfig:
    """The heuristic's tile for a GPU with TMA (sm_90 and newer): config, where it has half
    of TMA_BLOCK_G groups a block and warps of TILE_Q columns, with TMA_BLOCK_G groups, two to
    a warp, its rows by TMA and two rows of prefetch (one where two do not fit), where that is
    a valid config whose grid still holds EIGHT_GROUP_MIN_WARPS_PER_SM warps per SM
    (_eight_group_tile), its strips one across images 33 to 48 columns wide
    (_one_strip_tile); else
    FULL_LINE_TILE's walking two steps with its rows by TMA where its two waves become one
    (_walked_full_line_tile); else FULL_LINE_TILE's with four images a block by TMA where
    its one wave of two blocks per SM becomes one block per SM (_four_image_full_line_tile);
    else config, with its rows by TMA where its filter is wide,
    or it has TMA_BLOCK_G groups and its column strips overhang the image
    (_overhang_tma_tile).

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
    EIGHT_GROUP_MIN_WARPS_PER_SM an SM, or _min_warps where that asks fewer."""
    return min(EIGHT_GROUP_MIN_WARPS_PER_SM * sm_count, _min_warps(params, sm_count))


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
    twice as long; then with four images a step where _four_images takes them. None
    otherwise.

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
    if grid_blocks(params, walked) > FULL_LINE_BLOCKS_PER_SM * sm_count:
        return None
    return _four_images(params, walked, sm_count)


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
    the partial sums halve.

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
    return wider


def _one_wave_of_pairs(params: Conv2dGw8Params, config: WgradConfig, sm_count: int) -> bool:
    """Whether config's grid, of a 3 x 3 filter, fits one wave of FULL_LINE_BLOCKS_PER_SM
    blocks an SM: where _four_images' wider blocks, one an SM, keep the SMs' warps. (Other
    filters were not timed so, but for 1 x 1: their blocks fit four an SM, and four images
    went 0.92-1.06x.)"""
    if (params.r, params.s) != (3, 3):
        return False
    return grid_blocks(params, config) <= FULL_LINE_BLOCKS_PER_SM * sm_count


def _one_group_per_block(params: Conv2dGw8Params, config: WgradConfig) -> WgradConfig:
    """For filters of at least ONE_GROUP_MIN_TAPS taps, config with one group per block and
    per warp and up to four images side by side on the block's barrier (where that is a
    valid config whose images fit the batch); else config."""
    if params.r * params.s < ONE_GROUP_MIN_TAPS or config.block_g == 1:
        return config
    block_n = min(4, next_power_of_two(params.n), MAX_BLOCK_COLUMNS // config.block_q)
    one_group = dataclasses.replace(config, block_g=1, warp_g=1, block_n=block_n, image_sync=False)
    if _is_valid(params, one_group) and _images_fit(params, one_group.images):
        return one_group
    return config


def _walked(params: Conv2dGw8Params, config: WgradConfig, sm_count: int) -> WgradConfig:
    """config walking the most steps of images whose grid keeps MIN_WARPS_PER_SM warps per SM
    and a block on every one of the sm_count SMs, where the partial sums exceed
    WALK_PARTIALS_SHARE of the pass's bytes; else config.

    Counting warps alone let the ladder's 16-warp tile walk two steps on grids of 128 blocks,
    fewer than the SMs: H200 (2026-11-30, tools/wgrad_variants_check.py, alternating in one
    process; walked two steps -> one step, each image's warps synced, as the launcher then
    places it): 64x128x24x24 16.13 -> 10.69 us, 32x256x24x24 15.64 -> 10.34, 128x64x20x20
    12.40 -> 9.24 (1.34-1.51x); and with the step of one image those grids take TMA_BLOCK_G
    groups by TMA (tma_tile) on an H200: 8.96, 8.63 and 8.64 us (1.43-1.81x). Held out (six
    layers the rule was not written from, the same tool and day, the launcher's default
    before -> after): 8x1024x20x20 11.18 -> 7.76 us, 16x512x24x24 15.54 -> 8.28,
    48x64x40x40 18.56 -> 9.01, 64x128x20x20 11.47 -> 8.28, 128x64x24x24 16.22 -> 9.21,
    32x256x20x20 11.23 -> 7.93: 1.39-2.06x, 1.64x in geometric mean, 2.06-2.91x cuDNN. The
    cp.async tile a GPU without TMA runs there gained 1.31-1.53x unwalked (one step, each
    image's warps meeting at the block's barrier: per-image barriers lost 0.81-0.99x on
    those even chunks, so _with_image_sync still asks for chunks of block_p rows). The
    campaigns' rows agree (tools/wgrad_walk_blocks_data.py, each walked config against the
    same walking one step): walked grids under 132 blocks ran 0.599x in geometric mean on the
    H200 (2558 pairs, 5% faster) and 0.613x on the H100 (2270), those of 132 or more 1.151x
    and 1.175x.
    """
    if not _partials_call_for_walking(params, config):
        return config
    for walk_n in sorted(WALK_N_VALUES, reverse=True):
        walked = dataclasses.replace(config, walk_n=walk_n)
        if (
            _images_fit(params, walked.images)
            and _is_valid(params, walked)
            and _total_warps(params, walked) >= _min_warps(params, sm_count)
            and grid_blocks(params, walked) >= sm_count
        ):
            return walked
    return config


def _partials_call_for_walking(params: Conv2dGw8Params, config: WgradConfig) -> bool:
    """Whether config's partial sums exceed WALK_PARTIALS_SHARE of the pass's bytes."""
    return workspace_bytes(params, config) > WALK_PARTIALS_SHARE * params.compulsory_bytes("wgrad")


def _with_image_sync(params: Conv2dGw8Params, config: WgradConfig) -> WgradConfig:
    """config with image_sync where it has several images side by side, one to a warp row
    (paired tiles keep the block's barrier: their sweeps' fastest configs mostly do), and its
    row chunks cover the output rows exactly, or one chunk covers them and it walks one step.

    From alternating H200 runs. Whole row chunks gained: 32x64x64x64 15.0 -> 13.2 us,
    64x128x32x32 15.0 -> 13.4, 64x1024x16x16 26.3 -> 25.8, 128x1024x16x16 44.3 -> 43.2;
    with the tile (16, 4, 1, 16, 1, 4) at N = 128: 64x64 58.8 -> 53.3 us, 64 x 56 (columns
    overhanging) 56.6 -> 50.9, 64 x 60 57.8 -> 52.2. A last row chunk shorter than block_p
    lost, for a reason not yet found: 56 x 64 58.7 -> 65.2, 60 x 64 59.6 -> 66.1, 56 x 56
    55.5 -> 64.0; 512x256x14x14 (the heuristic's two images walked four steps) 39 -> 54.
    One short chunk per image, not walked, gained (FULL_LINE_TILE, in one process):
    128x64x56x56 35.5 -> 34.5 us, 128x256x14x14 12.3 -> 11.8, 512x256x14x14 47.3 -> 45.4.
    """
    whole_chunks = params.p % config.block_p == 0
    one_chunk = config.block_p >= params.p and config.walk_n == 1
    if config.warp_images == 1 and config.block_n > 1 and (whole_chunks or one_chunk):
        return dataclasses.replace(config, image_sync=True)
    return config
