"""fprop of grouped conv2d gw8: configuration, its space, launch geometry and typed dims.

A block owns `block_q` output columns x `block_g` groups (8 channels each) of one image and
walks `block_p` output rows down it. Its input rows sit in a ring of `ring` rows of shared
memory (one in use, `prefetch` rows loading ahead, one being retired), each row
(block_q + S - 1) 16-byte cells per group. A warp owns `warp_q16` tiles of 16 columns x
`warp_g` groups: per input row and filter column it loads an m16n8k8 A fragment (16 pixels
x 8 input channels) with ldmatrix once and multiplies it by each filter row's weights (8 x 8,
registers) into the R output rows it feeds (R accumulator bands).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from spio.dims import (
    CompoundIndex,
    Dims,
    Fold,
    Fragment,
    Spec,
    Strides,
    Tensor,
    dtype,
    generate,
)

from ._tiling import (
    LaunchGeometry,
    ceil_div,
    check_groups_and_smem,
    check_positive_fields,
    constants_block,
    fits,
    next_power_of_two,
)
from .params import GROUP_WIDTH, Conv2dGw8Params

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

BLOCK_Q_VALUES = (16, 32, 64)
BLOCK_G_VALUES = (1, 2, 4, 8)
WARP_G_VALUES = (1, 2)
WARP_Q16_VALUES = (1, 2)
BLOCK_P_VALUES = (4, 8, 16, 32)
PREFETCH_VALUES = (1, 2)

_CELL_BYTES = 16


@dataclass(frozen=True)
class FpropConfig:
    """Tiling of the fprop kernel; see the module doc for what each field means.

    block_q: output columns per block (a multiple of 16 * warp_q16);
    block_g: groups per block (block_c = 8 * block_g channels; divides the groups);
    warp_g: groups per warp (divides block_g); warp_q16: 16-column tiles per warp;
    block_p: output rows a block walks; prefetch: input rows loading ahead of use.
    """

    block_q: int = 32
    block_g: int = 8
    warp_g: int = 2
    warp_q16: int = 1
    block_p: int = 16
    prefetch: int = 2

    def __post_init__(self) -> None:
        check_positive_fields(
            self, ("block_q", "block_g", "warp_g", "warp_q16", "block_p", "prefetch")
        )
        if self.block_q % (TILE_Q * self.warp_q16) != 0:
            raise ValueError(
                f"block_q must be a multiple of 16 * warp_q16 = {TILE_Q * self.warp_q16}, "
                f"got {self.block_q}"
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
    def warps_q(self) -> int:
        return self.block_q // (TILE_Q * self.warp_q16)

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


def _odd_at_least(value: int) -> int:
    return value if value % 2 == 1 else value + 1


def weight_cells(params: Conv2dGw8Params, config: FpropConfig) -> int:
    """16-byte cells of the block's weights in shared memory: block_g x 8 x R x S."""
    return config.block_g * GROUP_WIDTH * params.r * params.s


def stage_pitch(config: FpropConfig) -> int:
    """Cells between two output columns of a warp's staging tile: odd, so the 4-byte
    accumulator stores of 8 columns hit distinct banks."""
    return _odd_at_least(config.warp_g)


def shared_mem_bytes(params: Conv2dGw8Params, config: FpropConfig) -> int:
    """Dynamic shared memory of one block: the input ring (pixel-major rows, see
    conv2d_gw8_ring.cuh), the warps' output staging and the block's weights (staged once
    with 16-byte cp.async, then ldmatrix'ed into registers)."""
    ring = ring_rows(params, config) * config.block_g * smem_columns(params, config)
    stage = config.warps * config.warp_q * stage_pitch(config)
    return _CELL_BYTES * (ring + stage + weight_cells(params, config))


def grid_blocks(params: Conv2dGw8Params, config: FpropConfig) -> int:
    """Blocks in the grid: n x row chunks x column strips x group slices."""
    return (
        params.n
        * ceil_div(params.p, config.block_p)
        * ceil_div(params.q, config.block_q)
        * (params.groups // config.block_g)
    )


def launch_geometry(params: Conv2dGw8Params, config: FpropConfig) -> LaunchGeometry:
    """Return the launch geometry of `config` on `params`."""
    return LaunchGeometry(
        grid_blocks(params, config), config.threads, shared_mem_bytes(params, config)
    )


def check_config(params: Conv2dGw8Params, config: FpropConfig) -> None:
    """Raise ValueError when config cannot run params (it names the failing rule)."""
    if not isinstance(config, FpropConfig):
        raise TypeError(f"config must be an FpropConfig, got {type(config).__name__}")
    weight_registers = config.warp_g * params.r * params.s
    if weight_registers > MAX_WEIGHT_REGISTERS:
        raise ValueError(
            f"warp_g * r * s = {weight_registers} weight registers exceed "
            f"{MAX_WEIGHT_REGISTERS}; lower warp_g"
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
    block_p up to the next power of two >= p), as are configs check_config refuses.
    """
    configs = []
    for block_q, block_g, warp_g, warp_q16, block_p, prefetch in itertools.product(
        BLOCK_Q_VALUES,
        BLOCK_G_VALUES,
        WARP_G_VALUES,
        WARP_Q16_VALUES,
        BLOCK_P_VALUES,
        PREFETCH_VALUES,
    ):
        if block_q > max(TILE_Q, next_power_of_two(params.q)):
            continue
        if block_p > max(BLOCK_P_VALUES[0], next_power_of_two(params.p)):
            continue
        if block_g % warp_g or block_q % (TILE_Q * warp_q16):
            continue
        if (block_q // (TILE_Q * warp_q16)) * (block_g // warp_g) > MAX_WARPS:
            continue
        config = FpropConfig(block_q, block_g, warp_g, warp_q16, block_p, prefetch)
        if _is_valid(params, config):
            configs.append(config)
    return configs


#: Warps per SM below which a grid of large tiles leaves the schedulers idle (3 per scheduler).
MIN_WARPS_PER_SM = 12


def _total_warps(params: Conv2dGw8Params, config: FpropConfig) -> int:
    return grid_blocks(params, config) * config.warps


def default_config(params: Conv2dGw8Params, sm_count: int = 132) -> FpropConfig:
    """Pick a config by rule of thumb (the perf model replaces this later).

    Large tiles cover whole 128-byte pixel lines: block_g = 8 groups where the groups allow
    (else 4, 2, 1), so each warp's cp.async coalesce into 4-sector L2 requests (the ring
    layout keeps them in global order); L2 tag lookups, not DRAM, limited the 2-group tiles
    (H100 sweep at 128x64x64x64: (64, 8, 2, 1, 32, 2) 56.8 us against 63.8 us for
    (64, 2, 2, 1, 32, 1)). Two groups per warp (2 * R * S weight registers), one 16-column
    tile per warp. Then:

    - the large tile (block_q up to 64, else 32 where 64 needs too many warps; block_p 32,
      else 16; prefetch 2, then 1 where shared memory is short) when its grid still holds
      MIN_WARPS_PER_SM warps per SM;
    - otherwise one-warp blocks of 2 groups (block_q = 16) and the longest row walk (<= 16)
      that keeps MIN_WARPS_PER_SM warps per SM: small layers (working set in L2) are
      latency-bound, and many independent small blocks keep the schedulers fed.
    """
    small_g = 2 if params.groups % 2 == 0 else 1
    large_g = next(g for g in (8, 4, 2, 1) if params.groups % g == 0)

    def warp_groups(block_g: int) -> int:
        return 2 if block_g >= 2 and 2 * params.r * params.s <= MAX_WEIGHT_REGISTERS else 1

    max_q = max(TILE_Q, next_power_of_two(params.q))
    max_p = max(BLOCK_P_VALUES[0], next_power_of_two(params.p))
    min_warps = MIN_WARPS_PER_SM * sm_count
    # Large tiles only with two groups per warp: at 7 x 7 (one group per warp) the 32 x 8
    # tile ran fprop at 56.9 us against 43.9 us for one-warp blocks (H100, 32x64x56x56).
    large = [
        (block_q, large_g, 2, 1, block_p, prefetch)
        for block_q in dict.fromkeys((min(64, max_q), min(32, max_q)))
        for block_p in dict.fromkeys((min(32, max_p), min(16, max_p)))
        for prefetch in (2, 1)
        if warp_groups(large_g) == 2
    ]
    small = [
        (TILE_Q, small_g, warp_groups(small_g), 1, block_p, 1)
        for block_p in (16, 8, 4)
        if block_p <= max_p
    ]
    valid = [c for c in map(_buildable, large + small) if c and _is_valid(params, c)]
    if not valid:
        space = config_space(params)
        if not space:
            raise ValueError(f"no fprop config fits {params}")
        return space[0]
    for config in valid:
        if _total_warps(params, config) >= min_warps:
            return config
    return valid[-1]


def _buildable(fields: tuple[int, ...]) -> FpropConfig | None:
    """Return the config of these fields, or None where they break a config rule."""
    try:
        return FpropConfig(*fields)
    except ValueError:
        return None


def _stage_dims(config: FpropConfig) -> Dims:
    # With one group per warp the WARP_G fold is G itself: a tensor holds a dimension once.
    if config.warp_g == 1:
        return Dims(warp_x=config.warps_q, warp_g=config.warps_g, x=config.warp_q, k=8)
    return Dims(warp_x=config.warps_q, warp_g=config.warps_g, x=config.warp_q, g=config.warp_g, k=8)


def _specs(params: Conv2dGw8Params, config: FpropConfig, dgrad: bool) -> list[Spec]:
    element = dtype.half if params.dtype == "float16" else dtype.bfloat16
    groups = params.groups
    columns = smem_columns(params, config)
    # A 16-byte weight row holds 8 input channels (fprop), or 8 output channels for dgrad,
    # whose weights are the layer's with this kernel's input and output channels swapped.
    row, within = ("c", "k") if dgrad else ("k", "c")
    weight_dims = {"g": groups, row: 8, "r": params.r, "s": params.s, within: 8}
    block_weight_dims = {**weight_dims, "g": config.block_g}
    return [
        # Block and warp tiles: folds of the output's rows (Y), columns (X) and groups (G).
        Fold("block_y", "y", config.block_p),
        Fold("block_x", "x", config.block_q),
        Fold("block_g", "g", config.block_g),
        Fold("warp_x", "x", config.warp_q),
        Fold("warp_g", "g", config.warp_g),
        CompoundIndex(
            "BlockIndex",
            Dims(
                n=params.n,
                block_y=ceil_div(params.p, config.block_p),
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
        # output tile, staged per warp for 16-byte stores.
        Tensor(
            "SmemInput",
            element,
            Dims(ring=ring_rows(params, config), x=columns, slot=config.block_g, c=8),
        ),
        Tensor("SmemOutput", element, _stage_dims(config), Strides(x=8 * stage_pitch(config))),
        # The block's weights, same layout as global (16-byte rows, R * S cells apart):
        # one ldmatrix per B fragment.
        Tensor("SmemWeights", element, Dims(**block_weight_dims)),
        CompoundIndex("LoadIndex", Dims(x=columns, g=config.block_g)),
        CompoundIndex(
            "WeightLoadIndex", Dims(**{k: v for k, v in block_weight_dims.items() if k != within})
        ),
        CompoundIndex("StoreIndex", Dims(x=config.warp_q, g=config.warp_g)),
        # Tensor cores: A = 16 pixels x 8 input channels, B = 8 x 8 weights of one tap,
        # C = 16 pixels x 8 output channels.
        Fragment("AFrag", "m16n8k8.a", element, "x", "c"),
        Fragment("BFrag", "m16n8k8.b", element, "c", "k"),
        Fragment("CFrag", "m16n8k8.c", dtype.float, "x", "k"),
        Tensor("ATile", "AFrag", Dims(x16=config.warp_q16)),
        Tensor("WeightTile", "BFrag", Dims(g=config.warp_g, r=params.r, s=params.s)),
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
