"""wgrad of grouped conv2d gw8: configuration, its space and launch geometry (the generated
types header is wgrad_types', the heuristic's default config wgrad_heuristic's).

grad_w[g, k, r, s, c] = sum over n, p, q of grad_y[n, p, q, g, k] * x[n, p + r - pad_top,
q + s - pad_left, g, c]: a reduction over every output pixel. Two kernels compute it,
deterministically (the same bits on every run):

- conv2d_gw8_wgrad: a block owns `block_q` output columns x `block_g` groups of `block_n`
  images (one image per warp row) and walks `block_p` output rows down them, with the
  input rows in a shared-memory ring as in fprop (one in use, `prefetch` loading, one
  retiring) and the grad_y rows in a second ring. A warp owns 16 columns x `warp_g`
  groups of one image (with `block_q` = 8, for images at most 8 wide: 8 columns of each of
  two images, so that no K step is half zeros) and visits each input row once: per group
  and pair of filter columns it loads a 16 x 16 A fragment, rows = (column of the pair,
  input channel),
  columns = its 16 pixels shifted by each column (ldmatrix .trans from the input ring), and
  multiplies it (m16n8k16), for each filter row r, by the 16 pixels x 8 output channels of
  grad_y row j - r (B fragments, ldmatrix .trans once per grad_y row and kept in registers
  for the R input rows that use them), accumulating in f32 registers for the whole walk.
  A block may also walk `walk_n` such steps of `block_n` images one after another, as one
  stream of rows: the accumulators carry on from image to image and the pipeline does not
  drain between them. At the end the warps of a block (its images and column strips) add
  their accumulators in a fixed order through shared memory and the block writes one
  partial sum of the weights to the workspace. More images per block (side by side or
  walked) keep the partials few where images are small and channels many (64x1024x16x16 at
  16 columns: 2 images side by side and 2 walked, 16 partials of 295 KB instead of 64).
  With `segments` (stream-K) a block's walk is instead one of that many equal segments of
  the whole stream of rows of its column strip and group slice: every step of block_n images
  and every output row, in that order. A segment starts and ends anywhere, crossing images as
  a walked block does, so the grid is as many blocks as fit on the GPU (`stream_config`)
  whatever the layer's rows divide into; the strips' segments walk the same rows side by
  side, as their chunks do.
  With `image_sync` the images side by side do not wait for each other: each image's warps
  load their own rows and meet at a named barrier of their own. With `tma` (sm_90 and newer)
  one thread per image (or per block) loads each ring row as a TMA box of a tensor map,
  completing on an mbarrier, instead of every thread copying 16-byte cells.
- conv2d_gw8_wgrad_reduce: sums the partials of each weight in a fixed order into grad_w.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import ClassVar

from ._tiling import (
    NARROW_BLOCK_Q,
    LaunchGeometry,
    ceil_div,
    check_groups_and_smem,
    check_positive_fields,
    fits,
    fragment_images,
    next_power_of_two,
)
from .params import GROUP_WIDTH, Conv2dGw8Params, check_params

KERNEL_NAME = "conv2d_gw8_wgrad"
REDUCE_KERNEL_NAME = "conv2d_gw8_wgrad_reduce"
#: The reduce kernel that rounds each weight's sum to the activations' dtype as it writes it.
REDUCE_TO_ELEMENT_KERNEL_NAME = "conv2d_gw8_wgrad_reduce_to_element"
#: With atomic_sums: the kernel that zeroes the sum the main kernel's blocks add into.
ZERO_KERNEL_NAME = "conv2d_gw8_wgrad_zero"
WARP_SIZE = 32
#: Pixels of one m16n8k16 K step: a warp's columns (of one image, or of several: NARROW_BLOCK_Q).
TILE_Q = 16
#: The block width at which a warp's K step is 8 columns of each of two images side by side
#: (_tiling.NARROW_BLOCK_Q holds it and 4, four images).
PAIRED_BLOCK_Q = NARROW_BLOCK_Q[0]
MAX_WARPS = 16
#: f32 accumulator registers per thread (warp_g * ceil(R * S / 2) fragments of 4).
MAX_ACC_REGISTERS = 112
#: The reduce kernel: threads per block, the most partial slices a block adds side by side,
#: and loads a thread issues before it waits (unroll). A block is slices x cells threads,
#: a cell 16 bytes of 4 weights (reduce_slices, reduce_cells).
REDUCE_THREADS = 256
MAX_REDUCE_SLICES = 32
REDUCE_BATCH = 8

BLOCK_Q_VALUES = (16, 32, 64, *NARROW_BLOCK_Q)
BLOCK_G_VALUES = (1, 2, 4, 8)
WARP_G_VALUES = (1, 2)
BLOCK_P_VALUES = (8, 16, 32, 64)
PREFETCH_VALUES = (1, 2)
#: Row chunks shorter than BLOCK_P_VALUES' and their prefetches, in the space of small layers
#: only (has_short_chunks): there a block's walk, R - 1 + block_p rows each waiting on its
#: loads, bounds the pass, not the bytes, and shorter walks on more blocks pay for their
#: extra partial sums (SHORT_WALK_TILE). A walk of a few rows is loaded ahead whole.
SHORT_BLOCK_P_VALUES = (1, 2, 4)
SHORT_PREFETCH_VALUES = (2, 4)
#: The most output pixels (images x rows x columns) a layer may have for short chunks in its
#: space and the heuristic's SHORT_WALK_TILE: up to 4 x 32 x 32 and 1 x 56 x 56 measured
#: (H200), where the short tiles ran 1.0-1.5x the previous heuristic's.
SHORT_WALK_MAX_PIXELS = 4096
BLOCK_N_VALUES = (1, 2, 4)
WALK_N_VALUES = (1, 2, 4)
#: Pixel columns per block (block_q * block_n) the space allows with block_n > 1.
MAX_BLOCK_COLUMNS = 64

_CELL_BYTES = 16
_F32_BYTES = 4


@dataclass(frozen=True)
class WgradConfig:
    """Tiling of the wgrad kernel; see the module doc for what each field means.

    block_q: output columns per block (a multiple of 16, a warp owning 16; or 8 or 4,
    NARROW_BLOCK_Q, a warp owning that many columns of each of 16 / block_q images); block_g:
    groups per block (divides the groups); warp_g: groups per warp (divides block_g); block_p:
    output rows a block walks; prefetch: rows loading ahead of use; block_n: images per block
    side by side (a warp row owns one, or 16 / block_q with block_q < 16: then block_n is a
    multiple of that); walk_n: such steps of block_n images each block walks one after
    another (block_n * walk_n images per block); image_sync (keyword only; several warp rows
    only): each warp row loads its own images' rows and meets at its own barrier instead of
    the block's; tma (keyword only): the rows arrive by TMA on sm_90 and newer (by cp.async,
    in the same shared-memory layout, on older GPUs), which the launch gives two tensor maps
    for; segments (keyword only): 0 walks chunks of block_p rows of walk_n steps, S >= 1
    cuts the stream of rows of each column strip and group slice into S equal segments, a
    block each (block_p is then unused and walk_n must be 1; stream_config picks S for a GPU);
    producer (keyword only; with tma): one more warp per group of warps that meet (the block,
    or each warp row with image_sync) issues the group's TMA rows, each as soon as every warp
    of the group is done with the slot it refills, and the walking warps meet at no barrier
    per row (before sm_90, without TMA, the extra warps leave at once); padded_slabs (keyword
    only): the block's shared-memory slabs of partial sums after the walk give each output
    channel's R x S x 8 weights SLAB_PAD more floats, so that a warp's accumulator stores
    reach all 32 banks instead of 16; atomic_sums (keyword only): every block adds its sums
    into one f32 sum of every weight with atomic adds (the launch zeroes it first) instead of
    writing a partial sum of its own for the reduce kernel: fewer bytes and no reduction, but
    the order of the additions, and so the rounding of the result, varies from run to run
    (the launchers take it only where the caller allows that: deterministic=False);
    lane_registers (keyword only): the walk keeps each lane's ldmatrix addresses in registers
    and loads a row's fragments before its mma, letting go of the row's ring slot before
    them (wgrad.lane_config_on gives it where the kernel keeps its blocks per SM);
    discard_partials (keyword only): the reduce kernel drops each 128-byte line of partial
    sums from L2 once it has read it, so that no later eviction writes the dead sums back to
    DRAM (only where the workspace starts on a line; wgrad.discard_config_on gives it where
    it has paid). The main kernel is the same either way. block_r (keyword only): filter
    rows per block, a divisor of R (0: all R). With fewer, the blocks of a row chunk split the
    filter's rows among them (R / block_r blocks each, in the grid), each walking block_r - 1
    + block_p input rows with block_r rows of accumulators and writing its rows of the chunk's
    partial sum: shorter walks and more blocks for the same partial sums, where a layer is
    too small to fill the GPU (wgrad_heuristic.split_walk_tile, which the launcher's default
    takes). Not with segments. skip_pad_rows (keyword only): the walk leaves out the padding
    rows, which add nothing (the same bits; wgrad.pad_rows_config_on gives it): with filters
    of 5 rows or more, the A fragments and mma of the input rows in the zero padding above
    and below the image (those rows' loads and barriers stay); and in walks of row chunks,
    each step's input rows below the image past its output rows, loads and barriers too,
    and in walks of several steps, each later step's padding row above the image (its
    grad_y row 0 then arrives with the step before's last row).
    """

    #: Fields no config space varies: the launchers set them on a chosen config for the GPU
    #: it runs on (stream_config, wgrad.balanced_config_on, and block_r on small layers'
    #: short walks: wgrad.default_tile_on), so latency models neither see nor choose them.
    PLACEMENT_FIELDS: ClassVar[tuple[str, ...]] = (
        "segments",
        "producer",
        "padded_slabs",
        "atomic_sums",
        "lane_registers",
        "discard_partials",
        "block_r",
        "skip_pad_rows",
    )

    block_q: int = 64
    block_g: int = 2
    warp_g: int = 2
    block_p: int = 32
    prefetch: int = 1
    block_n: int = 1
    walk_n: int = 1
    image_sync: bool = dataclasses.field(default=False, kw_only=True)
    tma: bool = dataclasses.field(default=False, kw_only=True)
    segments: int = dataclasses.field(default=0, kw_only=True)
    producer: bool = dataclasses.field(default=False, kw_only=True)
    padded_slabs: bool = dataclasses.field(default=False, kw_only=True)
    atomic_sums: bool = dataclasses.field(default=False, kw_only=True)
    lane_registers: bool = dataclasses.field(default=False, kw_only=True)
    discard_partials: bool = dataclasses.field(default=False, kw_only=True)
    block_r: int = dataclasses.field(default=0, kw_only=True)
    skip_pad_rows: bool = dataclasses.field(default=False, kw_only=True)

    def __post_init__(self) -> None:
        check_positive_fields(
            self, ("block_q", "block_g", "warp_g", "block_p", "prefetch", "block_n", "walk_n")
        )
        if not isinstance(self.segments, int) or isinstance(self.segments, bool):
            raise TypeError(f"segments must be an int, got {self.segments!r}")
        if self.segments < 0:
            raise ValueError(f"segments must be >= 0 (0: row chunks), got {self.segments}")
        if not isinstance(self.block_r, int) or isinstance(self.block_r, bool):
            raise TypeError(f"block_r must be an int, got {self.block_r!r}")
        if self.block_r < 0:
            raise ValueError(f"block_r must be >= 0 (0: all filter rows), got {self.block_r}")
        if self.block_r and self.segments:
            raise ValueError(
                f"block_r = {self.block_r} splits row chunks' filter rows, so segments must be "
                f"0, got {self.segments}"
            )
        if self.segments and self.walk_n != 1:
            raise ValueError(
                f"segments = {self.segments} walks the whole stream of rows, so walk_n must be "
                f"1, got {self.walk_n}"
            )
        for flag in (
            "image_sync",
            "tma",
            "producer",
            "padded_slabs",
            "atomic_sums",
            "lane_registers",
            "discard_partials",
            "skip_pad_rows",
        ):
            if not isinstance(getattr(self, flag), bool):
                raise TypeError(f"{flag} must be a bool, got {getattr(self, flag)!r}")
        if self.block_q not in NARROW_BLOCK_Q and self.block_q % TILE_Q != 0:
            raise ValueError(
                f"block_q must be one of {NARROW_BLOCK_Q} or a multiple of {TILE_Q}, "
                f"got {self.block_q}"
            )
        if self.block_n % self.warp_images != 0:
            raise ValueError(
                f"block_q = {self.block_q} puts {self.warp_images} images in each warp, so "
                f"block_n must be a multiple of {self.warp_images}, got {self.block_n}"
            )
        if self.producer and not self.tma:
            raise ValueError("producer=True issues the rows by TMA, so it needs tma=True")
        if self.tma and self.block_q % TMA_ROW_PIXELS != 0:
            raise ValueError(
                f"tma=True needs block_q a multiple of {TMA_ROW_PIXELS} (whole swizzle rows per "
                f"image), got {self.block_q}"
            )
        if self.image_sync and self.warp_rows == 1:
            raise ValueError(
                "image_sync=True needs several warp rows (block_n > 16 / block_q images per "
                f"warp row), got block_n = {self.block_n} with block_q = {self.block_q}"
            )
        if self.block_g % self.warp_g != 0:
            raise ValueError(
                f"block_g must be a multiple of warp_g = {self.warp_g}, got {self.block_g}"
            )
        if self.warps > MAX_WARPS:
            raise ValueError(
                f"warps = (block_q / 16) * (block_g / warp_g) * block_n = {self.warps} must be "
                f"at most {MAX_WARPS}"
            )

    @property
    def images(self) -> int:
        """Images per block: block_n side by side, walk_n times."""
        return self.block_n * self.walk_n

    @property
    def warp_images(self) -> int:
        """Images a warp's K step spans (_tiling.fragment_images)."""
        return fragment_images(self.block_q)

    @property
    def warp_rows(self) -> int:
        """Rows of warps: the block's images side by side, warp_images to a row."""
        return self.block_n // self.warp_images

    @property
    def warps_q(self) -> int:
        """Column strips of warps (one with block_q below 16)."""
        return (self.block_q + TILE_Q - 1) // TILE_Q

    @property
    def warps_g(self) -> int:
        return self.block_g // self.warp_g

    @property
    def warps(self) -> int:
        return self.warps_q * self.warps_g * self.warp_rows

    @property
    def threads(self) -> int:
        """Threads that walk the rows."""
        return WARP_SIZE * self.warps

    @property
    def producer_warps(self) -> int:
        """Warps that only issue rows (producer): one per group of warps that meet, each warp
        row's with image_sync, else the block's. (Arithmetic rather than branches, so that it
        also holds on a space's arrays of fields.)"""
        return int(self.producer) * (1 + self.image_sync * (self.warp_rows - 1))

    @property
    def block_threads(self) -> int:
        """Threads per block of the main kernel: the walking ones and the producer warps."""
        return WARP_SIZE * (self.warps + self.producer_warps)


def column_pairs(params: Conv2dGw8Params) -> int:
    """A fragments per group and input row: the S filter columns two at a time (with odd S
    the last pair repeats the last column, and that half of its result is dropped)."""
    return ceil_div(params.s, 2)


def block_filter_rows(params: Conv2dGw8Params, config: WgradConfig) -> int:
    """Filter rows a block accumulates: block_r, or all R (block_r 0)."""
    return config.block_r or params.r


def filter_row_tiles(params: Conv2dGw8Params, config: WgradConfig) -> int:
    """Blocks that split each row chunk's filter rows (block_r), 1 without."""
    return params.r // block_filter_rows(params, config)


def tap_pairs(params: Conv2dGw8Params, config: WgradConfig) -> int:
    """Accumulator fragments per group of a warp: one per filter row of its block and column
    pair."""
    return block_filter_rows(params, config) * column_pairs(params)


def input_ring_rows(params: Conv2dGw8Params, config: WgradConfig) -> int:
    """Input rows in the ring: one in use, prefetch loading, one retiring (as fprop)."""
    return config.prefetch + 2


def grad_ring_rows(config: WgradConfig) -> int:
    """grad_y rows in the ring: one in use, prefetch loading, one retiring."""
    return config.prefetch + 2


def input_columns(params: Conv2dGw8Params, config: WgradConfig) -> int:
    """Input columns a block stages per row: its output columns plus the S - 1 halo."""
    return config.block_q + params.s - 1


#: Pixels an input ring row is padded to a multiple of with tma: whole swizzle patterns (8 x
#: 128 bytes at 8 groups per pixel, 8 x 64 at 4, ...), so that every row starts where the
#: TMA unit's swizzle does.
TMA_ROW_PIXELS = 8
#: Shared memory ahead of the rings with tma: the rows' mbarriers, and the rings' start on
#: 1024 bytes (the 128-byte swizzle's repeat).
TMA_BARRIER_BYTES = 1024
#: The tiles the config space gives TMA loads: whole 128-byte pixel lines (8 groups). With
#: fewer groups (64-byte and smaller boxes per pixel) TMA lost wherever measured (H200:
#: 32x64x64x64 12.6 -> 14.4 us, 128x1024x16x16 40.1 -> 49.9, 64x128x32x32 12.3 -> 14.7).
TMA_BLOCK_G = 8


def ring_columns(params: Conv2dGw8Params, config: WgradConfig) -> int:
    """Pixels of an input ring row: input_columns, padded to TMA_ROW_PIXELS with tma.
    (Arithmetic only, so that it runs on columns of configs too.)"""
    columns = input_columns(params, config)
    return columns + config.tma * (-columns % TMA_ROW_PIXELS)


def ring_bytes(params: Conv2dGw8Params, config: WgradConfig) -> int:
    """Shared memory of the two rings (pixel-major rows, see conv2d_gw8_ring.cuh)."""
    inputs = input_ring_rows(params, config) * ring_columns(params, config)
    grads = grad_ring_rows(config) * config.block_q
    return _CELL_BYTES * config.block_n * config.block_g * (inputs + grads)


#: Floats padded_slabs adds after each output channel's R x S x 8 weights in a slab: a warp's
#: accumulator stores write 8 input channels of 4 output channels two apart (k = 2i + e), so
#: the channels' strides 2 x (R x S x 8 + 4) fall on 4 different 8-bank groups where
#: 2 x R x S x 8 falls on 2 (a 4-byte store per lane, 2-way conflicts).
SLAB_PAD = 4


def slab_channel_stride(params: Conv2dGw8Params, config: WgradConfig) -> int:
    """Floats from one output channel's weights to the next in a shared-memory slab (the
    block's filter rows)."""
    return (
        block_filter_rows(params, config) * params.s * GROUP_WIDTH + SLAB_PAD * config.padded_slabs
    )


def reduce_bytes(params: Conv2dGw8Params, config: WgradConfig) -> int:
    """Shared memory of the block's reduction (after the walk, in the same memory as the
    rings): the block's weights in f32 for each warp row and column strip of warps."""
    slabs = config.warp_rows * config.warps_q
    weights = slabs * config.block_g * GROUP_WIDTH * slab_channel_stride(params, config)
    # With has_bias, each slab's sums of grad_y per output channel after them.
    bias = slabs * config.block_g * GROUP_WIDTH if params.has_bias else 0
    return (weights + bias) * _F32_BYTES


def shared_mem_bytes(params: Conv2dGw8Params, config: WgradConfig) -> int:
    """Dynamic shared memory of one block: the rings, reused for the reduction, after the
    barriers of tma."""
    rings = max(ring_bytes(params, config), reduce_bytes(params, config))
    return rings + TMA_BARRIER_BYTES * config.tma


def column_strips(params: Conv2dGw8Params, config: WgradConfig) -> int:
    """Strips of block_q output columns across the image."""
    return ceil_div(params.q, config.block_q)


def stream_rows(params: Conv2dGw8Params, config: WgradConfig) -> int:
    """Output rows of a column strip's whole stream with segments: every step of block_n
    images x output row."""
    return ceil_div(params.n, config.block_n) * params.p


def partial_count(params: Conv2dGw8Params, config: WgradConfig) -> int:
    """Partial sums of every weight the main kernel writes: one per block of a group slice
    (block_sums), or with atomic_sums the one that all of them add into."""
    return 1 if config.atomic_sums else block_sums(params, config)


def block_sums(params: Conv2dGw8Params, config: WgradConfig) -> int:
    """Blocks that sum a group slice's weights, each over its own pixels: one per image chunk
    x row chunk x column strip, or one per segment x column strip."""
    if config.segments:
        return config.segments * column_strips(params, config)
    images = ceil_div(params.n, config.images)
    return images * ceil_div(params.p, config.block_p) * ceil_div(params.q, config.block_q)


def weight_count(params: Conv2dGw8Params) -> int:
    """Weights (f32 values of grad_w): c x r x s x 8."""
    return params.c * params.r * params.s * GROUP_WIDTH


def workspace_bytes(params: Conv2dGw8Params, config: WgradConfig) -> int:
    """Bytes of the workspace of partial sums a launch needs (f32): every weight's, then
    with has_bias every output channel's bias gradient's."""
    bias = params.c if params.has_bias else 0
    return partial_count(params, config) * (weight_count(params) + bias) * _F32_BYTES


def grid_blocks(params: Conv2dGw8Params, config: WgradConfig) -> int:
    """Blocks of the main kernel: block_sums x group slices x filter row tiles."""
    slices = params.groups // config.block_g
    return block_sums(params, config) * slices * filter_row_tiles(params, config)


def launch_geometry(params: Conv2dGw8Params, config: WgradConfig) -> LaunchGeometry:
    """Return the launch geometry of the main kernel; check_config's errors where config
    cannot run params."""
    check_config(params, config)
    return LaunchGeometry(
        grid_blocks(params, config), config.block_threads, shared_mem_bytes(params, config)
    )


def reduce_slices(params: Conv2dGw8Params, config: WgradConfig) -> int:
    """Partial slices a reduce block adds side by side: a slice per partial up to
    MAX_REDUCE_SLICES (a power of two). Slices beyond the partial count would only idle,
    and the cells they free make the grid smaller: one partial is a copy by 72 blocks at C =
    1024, 3 x 3, not 2304 blocks of which 31 slices in 32 wait."""
    return min(MAX_REDUCE_SLICES, next_power_of_two(partial_count(params, config)))


def reduce_cells(params: Conv2dGw8Params, config: WgradConfig) -> int:
    """16-byte cells of 4 weights per reduce block (at least 8: one 128-byte line per slice)."""
    return REDUCE_THREADS // reduce_slices(params, config)


def reduce_geometry(params: Conv2dGw8Params, config: WgradConfig) -> LaunchGeometry:
    """Return the launch geometry of the reduce kernel."""
    values_per_block = _CELL_BYTES // _F32_BYTES * reduce_cells(params, config)
    values = weight_count(params) + (params.c if params.has_bias else 0)
    return LaunchGeometry(ceil_div(values, values_per_block), REDUCE_THREADS, 0)


def zero_cells(params: Conv2dGw8Params) -> int:
    """16-byte cells of the one sum of atomic_sums that the zero kernel clears: every weight,
    then with has_bias every output channel's bias gradient (4 floats a cell)."""
    bias = params.c if params.has_bias else 0
    return (weight_count(params) + bias) // (_CELL_BYTES // _F32_BYTES)


def zero_geometry(params: Conv2dGw8Params) -> LaunchGeometry:
    """Return the launch geometry of the kernel that zeroes the sum of atomic_sums: a thread
    per cell."""
    return LaunchGeometry(ceil_div(zero_cells(params), REDUCE_THREADS), REDUCE_THREADS, 0)


def stream_config(params: Conv2dGw8Params, config: WgradConfig, slots: int) -> WgradConfig:
    """config's tile walking segments of the stream of rows (stream-K): the `slots` blocks
    that fit on the GPU at once shared among the column strips and group slices (at least one
    each, at most one per output row of a strip's stream), so that every SM walks the same
    share of rows and the partial sums are one per block."""
    if isinstance(slots, bool) or not isinstance(slots, int) or slots < 1:
        raise ValueError(f"slots must be an int >= 1 (blocks that fit on the GPU), got {slots!r}")
    # (Segments walk whole filters: a split of the filter's rows, block_r, goes.)
    plain = dataclasses.replace(config, walk_n=1, segments=0, block_r=0)
    columns = column_strips(params, plain) * (params.groups // config.block_g)
    segments = min(stream_rows(params, plain), max(1, slots // columns))
    return dataclasses.replace(plain, segments=segments)


def check_config(params: Conv2dGw8Params, config: WgradConfig) -> None:
    """Raise ValueError when config cannot run params (it names the failing rule)."""
    check_params(params)
    if not isinstance(config, WgradConfig):
        raise TypeError(f"config must be a WgradConfig, got {type(config).__name__}")
    if config.segments > stream_rows(params, config):
        raise ValueError(
            f"segments = {config.segments} must be at most the output rows of a column strip's "
            f"stream (steps of images x rows = {stream_rows(params, config)})"
        )
    if config.segments and params.p + params.r - 1 < config.prefetch:
        raise ValueError(
            f"segments walk rows up to prefetch = {config.prefetch} ahead into the next step of "
            f"images, so its output rows and halo (p + r - 1 = {params.p + params.r - 1}) must "
            f"be at least as many"
        )
    if config.block_r > params.r or (config.block_r and params.r % config.block_r):
        raise ValueError(
            f"block_r must divide the filter's rows r = {params.r} (or be 0: all of them), "
            f"got {config.block_r}"
        )
    registers = config.warp_g * tap_pairs(params, config) * 4
    if registers > MAX_ACC_REGISTERS:
        raise ValueError(
            f"warp_g * (block_r or r) * ceil(s / 2) * 4 = {registers} accumulator registers "
            f"exceed {MAX_ACC_REGISTERS}; lower warp_g"
        )
    check_groups_and_smem(params, config.block_g, shared_mem_bytes(params, config))


def _is_valid(params: Conv2dGw8Params, config: WgradConfig) -> bool:
    return fits(check_config, params, config)


def _images_fit(params: Conv2dGw8Params, images: int) -> bool:
    """Whether a block's images stay within the batch rounded up to a power of two (more
    would only read zeros)."""
    return images <= next_power_of_two(params.n)


def config_space(params: Conv2dGw8Params) -> list[WgradConfig]:
    """Return every valid config for params, in a fixed order (tiles larger than the image
    left out, as in fprop; NARROW_BLOCK_Q only for images at most that wide); tiles of
    TMA_BLOCK_G groups and whole TMA_ROW_PIXELS columns come with and without tma. Small
    layers (has_short_chunks) also get tiles of SHORT_BLOCK_P_VALUES rows at
    SHORT_PREFETCH_VALUES, one step of images a block, after all the others (so that every
    other layer's space, and the order of the rest, stay as they were)."""
    check_params(params)
    configs = _tiles(params, BLOCK_P_VALUES, PREFETCH_VALUES, WALK_N_VALUES)
    if has_short_chunks(params):
        short = [block_p for block_p in SHORT_BLOCK_P_VALUES if block_p < params.p]
        configs += _tiles(params, tuple(short), SHORT_PREFETCH_VALUES, (1,))
    return configs


def has_short_chunks(params: Conv2dGw8Params) -> bool:
    """Whether params' space holds tiles of SHORT_BLOCK_P_VALUES rows: layers of at most
    SHORT_WALK_MAX_PIXELS output pixels (all images) whose images are taller than the
    longest short chunk."""
    return (
        params.n * params.p * params.q <= SHORT_WALK_MAX_PIXELS
        and params.p > SHORT_BLOCK_P_VALUES[-1]
    )


def _tiles(
    params: Conv2dGw8Params,
    block_p_values: tuple[int, ...],
    prefetch_values: tuple[int, ...],
    walk_n_values: tuple[int, ...],
) -> list[WgradConfig]:
    """The valid configs for params of these row chunks, prefetches and image steps, and every
    value of the other fields, in config_space's order."""
    configs = []
    for block_q, block_g, warp_g, block_p, prefetch, block_n, walk_n in itertools.product(
        BLOCK_Q_VALUES,
        BLOCK_G_VALUES,
        WARP_G_VALUES,
        block_p_values,
        prefetch_values,
        BLOCK_N_VALUES,
        walk_n_values,
    ):
        if block_q > max(TILE_Q, next_power_of_two(params.q)):
            continue
        warp_images = fragment_images(block_q)
        if block_q < TILE_Q and (params.q > block_q or block_n % warp_images):
            continue
        if block_p > max(BLOCK_P_VALUES[0], next_power_of_two(params.p)):
            continue
        if block_n > 1 and (
            block_q * block_n > MAX_BLOCK_COLUMNS or not _images_fit(params, block_n)
        ):
            continue
        if walk_n > 1 and not _images_fit(params, block_n * walk_n):
            continue
        warp_rows = block_n // warp_images
        warps = ceil_div(block_q, TILE_Q) * (block_g // max(1, warp_g)) * warp_rows
        if block_g % warp_g or warps > MAX_WARPS:
            continue
        for image_sync in (False, True) if warp_rows > 1 else (False,):
            tma_rows = block_g == TMA_BLOCK_G and block_q % TMA_ROW_PIXELS == 0
            for tma in (False, True) if tma_rows else (False,):
                config = WgradConfig(
                    block_q,
                    block_g,
                    warp_g,
                    block_p,
                    prefetch,
                    block_n,
                    walk_n,
                    image_sync=image_sync,
                    tma=tma,
                )
                if _is_valid(params, config):
                    configs.append(config)
    return configs
