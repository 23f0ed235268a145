"""wgrad's generated types header: the typed dimensions, tensors, fragments and constants
that conv2d_gw8_wgrad.cu reads from "types.h", for one layer and WgradConfig
(`generate_types`; the config, its space and geometry are wgrad_spec's)."""

from __future__ import annotations

from spio.dims import CompoundIndex, Dims, Fold, Fragment, Spec, Strides, Tensor, dtype, generate

from ._tiling import ceil_div, constants_block
from .params import GROUP_WIDTH, Conv2dGw8Params
from .wgrad_spec import (
    REDUCE_BATCH,
    SLAB_PAD,
    TILE_Q,
    WARP_SIZE,
    WgradConfig,
    block_filter_rows,
    check_config,
    column_pairs,
    column_strips,
    filter_row_tiles,
    grad_ring_rows,
    input_columns,
    input_ring_rows,
    partial_count,
    reduce_cells,
    reduce_slices,
    ring_columns,
    slab_channel_stride,
    tap_pairs,
    weight_count,
    zero_cells,
)


def _specs(params: Conv2dGw8Params, config: WgradConfig) -> list[Spec]:
    element = dtype.half if params.dtype == "float16" else dtype.bfloat16
    groups = params.groups
    columns = input_columns(params, config)
    pairs = tap_pairs(params, config)
    # With segments the block index's first dimension is the block's segment, and a part of
    # its walk (one step's rows) at most every output row.
    images = config.segments or ceil_div(params.n, config.images)
    row_chunks = 1 if config.segments else ceil_div(params.p, config.block_p)
    strips = column_strips(params, config)
    # The workspace's partial sums: one per block of a group slice, or with atomic_sums the one
    # every block adds into.
    sums = (1, 1, 1) if config.atomic_sums else (images, row_chunks, strips)
    # The block's filter rows (all R, or block_r of them: its own rows of the chunk's
    # partial sum) and, where block_r splits them, the blocks' filter row tiles, innermost in
    # the grid so that a chunk's blocks run together.
    rows = block_filter_rows(params, config)
    row_tiles = filter_row_tiles(params, config)
    block_dims = Dims(
        block_n=images, block_y=row_chunks, block_x=strips, block_g=groups // config.block_g
    )
    if row_tiles > 1:
        block_dims = Dims(**block_dims, block_r=row_tiles)
    return [
        Fold("block_n", "n", config.images),
        Fold("block_y", "y", params.p if config.segments else config.block_p),
        Fold("block_x", "x", config.block_q),
        Fold("block_g", "g", config.block_g),
        *([Fold("block_r", "r", rows)] if row_tiles > 1 else []),
        Fold("warp_x", "x", TILE_Q),
        Fold("warp_g", "g", config.warp_g),
        CompoundIndex("BlockIndex", block_dims, init="blockIdx.x"),
        # n: the warp's row of images within the block (its image; with block_q < 16 the
        # 16 / block_q images from n * 16 / block_q).
        CompoundIndex(
            "ThreadIndex",
            Dims(n=config.warp_rows, warp_x=config.warps_q, warp_g=config.warps_g, lane=WARP_SIZE),
            init="threadIdx.x",
        ),
        # Global memory: NHWC activations; grad_w and its partial sums in Spio's weight
        # layout G x K x R x S x C, f32.
        Tensor(
            "Input", element, Dims(n=params.n, y=params.h, x=params.w, g=groups, c=8), constant=True
        ),
        Tensor(
            "GradOutput",
            element,
            Dims(n=params.n, y=params.p, x=params.q, g=groups, k=8),
            constant=True,
        ),
        Tensor(
            "Partials",
            dtype.float,
            Dims(
                block_n=sums[0],
                block_y=sums[1],
                block_x=sums[2],
                g=groups,
                k=8,
                r=params.r,
                s=params.s,
                c=8,
            ),
        ),
        # Shared memory: the two rings of rows (16-byte cells, pixel-major with the groups
        # swizzled into slots: conv2d_gw8_ring.cuh) and, after the walk, every warp's
        # accumulators, lanes innermost (conflict-free f32 stores and loads).
        Tensor(
            "SmemInput",
            element,
            Dims(
                ring=input_ring_rows(params, config),
                n=config.block_n,
                x=ring_columns(params, config),
                slot=config.block_g,
                c=8,
            ),
        ),
        Tensor(
            "SmemGrad",
            element,
            Dims(
                ring=grad_ring_rows(config),
                n=config.block_n,
                x=config.block_q,
                slot=config.block_g,
                k=8,
            ),
        ),
        # After the walk (in the rings' memory): every warp's accumulators in grad_w's order,
        # one slab of the block's weights per warp row and column strip of warps (with
        # padded_slabs, SLAB_PAD floats after each output channel's weights).
        Tensor(
            "SmemPartials",
            dtype.float,
            Dims(
                n=config.warp_rows,
                warp_x=config.warps_q,
                g=config.block_g,
                k=8,
                r=rows,
                s=params.s,
                c=8,
            ),
            _slab_strides(params, config),
        ),
        CompoundIndex("InputLoadIndex", Dims(n=config.block_n, x=columns, g=config.block_g)),
        CompoundIndex("GradLoadIndex", Dims(n=config.block_n, x=config.block_q, g=config.block_g)),
        # One image's cells of a ring row (blocks of several images: each image's warps load
        # their own image's rows).
        CompoundIndex("ImageInputLoadIndex", Dims(x=columns, g=config.block_g)),
        CompoundIndex("ImageGradLoadIndex", Dims(x=config.block_q, g=config.block_g)),
        # What one thread adds up over the slabs and writes: 16 bytes of 4 input channels.
        Fold("c_quad", "c", 4),
        CompoundIndex(
            "PartialCellIndex",
            Dims(g=config.block_g, k=8, r=rows, s=params.s, c_quad=GROUP_WIDTH // 4),
        ),
        *(_bias_specs(params, config, *sums) if params.has_bias else []),
        # Tensor cores, m16n8k16: A = (tap of the pair, input channel) x 16 pixels, B = 16
        # pixels x 8 output channels, C = (tap of the pair, input channel) x output channel.
        Fragment("TapFrag", "m16n8k16.a", element, "tc", "x"),
        Fragment("GradFrag", "m16n8k16.b", element, "x", "k"),
        Fragment("AccFrag", "m16n8k16.c", dtype.float, "tc", "k"),
        # Accumulators: pair = r * ceil(S / 2) + column pair (r of the block's filter rows).
        Tensor("AccTile", "AccFrag", Dims(g=config.warp_g, pair=pairs)),
        # grad_y's B fragments of the last R (or block_r) rows: row i in band i % R.
        Tensor("GradTile", "GradFrag", Dims(band=rows, g=config.warp_g)),
        # The reduce kernel: partial slices x 16-byte cells of weights per block.
        CompoundIndex(
            "ReduceThread",
            Dims(slice=reduce_slices(params, config), cell=reduce_cells(params, config)),
            init="threadIdx.x",
        ),
    ]


def _bias_specs(
    params: Conv2dGw8Params, config: WgradConfig, images: int, row_chunks: int, strips: int
) -> list[Spec]:
    """With params.has_bias, the bias gradient's: each block's sum of grad_y over its pixels
    per output channel (after the weights' partial sums in the workspace), the warps' sums in
    shared memory (after the slabs) and the threads that add them up, one per channel."""
    return [
        Tensor(
            "BiasPartials",
            dtype.float,
            Dims(block_n=images, block_y=row_chunks, block_x=strips, g=params.groups, k=8),
        ),
        Tensor(
            "SmemBias",
            dtype.float,
            Dims(n=config.warp_rows, warp_x=config.warps_q, g=config.block_g, k=8),
        ),
        CompoundIndex("BlockChannelIndex", Dims(g=config.block_g, k=8)),
    ]


def _slab_strides(params: Conv2dGw8Params, config: WgradConfig) -> Strides | None:
    """SmemPartials' strides with padded_slabs (None: packed, as without)."""
    if not config.padded_slabs:
        return None
    channel = slab_channel_stride(params, config)
    group = GROUP_WIDTH * channel
    strip = config.block_g * group
    return Strides(n=config.warps_q * strip, warp_x=strip, g=group, k=channel)


def _constants(params: Conv2dGw8Params, config: WgradConfig) -> str:
    values = [
        ("kPadTop", params.pad_top, "input rows above the image that read as zero"),
        ("kPadLeft", params.pad_left, "input columns left of the image that read as zero"),
        ("kRows", block_filter_rows(params, config), "filter rows R (the block's: block_r)"),
        ("kCols", params.s, "filter columns S"),
        ("kColumnPairs", column_pairs(params), "A fragments per group and input row"),
        ("kPrefetch", config.prefetch, "rows loading ahead of the one needed next"),
        ("kWalkImages", config.walk_n, "steps of images a block walks one after another"),
        ("kWarpImages", config.warp_images, "images a warp's K step spans (16 / block_q each)"),
        ("kImageSync", int(config.image_sync), "each image's warps load and meet on their own"),
        ("kSegments", config.segments, "segments of the stream of rows (0: row chunks)"),
        ("kSteps", ceil_div(params.n, config.block_n), "steps of block_n images in the batch"),
        ("kThreads", config.threads, "threads per block of the main kernel"),
        ("kPartials", partial_count(params, config), "partial sums of every weight"),
        ("kWeights", weight_count(params), "f32 values of grad_w"),
        ("kReduceCells", reduce_cells(params, config), "16-byte cells of weights per reduce block"),
        ("kReduceSlices", reduce_slices(params, config), "partial slices per reduce block"),
        ("kReduceBatch", REDUCE_BATCH, "loads a reduce thread issues before it waits"),
    ]
    lines = constants_block("wgrad_spec", values)
    return "\n".join(lines) + "\n"


def generate_types(params: Conv2dGw8Params, config: WgradConfig) -> str:
    """Return the kernels' types.h for params and config (deterministic)."""
    check_config(params, config)
    text = generate(_specs(params, config)) + _constants(params, config)
    # The kernel signature takes the tensor maps only with tma (on sm_90 and newer), so it is
    # a macro rather than a constant; so are the producer warps, which leave a config without
    # them as it was.
    if config.tma:
        text += "// rows by TMA where the GPU has it\n#define CONV2D_GW8_TMA_LOADS 1\n"
    if config.padded_slabs:
        text += (
            "// floats after each output channel's weights in a slab\n"
            f"#define CONV2D_GW8_SLAB_PAD {SLAB_PAD}\n"
        )
    if params.has_bias:
        text += (
            "// grad_y's sums per output channel too: the bias gradient\n"
            "#define CONV2D_GW8_BIAS_GRAD 1\n"
            f"constexpr int kBiasCells = {params.c // 4};  // 16-byte cells of the bias gradient\n"
        )
    if config.producer:
        text += (
            "// warps that only issue the rows (one per group of warps that meet)\n"
            f"#define CONV2D_GW8_PRODUCER_WARPS {config.producer_warps}\n"
        )
    if config.lane_registers:
        text += (
            "// the lanes' ldmatrix addresses kept in registers\n"
            "#define CONV2D_GW8_LANE_REGISTERS 1\n"
        )
    if config.skip_pad_rows:
        text += (
            "// the walk leaves out the padding rows (WgradConfig.skip_pad_rows)\n"
            "#define CONV2D_GW8_SKIP_PAD_ROWS 1\n"
        )
    if config.discard_partials:
        text += (
            "// the reduce kernel drops the partial sums' lines from L2 once read\n"
            "#define CONV2D_GW8_DISCARD_PARTIALS 1\n"
        )
    if filter_row_tiles(params, config) > 1:
        text += (
            "// the row chunks' blocks split the filter's rows (block_r each)\n"
            "#define CONV2D_GW8_FILTER_ROW_TILES 1\n"
        )
    if config.atomic_sums:
        text += (
            "// every block adds its sums into one partial sum with atomic adds\n"
            "#define CONV2D_GW8_ATOMIC_SUMS 1\n"
            f"constexpr int kZeroCells = {zero_cells(params)};  // 16-byte cells the sum takes\n"
        )
    return text
