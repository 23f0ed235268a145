"""fprop of grouped conv2d gw8: configuration, its space, launch geometry and typed dims.

A block owns `block_q` output columns x `block_g` groups (8 channels each) of one image and
walks `block_p` output rows down it. Its input rows sit in a ring of `ring` rows of shared
memory (one in use, `prefetch` rows loading ahead, one being retired), each row
(block_q + S - 1) 16-byte cells per group. A warp owns `warp_q16` tiles of 16 columns x
`warp_g` groups: per input row and group of `mma_k / 8` filter columns it loads an A fragment
(16 pixels x 8 input channels per filter column; one column per m16n8k8, two per m16n8k16)
with ldmatrix once and multiplies it by each filter row's weights for those columns
(registers) into the R output rows it feeds (R accumulator bands). With `block_q` = 8
(images at most 8 wide) a block owns 8 columns of each of two images side by side: each
16-pixel A fragment is 8 columns of the same row of both, so that no fragment is half zeros;
with `block_q` = 4, 4 columns of each of four images.

With `segments` (a placement field: the launcher sets it, config spaces and latency models do
not vary it) a block walks instead one of that many equal segments of its column strip's
output rows of every image, taken as one stream (row y of image n at n * p + y), in parts, one
per image it crosses: a grid of exactly the blocks that fit on the GPU at once then gives every
SM the same rows to walk, whatever the batch (stream_config).
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import ClassVar

from spio.dims import (
    CompoundIndex,
    Dims,
    Fold,
    Fragment,
    Spec,
    Tensor,
    dtype,
    generate,
)

from ._tiling import (
    NARROW_BLOCK_Q,
    LaunchGeometry,
    ceil_div,
    check_groups_and_smem,
    check_positive_fields,
    constants_block,
    first_filling,
    fits,
    fragment_images,
    images_per_fragment,
    next_power_of_two,
)
from .params import GROUP_WIDTH, Conv2dGw8Params, check_params, check_sm_count

KERNEL_NAME = "conv2d_gw8_fprop"
DGRAD_KERNEL_NAME = "conv2d_gw8_dgrad"
WARP_SIZE = 32
#: Fragment columns: one m16n8k8 A fragment covers 16 output columns.
TILE_Q = 16
MAX_WARPS = 16
#: Weight registers per thread (warp_g * R * S) the config space allows.
MAX_WEIGHT_REGISTERS = 64
#: f32 accumulator registers per thread (R bands * warp_g * warp_q16 * 4) the space allows.
MAX_ACC_REGISTERS = 64

BLOCK_Q_VALUES = (16, 32, 64, *NARROW_BLOCK_Q)
BLOCK_G_VALUES = (1, 2, 4, 8)
WARP_G_VALUES = (1, 2)
WARP_Q16_VALUES = (1, 2, 4)
BLOCK_P_VALUES = (4, 8, 16, 32)
#: Rows loading ahead. 6 (a ring of 8 rows) is for short walks of small rows: on an H200 it
#: ran layers of 14 x 14 and 16 x 16 images 10-13% faster than 2 with the same tiles
#: (256x256x16x16 fprop 21.9 -> 19.8 us), where 4 and 8 gained less (ring rows of 6 and 10)
#: and large images lost (128x64x56x56 33.2 -> 35.3 us).
PREFETCH_VALUES = (1, 2, 6)
MMA_K_VALUES = (8, 16)

_CELL_BYTES = 16


@dataclass(frozen=True)
class FpropConfig:
    """Tiling of the fprop kernel; see the module doc for what each field means.

    block_q: output columns per block (a multiple of 16 * warp_q16; or 8 or 4,
    NARROW_BLOCK_Q, with warp_q16 = 1: that many columns of each of 16 / block_q images);
    block_g: groups per block (block_c = 8 * block_g channels; divides the groups);
    warp_g: groups per warp (divides block_g); warp_q16: 16-column tiles per warp;
    block_p: output rows a block walks; prefetch: input rows loading ahead of use;
    mma_k: the K of the tensor-core instruction, 8 (m16n8k8, one filter column per mma) or
    16 (m16n8k16, two neighbouring filter columns per mma: half the instructions; with odd S
    the last mma's second column has zero weights); segments (keyword only): 0 walks chunks
    of block_p rows of one image, S >= 1 cuts each column strip and group slice's output rows
    of every image into S equal segments, one a block (block_p then plays no part; not with
    images side by side).
    """

    #: Fields no config space varies: the launcher sets them on a config for the GPU it runs
    #: on (stream_config, fprop.default_config_on), so latency models neither see nor
    #: choose them.
    PLACEMENT_FIELDS: ClassVar[tuple[str, ...]] = ("segments",)

    block_q: int = 32
    block_g: int = 8
    warp_g: int = 2
    warp_q16: int = 1
    block_p: int = 16
    prefetch: int = 2
    mma_k: int = 8
    segments: int = dataclasses.field(default=0, kw_only=True)

    def __post_init__(self) -> None:
        check_positive_fields(
            self, ("block_q", "block_g", "warp_g", "warp_q16", "block_p", "prefetch", "mma_k")
        )
        if not isinstance(self.segments, int) or isinstance(self.segments, bool):
            raise TypeError(f"segments must be an int, got {self.segments!r}")
        if self.segments < 0:
            raise ValueError(f"segments must be >= 0 (0: row chunks), got {self.segments}")
        if self.segments and self.block_q < TILE_Q:
            raise ValueError(
                f"segments = {self.segments} walks one image at a time, so block_q must be at "
                f"least {TILE_Q} (not images side by side), got {self.block_q}"
            )
        if self.mma_k not in MMA_K_VALUES:
            raise ValueError(f"mma_k must be one of {MMA_K_VALUES}, got {self.mma_k}")
        narrow = self.block_q in NARROW_BLOCK_Q and self.warp_q16 == 1
        if not narrow and self.block_q % (TILE_Q * self.warp_q16) != 0:
            raise ValueError(
                f"block_q must be a multiple of 16 * warp_q16 = {TILE_Q * self.warp_q16} "
                f"(or one of {NARROW_BLOCK_Q} with warp_q16 = 1), got {self.block_q}"
            )
        if self.block_g % self.warp_g != 0:
            raise ValueError(
                f"block_g must be a multiple of warp_g = {self.warp_g}, got {self.block_g}"
            )
        if self.warps > MAX_WARPS:
            raise ValueError(
                f"warps = (block_q / (16 * warp_q16)) * (block_g / warp_g) = {self.warps} "
                f"must be at most {MAX_WARPS}"
            )

    @property
    def block_c(self) -> int:
        """Channels per block."""
        return GROUP_WIDTH * self.block_g

    @property
    def warp_images(self) -> int:
        """Images a block's columns (and each A fragment) span (_tiling.fragment_images)."""
        return fragment_images(self.block_q)

    @property
    def warps_q(self) -> int:
        return self.block_q * self.warp_images // (TILE_Q * self.warp_q16)

    @property
    def warps_g(self) -> int:
        return self.block_g // self.warp_g

    @property
    def warps(self) -> int:
        return self.warps_q * self.warps_g

    @property
    def threads(self) -> int:
        return WARP_SIZE * self.warps

    @property
    def warp_q(self) -> int:
        """Output columns per warp."""
        return TILE_Q * self.warp_q16

    @property
    def taps_per_mma(self) -> int:
        """Filter columns one tensor-core instruction covers."""
        return self.mma_k // GROUP_WIDTH


def tap_groups(params: Conv2dGw8Params, config: FpropConfig) -> int:
    """mma instructions per filter row and group: the S columns, taps_per_mma at a time."""
    return ceil_div(params.s, config.taps_per_mma)


def weight_registers(params: Conv2dGw8Params, config: FpropConfig) -> int:
    """32-bit registers of a warp's weights per thread: one per 8 x 8 block of each tap
    (the zero half of an odd S's last m16n8k16 included)."""
    return config.warp_g * params.r * tap_groups(params, config) * config.taps_per_mma


def ring_rows(params: Conv2dGw8Params, config: FpropConfig) -> int:
    """Input rows in the shared-memory ring: the one in use, prefetch loading, one retiring.

    Each input row is read in one iteration only (its A fragments feed all R output rows
    that need it). The retiring row lets one __syncthreads per row suffice: the row a load
    overwrites was last read two iterations earlier, before every thread passed the last
    barrier.
    """
    return config.prefetch + 2


def smem_columns(params: Conv2dGw8Params, config: FpropConfig) -> int:
    """Input columns a block stages per row: its output columns plus the S - 1 halo."""
    return config.block_q + params.s - 1


def weight_cells(params: Conv2dGw8Params, config: FpropConfig) -> int:
    """16-byte cells of the block's weights in shared memory: block_g x 8 x R x S."""
    return config.block_g * GROUP_WIDTH * params.r * params.s


#: Output rows staged in shared memory at once: one filled while the previous one is stored.
STAGE_ROWS = 2


def shared_mem_bytes(params: Conv2dGw8Params, config: FpropConfig) -> int:
    """Dynamic shared memory of one block: the input ring (pixel-major rows, see
    conv2d_gw8_ring.cuh), the output row staging (STAGE_ROWS rows of the block's tile, laid
    out as the ring rows) and the block's weights (staged once with 16-byte cp.async, then
    ldmatrix'ed into registers)."""
    ring = ring_rows(params, config) * config.block_g * smem_columns(params, config)
    stage = STAGE_ROWS * config.block_q * config.block_g
    images = config.warp_images
    return _CELL_BYTES * (images * (ring + stage) + weight_cells(params, config))


def column_strips(params: Conv2dGw8Params, config: FpropConfig) -> int:
    """The walks' columns: column strips x group slices."""
    return ceil_div(params.q, config.block_q) * (params.groups // config.block_g)


def grid_blocks(params: Conv2dGw8Params, config: FpropConfig) -> int:
    """Blocks in the grid: images (groups of warp_images of them with block_q below 16) x
    row chunks x column strips x group slices; with segments, segments x column strips x
    group slices."""
    if config.segments:
        return config.segments * column_strips(params, config)
    return (
        ceil_div(params.n, config.warp_images)
        * ceil_div(params.p, config.block_p)
        * column_strips(params, config)
    )


def stream_config(params: Conv2dGw8Params, config: FpropConfig, slots: int) -> FpropConfig:
    """config's tile walking segments: the `slots` blocks that fit on the GPU at once shared
    among its column strips and group slices (at least one each, at most one per output row
    of a strip's stream, n * p), so that every SM walks the same share of rows."""
    if isinstance(slots, bool) or not isinstance(slots, int) or slots < 1:
        raise ValueError(f"slots must be an int >= 1 (blocks that fit on the GPU), got {slots!r}")
    segments = min(params.n * params.p, max(1, slots // column_strips(params, config)))
    return dataclasses.replace(config, segments=segments)


def launch_geometry(params: Conv2dGw8Params, config: FpropConfig) -> LaunchGeometry:
    """Return the launch geometry of `config` on `params`; check_config's errors where config
    cannot run params."""
    check_config(params, config)
    return LaunchGeometry(
        grid_blocks(params, config), config.threads, shared_mem_bytes(params, config)
    )


def check_config(params: Conv2dGw8Params, config: FpropConfig) -> None:
    """Raise ValueError when config cannot run params (it names the failing rule)."""
    check_params(params)
    if not isinstance(config, FpropConfig):
        raise TypeError(f"config must be an FpropConfig, got {type(config).__name__}")
    if config.segments > params.n * params.p:
        raise ValueError(
            f"segments = {config.segments} must be at most the output rows of a column strip's "
            f"stream (n * p = {params.n * params.p})"
        )
    registers = weight_registers(params, config)
    if registers > MAX_WEIGHT_REGISTERS:
        raise ValueError(
            f"warp_g * r * ceil(s / taps_per_mma) * taps_per_mma = {registers} weight "
            f"registers exceed {MAX_WEIGHT_REGISTERS}; lower warp_g or mma_k"
        )
    acc_registers = 4 * params.r * config.warp_g * config.warp_q16
    if acc_registers > MAX_ACC_REGISTERS:
        raise ValueError(
            f"4 * r * warp_g * warp_q16 = {acc_registers} accumulator registers exceed "
            f"{MAX_ACC_REGISTERS}; lower warp_g or warp_q16"
        )
    check_groups_and_smem(params, config.block_g, shared_mem_bytes(params, config))


def _is_valid(params: Conv2dGw8Params, config: FpropConfig) -> bool:
    return fits(check_config, params, config)


def config_space(params: Conv2dGw8Params) -> list[FpropConfig]:
    """Return every valid config for params, in a fixed order.

    Tiles larger than the image are left out (block_q up to the next power of two >= q,
    block_p up to the next power of two >= p; NARROW_BLOCK_Q only for images at most that
    wide, more than half a block's images of them), as are configs check_config refuses.
    """
    check_params(params)
    configs = []
    for block_q, block_g, warp_g, warp_q16, block_p, prefetch, mma_k in itertools.product(
        BLOCK_Q_VALUES,
        BLOCK_G_VALUES,
        WARP_G_VALUES,
        WARP_Q16_VALUES,
        BLOCK_P_VALUES,
        PREFETCH_VALUES,
        MMA_K_VALUES,
    ):
        if block_q > max(TILE_Q, next_power_of_two(params.q)):
            continue
        images = fragment_images(block_q)
        narrow = block_q < TILE_Q
        if narrow and (params.q > block_q or 2 * params.n <= images or warp_q16 != 1):
            continue
        if block_p > max(BLOCK_P_VALUES[0], next_power_of_two(params.p)):
            continue
        if block_g % warp_g or (not narrow and block_q % (TILE_Q * warp_q16)):
            continue
        if (block_q * images // (TILE_Q * warp_q16)) * (block_g // warp_g) > MAX_WARPS:
            continue
        config = FpropConfig(block_q, block_g, warp_g, warp_q16, block_p, prefetch, mma_k)
        if _is_valid(params, config):
            configs.append(config)
    return configs


#: The heuristic's tiles, most work per block first: (block_q, block_g, warp_g, warp_q16,
#: block_p, prefetch). Every tile covers whole 128-byte pixel lines where the groups allow
#: (block_g 8: each warp's copies and stores are 4-sector L2 requests); 32 x 32 tiles stream
#: the most rows per block, smaller ones make more blocks for small layers. From H200 sweeps
#: of the whole space (fprop, 3 x 3, fp16): the first tile is the best at 128x64x64x64
#: (39.5 us), the fifth at 8x64x56x56 (6.9 us). With one-wave grids spread over every SM
#: (spio.jit.spread_shared_mem), the third is within 1% (fprop) and 2% (dgrad) of the best
#: at 32x64x64x64 (10.0 and 9.8 us); a half-line tile (32, 4, 1, 2, 16, 1), the best there
#: before spreading, is 2-8% slower now at 32x64x64x64, 64x128x32x32 and 48x64x64x64 (1%
#: faster at 32x64x56x56), so it left the ladder.
TILE_LADDER: tuple[tuple[int, int, int, int, int, int], ...] = (
    (32, 8, 2, 2, 32, 2),
    (32, 8, 2, 2, 16, 2),
    (16, 8, 2, 1, 16, 1),
    (16, 8, 2, 1, 8, 1),
    (16, 8, 1, 1, 8, 1),
    (16, 8, 2, 1, 4, 1),
    (16, 8, 1, 1, 4, 1),
)

#: Resident warps per SM a grid should fill before a larger tile is preferred: below it the
#: schedulers lack independent warps to hide the copies' and the mma's latency.
MIN_WARPS_PER_SM = 13
#: The warps per SM enough for a tile whose warps each walk at least LONG_WALK_GROUP_ROWS
#: rows of groups (block_p x warp_g): each such warp has two groups' loads and products in
#: flight at once, or a walk long enough that its ring's fill and drain are a small part of
#: it, so fewer warps hide the latency, and the larger tile reads fewer halo rows again.
#: H200 (2026-11-30, tools/min_warps_check.py, each tile placed as the launcher places it,
#: alternating in one process; the launcher's default at 13 warps -> at 10, fprop and
#: dgrad), where the larger tile holds 11.6-12.1 warps an SM: 16-row chunks instead of 8
#: 1.02-1.40x (48x512x16x16 10.27 -> 7.42 us, 96x256x16x16 1.28x, 24x64x64x64 1.25x,
#: 8x64x112x112 1.19x, 96x64x28x28 1.13-1.14x, 24x64x56x56 1.09-1.10x, 16x64x80x80
#: 1.02-1.04x), but 0.98x at 24x256x20x20 (10-row chunks instead of 7); two groups a warp
#: instead of one (64x64x24x24 1.07x, 96x512x8x8 1.13x); 32 columns instead of 16
#: (48x64x64x64 1.12-1.13x); 32-row chunks instead of 16 (96x64x56x56 1.04-1.05x;
#: 48x64x56x56 5 x 5, which the launcher walked in segments, 0.965x); 7 x 7 16-row chunks
#: 1.09x (48x64x28x28) and 1.00x (16x128x40x40). Tiles of shorter walks lost at 10 warps:
#: one group a warp and 8-row chunks instead of 4 (32x64x24x24 0.95-0.96x, 48x512x8x8 0.89x)
#: and the ladder's 4-row tile instead of SMALL_GRID_TILE (48x64x16x16 0.96-0.97x,
#: 48x256x8x8 3 x 3 0.93-0.96x and 5 x 5 0.86-0.87x, 48x1024x4x4 0.93-0.94x), so they keep
#: MIN_WARPS_PER_SM. Under 10 warps the larger tiles lost too (8x256x36x36, 8.7 warps an SM:
#: 16-row chunks 0.78x). Held out (17 layers the rule was not written from, the same tool
#: and day, the rule before -> this one): 1.088x in geometric mean over 32 layer-passes,
#: 0.956-1.298x, 21 faster and 6 slower (24x1024x16x16 9.41 -> 7.34 us, 2x256x112x112 1.24x,
#: 64x96x28x28 1.18x, 48x64x28x28 1 x 1 1.13x, 96x128x32x32 1 x 1 1.09x; 24x64x40x40
#: 0.956-0.968x, 24x64x64x64 5 x 5 0.98x).
LONG_WALK_MIN_WARPS_PER_SM = 10
#: The rows of groups a warp walks (block_p x warp_g) from which LONG_WALK_MIN_WARPS_PER_SM
#: applies.
LONG_WALK_GROUP_ROWS = 16

#: The tile for layers too small for the ladder to fill the GPU (its grid under
#: MIN_WARPS_PER_SM warps per SM) and no larger than SMALL_GRID_MAX_PIXELS: two groups per
#: block, one per warp, 4-row walks, two rows ahead. The ladder's smallest tile keeps eight
#: groups per block and one row ahead; this one spreads a small layer over more, smaller
#: blocks with more rows in flight. Against the previous rule (the ladder's tile with the
#: most warps), in the campaigns' data (layers whose sampled configs hold both): fprop
#: 1.05-1.35x on 12 layers, dgrad 1.04-1.40x on 18 (H200 and H100), none slower; the shipped
#: models predict 1.16-1.20x (geometric means) over the 106 of 425 campaign layers it changes,
#: none of them 4% slower.
SMALL_GRID_TILE = (16, 2, 1, 1, 4, 2)
#: The largest images (output pixels) SMALL_GRID_TILE is for, as wgrad's. The models predict
#: the same gains up to 56 x 56 (three more campaign layers); above it, the rule would change
#: three more, one of them predicted slower (H100).
SMALL_GRID_MAX_PIXELS = 32 * 32


#: The shortest walk (output rows per block) balancing the waves may halve a tile's down to:
#: below it the R - 1 halo rows each block reads again cost more than an uneven wave. It
#: bounds the rows every block of an image walks, the last one's included: halving a whole
#: 14-row image's walk gave blocks of 8 and 6 rows, 1.076x slower in fprop and dgrad at
#: 512x256x14x14 on an H100 (41.67 against 38.72 us, one sweep of every config), 1.33-1.39x
#: slower at 512x1024x14x14 7 x 7 (H100 and H200 campaigns), where the models predict the
#: halved walk slower on 23 of the 24 layer-passes of both GPUs whose walk this bound keeps
#: (14 x 14 and 28 x 28 images; 0.98-1.49x).
MIN_BALANCED_ROWS = 8


def shorter_walk(params: Conv2dGw8Params, config: FpropConfig) -> FpropConfig | None:
    """Return config walking half as many output rows per block, or None where a block of
    an image would then walk fewer than MIN_BALANCED_ROWS rows (the last one, where the
    halved walk does not divide the image's rows) or the config no longer fits (for
    _tiling.balance_waves)."""
    half = config.block_p // 2
    if half < MIN_BALANCED_ROWS:
        return None
    last_rows = params.p - (ceil_div(params.p, half) - 1) * half
    if last_rows < MIN_BALANCED_ROWS:
        return None
    shorter = dataclasses.replace(config, block_p=half)
    return shorter if _is_valid(params, shorter) else None


def _total_warps(params: Conv2dGw8Params, config: FpropConfig) -> int:
    return grid_blocks(params, config) * config.warps


def _min_warps(config: FpropConfig, sm_count: int) -> int:
    """The warps a grid of config's tile should hold on sm_count SMs before the heuristic
    takes it over a smaller tile: LONG_WALK_MIN_WARPS_PER_SM an SM for warps that walk
    LONG_WALK_GROUP_ROWS rows of groups or more, else MIN_WARPS_PER_SM."""
    long_walk = config.block_p * config.warp_g >= LONG_WALK_GROUP_ROWS
    return (LONG_WALK_MIN_WARPS_PER_SM if long_walk else MIN_WARPS_PER_SM) * sm_count


# Images side by side (_tiling.images_per_fragment), from H200 and H100 sweeps of every
# config (best against best with one image per fragment, H200, fprop; dgrad alike): two
# images, 256x1024x8x8 23.6 against 36.9 us, 512x256x7x7 9.2 against 16.3, 128x256x8x8
# 5 x 5 6.3 against 11.2, 256x512x7x7 7 x 7 35.0 against 66.0, small layers (8x256x8x8,
# 16x128x7x7) within 2% either way; four images, 512x512x4x4 8.3 against 13.8 (two) and 24.5.


def strip_columns(q: int, block_q: int) -> int:
    """block_q, or TILE_Q where strips of TILE_Q columns cover an image q columns wide with
    fewer columns past its edge. 32-column strips of images 40, 48, 72, 80 or 112 wide (q %
    32 in 1..16) end in a strip of 8 to 24 columns past the edge, which its warps load and
    multiply all the same: a quarter of the work at 48 columns, where 16-column strips have
    none.

    From an H200 run (2026-11-29, tools/strip_width_check.py: the launcher's default against
    the 32-column tile it ran before, each placed as the launcher places it, alternating in
    one process). On the four layers the rule came from (128x64x48x48, 64x128x48x48,
    128x64x40x40, 32x256x48x48; fprop and dgrad), 1.206-1.250x: 128x64x48x48 fprop 27.82 ->
    22.25 us. Held out, on 9 layers of images 40 to 112 wide with 3 x 3, 5 x 5 and 7 x 7
    filters, 1.121x in geometric mean over 18 layer-passes, 0.966-1.280x: 128x64x48x48 5 x 5
    1.27x, 256x64x40x40 1.21x, 64x64x80x80 1.10x, 32x64x112x112 1.08-1.10x, 64x32x112x112
    1.04x; 100x96x48x48 (four groups a block) 0.994x and 0.966x.
    """
    if block_q > TILE_Q and ceil_div(q, TILE_Q) * TILE_Q < ceil_div(q, block_q) * block_q:
        return TILE_Q
    return block_q


def _fit_tile(params: Conv2dGw8Params, fields: tuple[int, ...], mma_k: int) -> FpropConfig | None:
    """Return the ladder tile `fields` shrunk to params (columns and rows no larger than the
    image, in strips as strip_columns says, or 16 / images columns of each of
    `images_per_fragment` images; groups that divide the layer's, one group per warp where
    two need too many weight registers), or None where it still does not fit."""
    block_q, block_g, warp_g, warp_q16, block_p, prefetch = fields
    images = images_per_fragment(params)
    if images > 1:
        block_q, warp_q16 = TILE_Q // images, 1
    else:
        block_q = strip_columns(params.q, min(block_q, max(TILE_Q, next_power_of_two(params.q))))
        warp_q16 = min(warp_q16, block_q // TILE_Q)
    block_p = min(block_p, max(BLOCK_P_VALUES[0], next_power_of_two(params.p)))
    while params.groups % block_g:
        block_g //= 2
    for groups_per_warp in dict.fromkeys((min(warp_g, block_g), 1)):
        config = _buildable((block_q, block_g, groups_per_warp, warp_q16, block_p, prefetch, mma_k))
        if config is not None and _is_valid(params, config):
            return config
    return None


def default_config(params: Conv2dGw8Params, sm_count: int = 132) -> FpropConfig:
    """Pick a config by rule of thumb (the perf model replaces this later).

    The first tile of TILE_LADDER (fitted to params) whose grid holds the warps its walk
    asks (_min_warps: MIN_WARPS_PER_SM per SM, LONG_WALK_MIN_WARPS_PER_SM for warps of long
    walks); where none does, the one with the most warps, or for images up to
    SMALL_GRID_MAX_PIXELS, SMALL_GRID_TILE (fitted) where its grid holds as many warps or
    more. Large layers stream long walks of whole-line tiles; small ones (working set in
    L2) are latency-bound and want many independent warps. m16n8k16 (two filter columns per
    instruction), except for S = 1, where its second column would be all zero weights. On
    layers whose groups are not a multiple of 8, blocks of whole pixels or runs of them
    (fprop_pixel_groups).
    """
    check_params(params)
    check_sm_count(sm_count)
    # The rule lives outside the sources digest, and imports this module.
    from .fprop_pixel_groups import pixel_groups_tile

    mma_k = 8 if params.s == 1 else 16
    candidates = [
        config
        for config in dict.fromkeys(_fit_tile(params, fields, mma_k) for fields in TILE_LADDER)
        if config is not None
    ]
    if not candidates:
        space = config_space(params)
        if not space:
            raise ValueError(f"no fprop config fits {params}")
        return space[0]

    def min_warps(config: FpropConfig) -> int:
        return _min_warps(config, sm_count)

    config = first_filling(candidates, lambda config: _total_warps(params, config), min_warps)
    filled = _total_warps(params, config) >= min_warps(config)
    if not filled and params.p * params.q <= SMALL_GRID_MAX_PIXELS:
        small = _fit_tile(params, SMALL_GRID_TILE, mma_k)
        if small is not None and _total_warps(params, small) >= _total_warps(params, config):
            config = small
    return pixel_groups_tile(params, _deeper_ring(params, config), sm_count)


#: The deeper ring the heuristic gives narrow tiles (block_q at most 16) that load two rows
#: ahead and walk at least DEEP_RING_MIN_WALK input rows. In the fourteenth session's
#: campaigns (the heuristic's tile timed at prefetch 1, 2 and 6 on 31-38 layers per pass and
#: GPU), 2.6-3.9% faster in geometric mean for every such tile, up to 1.23x (512x1024x14x14
#: 7 x 7), but as much as 8% slower on some; this narrower rule gains 1.5-1.8% and at worst
#: loses 2.1%, where it changes the tile at all (fprop and dgrad, H200 and H100). On 14 layers
#: it changes that no campaign timed but one (H200, the default against the same tile two
#: rows ahead, alternating in one process): 1.064x (fprop) and 1.062x (dgrad) in geometric
#: mean, from 0.91x (32x256x8x8 5 x 5) to 1.32x (512x256x8x8 7 x 7). The one-row-ahead tiles
#: of the ladder (small grids, chosen for many warps) keep their ring.
DEEP_PREFETCH = 6
DEEP_RING_MIN_WALK = 8

#: The filters, by rows, whose walks leave out the checks of the rows in their steady groups
#: (CONV2D_GW8_STEADY_WALK; see the kernel source): the groups of R input rows between the
#: walk's first group and its last ones, where every filter row feeds an output row and one
#: output row starts and one completes at each input row. From H200 runs (2026-12-01,
#: tools/fprop_source_check.py: the launcher's configs compiled with and without, alternating
#: in one process; the same output bits): 7 x 7 layers 1.21-1.44x faster (32x128x16x16 8.16
#: -> 5.84 us), 5 x 5 1.01-1.13x, on 15 layers per pass. On 3 x 3 the same walk moved the
#: kernels' registers by -25 to +36 a thread and the layers ran 0.94-1.19x, the target
#: 128x64x64x64 0.94x (128 -> 164 registers: three blocks an SM instead of four; 0.98x with
#: the registers capped at 128, which spilled 5 x 5 tiles), so 3 x 3 and 1 x 1 walks keep
#: every check and compile as before.
STEADY_WALK_MIN_ROWS = 5


def _deeper_ring(params: Conv2dGw8Params, config: FpropConfig) -> FpropConfig:
    """config with DEEP_PREFETCH rows ahead where the rule above gives it and it fits."""
    walk = min(config.block_p, params.p) + params.r - 1
    if config.block_q > TILE_Q or config.prefetch != 2 or walk < DEEP_RING_MIN_WALK:
        return config
    deeper = dataclasses.replace(config, prefetch=DEEP_PREFETCH)
    return deeper if _is_valid(params, deeper) else config


def _buildable(fields: tuple[int, ...]) -> FpropConfig | None:
    """Return the config of these fields, or None where they break a config rule."""
    try:
        return FpropConfig(*fields)
    except ValueError:
        return None


def _specs(params: Conv2dGw8Params, config: FpropConfig, dgrad: bool) -> list[Spec]:
    element = dtype.half if params.dtype == "float16" else dtype.bfloat16
    shape = f"m16n8k{config.mma_k}"
    groups = params.groups
    columns = smem_columns(params, config)
    # A 16-byte weight row holds 8 input channels (fprop), or 8 output channels for dgrad,
    # whose weights are the layer's with this kernel's input and output channels swapped.
    row, within = ("c", "k") if dgrad else ("k", "c")
    weight_dims = {"g": groups, row: 8, "r": params.r, "s": params.s, within: 8}
    block_weight_dims = {**weight_dims, "g": config.block_g}
    side_by_side = config.warp_images
    # With images side by side the block index counts groups of them, and the block's rings,
    # staging rows and copies have an image dimension.
    images = {"n": side_by_side} if side_by_side > 1 else {}
    block_images = (
        {"block_n": ceil_div(params.n, side_by_side)} if side_by_side > 1 else {"n": params.n}
    )
    # With segments the block index's N is the block's segment, and a part of its walk at
    # most every output row of an image.
    if config.segments:
        block_images = {"n": config.segments}
    block_p = params.p if config.segments else config.block_p
    return [
        # Block and warp tiles: folds of the output's rows (Y), columns (X) and groups (G).
        *([Fold("block_n", "n", side_by_side)] if side_by_side > 1 else []),
        Fold("block_y", "y", block_p),
        Fold("block_x", "x", config.block_q),
        Fold("block_g", "g", config.block_g),
        Fold("warp_x", "x", config.warp_q),
        Fold("warp_g", "g", config.warp_g),
        CompoundIndex(
            "BlockIndex",
            Dims(
                **block_images,
                block_y=ceil_div(params.p, block_p),
                block_x=ceil_div(params.q, config.block_q),
                block_g=groups // config.block_g,
            ),
            init="blockIdx.x",
        ),
        CompoundIndex(
            "ThreadIndex",
            Dims(warp_x=config.warps_q, warp_g=config.warps_g, lane=WARP_SIZE),
            init="threadIdx.x",
        ),
        # Global memory: NHWC activations, weights G x K x R x S x C (= K x R x S x 8; for
        # dgrad the same memory read as G x C x R x S x K).
        Tensor(
            "Input", element, Dims(n=params.n, y=params.h, x=params.w, g=groups, c=8), constant=True
        ),
        Tensor("Output", element, Dims(n=params.n, y=params.p, x=params.q, g=groups, k=8)),
        Tensor("Weights", element, Dims(**weight_dims), constant=True),
        Tensor("Bias", dtype.float, Dims(g=groups, k=8), constant=True),
        # Shared memory: the ring of input rows, 16-byte cells (one group of one pixel),
        # pixel-major with the groups swizzled into slots (conv2d_gw8_ring.cuh); the block's
        # output rows, staged in the same layout so that its stores cover whole pixel lines.
        Tensor(
            "SmemInput",
            element,
            Dims(ring=ring_rows(params, config), **images, x=columns, slot=config.block_g, c=8),
        ),
        Tensor(
            "SmemOutput",
            element,
            Dims(buf=STAGE_ROWS, **images, x=config.block_q, slot=config.block_g, k=8),
        ),
        # The block's weights, same layout as global (16-byte rows, R * S cells apart):
        # one ldmatrix per B fragment.
        Tensor("SmemWeights", element, Dims(**block_weight_dims)),
        CompoundIndex("LoadIndex", Dims(**images, x=columns, g=config.block_g)),
        CompoundIndex(
            "WeightLoadIndex", Dims(**{k: v for k, v in block_weight_dims.items() if k != within})
        ),
        CompoundIndex("StoreIndex", Dims(**images, x=config.block_q, g=config.block_g)),
        # Tensor cores: A = 16 pixels x 8 input channels, B = 8 x 8 weights of one tap,
        # C = 16 pixels x 8 output channels.
        # TC is K of the mma: (filter column of the tap group, input channel).
        Fragment("AFrag", f"{shape}.a", element, "x", "tc"),
        Fragment("BFrag", f"{shape}.b", element, "tc", "k"),
        Fragment("CFrag", f"{shape}.c", dtype.float, "x", "k"),
        Tensor("ATile", "AFrag", Dims(x16=config.warp_q16)),
        # SG: the filter row's tap groups (taps_per_mma neighbouring columns each).
        Tensor(
            "WeightTile",
            "BFrag",
            Dims(g=config.warp_g, r=params.r, sg=tap_groups(params, config)),
        ),
        Tensor("BiasTile", "CFrag", Dims(g=config.warp_g)),
        # One band of accumulators per filter row: the R output rows an input row feeds.
        Tensor("AccTile", "CFrag", Dims(band=params.r, g=config.warp_g, x16=config.warp_q16)),
    ]


def _constants(params: Conv2dGw8Params, config: FpropConfig, dgrad: bool) -> str:
    values = [
        ("kPadTop", params.pad_top, "input rows above the image that read as zero"),
        ("kPadLeft", params.pad_left, "input columns left of the image that read as zero"),
        ("kRing", ring_rows(params, config), "input rows in the shared-memory ring"),
        ("kPrefetch", config.prefetch, "input rows loading ahead of the one needed next"),
        ("kTapsPerMma", config.taps_per_mma, "filter columns one mma covers"),
        ("kThreads", config.threads, "threads per block"),
    ]
    lines = constants_block("fprop_spec", values)
    has_bias = "true" if params.has_bias else "false"
    lines += ["// whether the kernel adds a bias", f"constexpr bool kHasBias = {has_bias};"]
    lines += [
        "// whether the kernel computes dgrad (weights transposed and rotated; see the source)",
        f"constexpr bool kDgrad = {'true' if dgrad else 'false'};",
        "// the kernel's entry point",
        f"#define CONV2D_GW8_KERNEL {DGRAD_KERNEL_NAME if dgrad else KERNEL_NAME}",
    ]
    if config.warp_images > 1:
        # A macro, not a constant, so that the other configs' headers stay as they were.
        lines += ["// images side by side, block_q columns of each", "#define CONV2D_GW8_PAIRED 1"]
    if config.segments:
        # A macro too: a constant is a global of the module, which changes what configs
        # without segments compile to.
        lines += [
            "// segments of a strip's stream of rows, one a block",
            f"#define CONV2D_GW8_SEGMENTS {config.segments}",
        ]
    elif params.p > config.block_p and params.p % config.block_p:
        # A macro as well: only configs whose chunks leave a short last one compile the walk
        # once for each chunk's rows; the others compile as they did before.
        lines += [
            "// the rows of the image's last chunk, shorter than the others",
            f"#define CONV2D_GW8_SHORT_LAST_CHUNK {params.p % config.block_p}",
        ]
    if params.r >= STEADY_WALK_MIN_ROWS:
        # A macro as well: the smaller filters' configs compile as they did before.
        lines += [
            "// the walk's steady groups of rows check nothing (the rows between its first and",
            "// last groups)",
            "#define CONV2D_GW8_STEADY_WALK 1",
        ]
    return "\n".join(lines) + "\n"


def generate_types(params: Conv2dGw8Params, config: FpropConfig, *, dgrad: bool = False) -> str:
    """Return the kernel's types.h for params and config (deterministic: same in, same bytes).

    dgrad=True generates the input-gradient variant for params already converted with
    dgrad_spec.to_fprop_params (dgrad_spec.generate_types does both).
    """
    check_config(params, config)
    if dgrad and params.has_bias:
        raise ValueError("dgrad has no bias: params.has_bias must be False")
    return generate(_specs(params, config, dgrad)) + _constants(params, config, dgrad)
