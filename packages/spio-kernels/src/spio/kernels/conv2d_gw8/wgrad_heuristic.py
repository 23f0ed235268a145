"""wgrad's default config by rule of thumb: the heuristic's tiles (TILE_LADDER,
FULL_LINE_TILE), the small-grid, short-walk and split-walk rules; the tile a GPU with TMA
runs instead is wgrad_tma_tile's, 1 x 1 filters' row chunks wgrad_pointwise's and their
groups per block wgrad_pixel_groups'. The config, its space and geometry are wgrad_spec's.

Kept out of the sources digest (sources_digest.PASS_FILES): a heuristic decides which config
runs, not what a config compiles to.
"""

from __future__ import annotations

import dataclasses

from ._tiling import first_filling, images_per_fragment, next_power_of_two
from .even_chunks import even_rows
from .params import Conv2dGw8Params, check_params, check_sm_count
from .wgrad_pixel_groups import pixel_groups_tile
from .wgrad_pointwise import pointwise_chunks
from .wgrad_spec import (
    BLOCK_N_VALUES,
    BLOCK_P_VALUES,
    MAX_BLOCK_COLUMNS,
    PAIRED_BLOCK_Q,
    SHORT_BLOCK_P_VALUES,
    SHORT_PREFETCH_VALUES,
    TILE_Q,
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
#: Images side by side in FULL_LINE_TILE where the layer's groups are not a multiple of 8
#: (96, 160, 224, 480, 672 channels: ConvNeXt's and EfficientNet's among them), so that
#: its blocks of four groups keep eight warps (_full_line_tiles). H200 (2026-11-30,
#: tools/wgrad_variants_check.py --variants block_n=4 block_q=32, each as the launcher places
#: it, alternating in one process; two images -> four): 128x96x56x56 76.54 -> 47.04 us
#: (3.33x cuDNN), 128x160x56x56 132.29 -> 81.36, 256x96x28x28 41.13 -> 26.31, 128x160x28x28
#: 35.11 -> 23.45, 256x160x14x14 19.11 -> 14.17, 64x480x14x14 1.079x, 64x224x28x28 1.053x,
#: 32x480x28x28 1.028x. Doubling the columns instead (block_q 32) gained as much on 56- and
#: 28-row layers of 128 images or more but lost on the others (0.55-0.97x). Held out (the same
#: tool and day, the former default -> this): 64x160x56x56 65.60 -> 40.89 us, 128x224x28x28
#: 45.02 -> 31.64, 512x96x14x14 23.12 -> 15.51, 64x672x14x14 1.091x, 256x96x56x56 1.068x,
#: 128x160x24x24 1.063x, 256x96x20x20 1.032x, 256x160x24x24 1.029x, 512x96x20x20 1.025x
#: (the last four in place of the ladder's 32-column tile), 256x480x28x28 0.978x; where the
#: former walked two images two steps, 256x224x14x14 1.068x, 128x672x14x14 1.065x,
#: 128x480x14x14 0.975x, 128x480x16x16 0.911x.
HALF_LINE_IMAGES = 4
#: The largest share of the pass's bytes the partial sums of the four-image tiles may take
#: (where FULL_LINE_TILE's may take WALK_PARTIALS_SHARE): images of 17 to 32 rows walk them
#: in 16-row chunks (cut evenly) rather than the ladder's walks or segments, whose grids
#: hold 1 to 1.5 blocks an SM there; above a quarter the walks of two steps of images pay
#: (HEAVY_PARTIALS_SHARE). H200 (2026-11-30, tools/wgrad_variants_check.py, alternating in
#: one process; the former default -> four images in 16-row chunks, partials 12-18% of the
#: bytes): 16x672x24x24 21.78 -> 12.54 us (walked two steps; the shipped model's pick 12.20),
#: 16x480x24x24 1.127x; then on 6 layers of the same kind: 64x160x24x24 22.04 -> 12.51 us,
#: 24x480x24x24 1.652x, 128x96x24x24 1.590x (the three walked two steps), 16x672x20x20
#: 1.310x, 48x224x20x20 1.301x, 96x96x20x20 1.225x (the three in segments).
HALF_LINE_MAX_PARTIALS_SHARE = 0.25
#: The shortest row chunk of the four-image tile with half its rows (_half_rows): 16, the
#: chunks HALF_LINE_MAX_PARTIALS_SHARE's layers were timed with (8-row chunks of images of
#: 9 to 16 rows were not).
HALF_ROWS_MIN_BLOCK_P = 16
#: The largest filter (taps) HALF_LINE_IMAGES was timed on: 3 x 3. 1 x 1 filters and 5 x 5
#: or wider ones, whose tiles this would move to other paths (TMA rows, walks), keep theirs.
HALF_LINE_MAX_TAPS = 9

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
    took 5.31 us against the tile's 4.96); for 1 x 1 filters on layers whose groups are not
    a multiple of 8, shorter row chunks where they fill the waves (wgrad_pointwise), then
    blocks of whole pixels or runs of 20 or 12 groups (wgrad_pixel_groups)."""
    check_params(params)
    check_sm_count(sm_count)
    config = _tile_config(params, sm_count)
    if config.block_p < BLOCK_P_VALUES[0]:
        return config
    chunked = pointwise_chunks(params, _one_group_per_block(params, config), sm_count)
    return pixel_groups_tile(params, chunked, sm_count)


def _tile_config(params: Conv2dGw8Params, sm_count: int) -> WgradConfig:
    """The heuristic's tile.

    The first of the full-line tiles (_full_line_tiles) whose grid holds MIN_WARPS_PER_SM
    warps per SM, whose partial sums stay within WALK_PARTIALS_SHARE of the pass's bytes
    (HALF_LINE_MAX_PARTIALS_SHARE for four images in several row chunks) and whose images
    sync on their own (its measured gain needs them to). Else the first tile of TILE_LADDER whose
    grid holds MIN_WARPS_PER_SM warps per SM (where none does, the one with the most warps);
    then, where the partial sums exceed WALK_PARTIALS_SHARE, the most steps of images per
    block (walk_n 4 or 2) whose grid still holds MIN_WARPS_PER_SM warps per SM and a block
    per SM (_walked). Blocks of several images side by side sync per image (image_sync) where
    their row chunks cover the output rows exactly, or where one chunk covers them and the
    block walks one step. Where the result still leaves the grid under MIN_WARPS_PER_SM warps
    per SM: for a layer with short chunks in its space (has_short_chunks), SHORT_WALK_TILE;
    else, where the images are small (SMALL_GRID_MAX_PIXELS), SMALL_GRID_TILE (fitted) if its
    grid holds as many warps or more. A ladder tile that stays walks two steps where its
    partial sums are heavy (_heavy_partials_walked).
    """
    min_warps = _min_warps(params, sm_count)
    for full_line in _full_line_tiles(params):
        full_line = _with_image_sync(params, full_line, cut_evenly=_off_the_full_line(params))
        if (
            full_line.image_sync
            and _total_warps(params, full_line) >= min_warps
            and _partials_share(params, full_line) <= _full_line_partials_limit(params, full_line)
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
    return _heavy_partials_walked(params, config, sm_count)


def _off_the_full_line(params: Conv2dGw8Params) -> bool:
    """Whether the layer's groups are not a multiple of FULL_LINE_TILE's (96, 160, 224, 480,
    672 channels): no tile of 8 groups fits it, neither the full-line tile's nor, on a GPU
    with TMA, the eight-group TMA tile (wgrad_tma_tile)."""
    return params.groups % FULL_LINE_TILE[1] != 0


def _full_line_tiles(params: Conv2dGw8Params) -> list[WgradConfig]:
    """FULL_LINE_TILE fitted to params; where the layer's groups are not a multiple of its
    groups (_off_the_full_line: it fits with half as many, four, and half the warps) and the
    filter has 2 to HALF_LINE_MAX_TAPS taps, first the same tile with HALF_LINE_IMAGES
    images side by side, which gives the block its warps back, then that tile with half its
    rows (chunks of HALF_ROWS_MIN_BLOCK_P rows or more), which doubles its blocks where the
    grid lacks warps (as the ladder's second tile halves its first).

    On layers off the full line, _tile_config syncs these tiles' images on row chunks as
    the launcher cuts them evenly (rows 56, 80, 112: chunks of 28, 40, 56), where their
    alternative is the ladder's 32-column cp.async tile. H200 (2026-11-30,
    tools/wgrad_former_default_check.py, each layer alternating in one process; the former
    default -> this, 15 layers, all 3 x 3 but two):
    - four images: 32x96x112x112 64.39 -> 45.75 us, 16x224x112x112 75.95 -> 53.79,
      32x160x80x80 51.70 -> 39.08, 64x160x80x80 90.30 -> 76.58;
    - four images of half the rows: 64x96x56x56 33.86 -> 25.82 us (the tile the shipped H200
      model picks, 26.06), 48x96x48x48 20.42 -> 15.28, 16x96x120x120 38.18 -> 26.78,
      24x160x56x56 1.232x, 8x480x56x56 1.200x, 8x224x112x112 1.191x, 48x160x40x40 1.146x,
      8x160x112x112 1.107x, 48x96x64x64 1.014x;
    - two images, 1 x 1: 24x160x80x80 1.030x, 16x480x112x112 0.986x.
    Where the groups are a multiple of 8 the same sync put the two-image tile in place of
    the eight-group TMA tile on an H200 and went either way (16 layers, 1.025x in geometric
    mean, 0.821-1.197x: 64x128x80x80 1.175x, 32x320x80x80 1.175x, 32x384x80x80 0.821x,
    24x384x80x80 0.832x), and the ladder's own tiles synced on even chunks did too
    (2x128x56x56 5 x 5 1.127x, 4x64x56x56 0.845x), so both keep chunks of block_p rows.
    """
    tiles = [_fit_tile(params, FULL_LINE_TILE)]
    tile_q, block_g, warp_g, block_p, prefetch, _ = FULL_LINE_TILE
    if _off_the_full_line(params) and 1 < params.r * params.s <= HALF_LINE_MAX_TAPS:
        four = _fit_tile(params, (tile_q, block_g, warp_g, block_p, prefetch, HALF_LINE_IMAGES))
        tiles[:0] = [four, _half_rows(params, four)]
    return [tile for tile in dict.fromkeys(tiles) if tile is not None]


def _half_rows(params: Conv2dGw8Params, tile: WgradConfig | None) -> WgradConfig | None:
    """tile with half its row chunk, where that keeps chunks of HALF_ROWS_MIN_BLOCK_P rows
    or more and is a valid config; else None."""
    if tile is None or tile.block_p // 2 < HALF_ROWS_MIN_BLOCK_P:
        return None
    half = dataclasses.replace(tile, block_p=tile.block_p // 2)
    return half if _is_valid(params, half) else None


def _full_line_partials_limit(params: Conv2dGw8Params, tile: WgradConfig) -> float:
    """The largest share of the pass's bytes a full-line tile's partial sums may take:
    HALF_LINE_MAX_PARTIALS_SHARE for the four-image tiles that walk several row chunks of
    an image, else WALK_PARTIALS_SHARE."""
    if tile.block_n == HALF_LINE_IMAGES and tile.block_p < params.p:
        return HALF_LINE_MAX_PARTIALS_SHARE
    return WALK_PARTIALS_SHARE


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
#: The share of the SMs that a split tile's grid without the split (block_r 0) must fall
#: short of for the split to pay. A split block walks block_p rows where the unsplit one walks
#: R - 1 + block_p, so the split reads each input row R times over; that buys parallelism
#: on a small grid and is pure cost on a full one. H200 (132 SMs, 2026-11-30, 3 x 3 unless
#: named, each as the launcher runs it, alternating in one process; split -> unsplit):
#: unsplit grids of 384 or 192 blocks: 4x768x28x28 9.55 -> 6.71 us, 16x768x10x10 8.09 ->
#: 5.88, 4x384x28x28 7.19 -> 5.31, 32x192x10x10 6.42 -> 4.94, 1x768x28x28 6.91 -> 4.37,
#: 2x768x28x28 7.19 -> 5.27, 1x1024x28x28 (256) 5.14 -> 4.82; of 128: 2x512x28x28 4.80 ->
#: 4.59, 16x256x10x10 4.48 -> 4.21, 8x512x12x12 4.68 -> 4.46; of 96 or fewer the split won:
#: 8x384x14x14 4.34 against 4.62, 4x256x20x20 5 x 5 6.39 against 6.61, 2x768x14x14 3.61
#: against 4.18, 8x1024x7x7 3.63 against 4.38, 4x64x32x32 3.25 against 3.59, 1x64x56x56
#: 3.44 against 4.33, 1x128x16x16 7 x 7 3.18 against 6.07. So the line lies between 96 and
#: 128 blocks on 132 SMs.
SPLIT_WALK_MAX_SM_SHARE = 0.75


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
    longest of SPLIT_WALK_CHUNKS whose grid holds a block per SM (else the shortest). Where
    that tile without the split fills SPLIT_WALK_MAX_SM_SHARE of the SMs (wide layers: many
    groups), the split reads rows again for blocks the GPU does not need, and the tile walks
    every filter row instead.

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
    split = next((t for t in tiles if grid_blocks(params, t) >= sm_count), tiles[-1])
    return _unsplit_on_a_full_grid(params, split, sm_count)


def _unsplit_on_a_full_grid(
    params: Conv2dGw8Params, split: WgradConfig, sm_count: int
) -> WgradConfig:
    """split without its filter rows split (block_r 0) where that tile's grid already holds
    SPLIT_WALK_MAX_SM_SHARE of the SMs' worth of blocks and is valid; else split.

    5 x 5 and 7 x 7 filters as 3 x 3 ones (H200, 2026-11-30, tools/wgrad_variants_check.py
    --variants block_r=0, alternating in one process; split -> unsplit, unsplit blocks):
    2x768x28x28 5 x 5 10.56 -> 8.45 us (192), 8x1024x10x10 5 x 5 10.88 -> 8.14 (256),
    16x256x10x10 5 x 5 7.37 -> 5.96 (128), 4x512x28x28 5 x 5 13.14 -> 9.09 (256),
    16x384x14x14 7 x 7 17.68 -> 14.36 (192), 32x256x10x10 7 x 7 18.09 -> 10.94 (256),
    4x256x28x28 7 x 7 11.94 -> 10.43 (128). Held out: 16x384x14x14 5 x 5 11.74 -> 8.26 us,
    8x512x12x12 5 x 5 9.06 -> 6.20, 16x256x14x14 7 x 7 13.53 -> 9.83, 1x1024x28x28 5 x 5
    9.13 -> 7.80."""
    unsplit = dataclasses.replace(split, block_r=0)
    enough = grid_blocks(params, unsplit) >= SPLIT_WALK_MAX_SM_SHARE * sm_count
    return unsplit if enough and _is_valid(params, unsplit) else split


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
    groups by TMA (wgrad_tma_tile.tma_tile) on an H200: 8.96, 8.63 and 8.64 us
    (1.43-1.81x). Held out (six layers the rule was not written from, the same tool and
    day, the launcher's default
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


#: Share of the pass's compulsory bytes above which the partial sums call for walking two
#: steps of images even on a grid under MIN_WARPS_PER_SM warps per SM (_heavy_partials_walked),
#: where the walked grid keeps more than HEAVY_PARTIALS_MIN_BLOCKS_PER_SM blocks per SM.
HEAVY_PARTIALS_SHARE = 0.25
HEAVY_PARTIALS_MIN_BLOCKS_PER_SM = 2


def _heavy_partials_walked(
    params: Conv2dGw8Params, config: WgradConfig, sm_count: int
) -> WgradConfig:
    """config walking two steps of images where its partial sums exceed HEAVY_PARTIALS_SHARE
    of the pass's bytes and the walked grid still holds more than
    HEAVY_PARTIALS_MIN_BLOCKS_PER_SM blocks per SM (and is valid); else config.

    Narrow images (7 x 7 to 10 x 10) write partial sums of a third of the pass's bytes; their
    tiles' unwalked grids of more than a wave went to segments (wgrad.balanced_config_on),
    which a walk of two steps beat. H200 (2026-11-30, tools/wgrad_variants_check.py
    --variants walk_n=2, alternating in one process; launched -> walked, walked blocks):
    128x768x7x7 11.97 -> 9.53 us (384), 128x672x7x7 11.21 -> 9.48 (336), 96x768x8x8 10.88
    -> 9.44 (288), 256x160x10x10 15.95 -> 10.92 (320), 192x384x7x7 9.87 -> 9.61 (288).
    Walked grids of 2 blocks per SM or fewer lost: 128x512x7x7 7.36 -> 8.28 (256),
    96x672x7x7 7.49 -> 8.06 (252), 64x128x10x10 5.01 -> 7.04 (256); so did those whose
    partials stay under a quarter of the bytes (128x192x20x20 0.906x, 96x512x12x12 0.988x).
    Held out (the same tool and day, unwalked -> walked): 256x320x4x4 8.74 -> 6.62 us,
    128x768x4x4 7.94 -> 6.51, 96x768x4x4 5 x 5 14.31 -> 8.86, 256x384x8x8 12.16 -> 9.93,
    512x160x7x7 11.10 -> 10.03, 256x192x10x10 1.028x; 128x320x10x10 lost (0.947x).
    """
    if config.walk_n != 1 or _partials_share(params, config) <= HEAVY_PARTIALS_SHARE:
        return config
    walked = dataclasses.replace(config, walk_n=2)
    if (
        _images_fit(params, walked.images)
        and _is_valid(params, walked)
        and grid_blocks(params, walked) > HEAVY_PARTIALS_MIN_BLOCKS_PER_SM * sm_count
    ):
        return walked
    return config


def syncs_on_chunks_cut_evenly(params: Conv2dGw8Params, config: WgradConfig) -> bool:
    """Whether config is a full-line tile of a layer off the full line (_off_the_full_line)
    that syncs its images on row chunks only the launcher's even cut makes whole (block_p not
    dividing the rows: _with_image_sync's cut_evenly). (TMA tiles sync on a short last chunk
    by a rule of their own, wgrad_tma_tile.)"""
    uneven = config.block_p < params.p and params.p % config.block_p != 0
    synced = config.image_sync and not config.tma
    return synced and uneven and _off_the_full_line(params)


def walks_heavy_partials(params: Conv2dGw8Params, config: WgradConfig) -> bool:
    """Whether config walks steps of images over partial sums that one step would make
    more than HEAVY_PARTIALS_SHARE of the pass's bytes (_heavy_partials_walked's walks, and
    _walked's on such layers)."""
    unwalked = dataclasses.replace(config, walk_n=1)
    return config.walk_n > 1 and _partials_share(params, unwalked) > HEAVY_PARTIALS_SHARE


def _partials_call_for_walking(params: Conv2dGw8Params, config: WgradConfig) -> bool:
    """Whether config's partial sums exceed WALK_PARTIALS_SHARE of the pass's bytes."""
    return _partials_share(params, config) > WALK_PARTIALS_SHARE


def _partials_share(params: Conv2dGw8Params, config: WgradConfig) -> float:
    """config's partial sums (its workspace) as a share of the pass's compulsory bytes."""
    return workspace_bytes(params, config) / params.compulsory_bytes("wgrad")


def _with_image_sync(
    params: Conv2dGw8Params, config: WgradConfig, cut_evenly: bool = False
) -> WgradConfig:
    """config with image_sync where it has several images side by side, one to a warp row
    (paired tiles keep the block's barrier: their sweeps' fastest configs mostly do), and its
    row chunks cover the output rows exactly, or one chunk covers them and it walks one step.
    Where cut_evenly (the full-line tiles of layers whose groups are not a multiple of 8,
    _tile_config), the chunks are counted as the launcher cuts them (even_chunks.even_rows:
    112 rows in chunks of 64 walk two of 56), which pays there alone (_full_line_tiles).

    From alternating H200 runs. Whole row chunks gained: 32x64x64x64 15.0 -> 13.2 us,
    64x128x32x32 15.0 -> 13.4, 64x1024x16x16 26.3 -> 25.8, 128x1024x16x16 44.3 -> 43.2;
    with the tile (16, 4, 1, 16, 1, 4) at N = 128: 64x64 58.8 -> 53.3 us, 64 x 56 (columns
    overhanging) 56.6 -> 50.9, 64 x 60 57.8 -> 52.2. A last row chunk shorter than block_p
    lost, for a reason not yet found: 56 x 64 58.7 -> 65.2, 60 x 64 59.6 -> 66.1, 56 x 56
    55.5 -> 64.0; 512x256x14x14 (the heuristic's two images walked four steps) 39 -> 54.
    One short chunk per image, not walked, gained (FULL_LINE_TILE, in one process):
    128x64x56x56 35.5 -> 34.5 us, 128x256x14x14 12.3 -> 11.8, 512x256x14x14 47.3 -> 45.4.
    """
    rows = config.block_p
    if cut_evenly and rows < params.p:
        rows = even_rows(params.p, rows)
    whole_chunks = params.p % rows == 0
    one_chunk = config.block_p >= params.p and config.walk_n == 1
    if config.warp_images == 1 and config.block_n > 1 and (whole_chunks or one_chunk):
        return dataclasses.replace(config, image_sync=True)
    return config


# The tile on a GPU with TMA, from its own module, which builds on the helpers above (so it
# is imported once they exist): wgrad_heuristic.tma_tile stays the heuristic's entry for it.
from .wgrad_tma_tile import tma_tile as tma_tile  # noqa: E402
