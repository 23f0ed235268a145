"""The Hopper matmul's configuration (wgmma + TMA, sm_90a), its launch geometry and types.

A block owns a 128 x `block_n` tile of C. One producer warp loads chunks of 64 of K of A's
and B's tiles with TMA (128-byte swizzle; A and B as rows of K when they are M x K and
N x K, as slabs of 64 columns when they are K x M and K x N) into a ring of `stages`
shared-memory stages, each completing on an mbarrier; two consumer warpgroups each multiply
64 rows of the tile by the whole B tile with wgmma (m64n`block_n`k16, both operands read
from shared memory through descriptors) into float32 registers, and release each stage
through a second mbarrier once the tensor cores are done with it. The epilogue is the
mma.sync kernel's: C's tile staged swizzled in shared memory, stored as 16-byte vectors.
Blocks run over C's tiles in groups of `group_m` tile rows, as in spec.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from spio.dims import (
    CompoundIndex,
    Dims,
    DType,
    Fold,
    Fragment,
    Spec,
    Swizzle,
    Tensor,
    dtype,
    generate,
)

from .params import VECTOR, MatmulParams
from .spec import (
    GROUP_M_VALUES,
    LaunchGeometry,
    bias_specs,
    ceil_div,
    check_choices,
    constant_lines,
    swizzle_cells,
    variant_macros,
)

KERNEL_NAME = "spio_matmul_wgmma"
#: Rows of C per block: one 64-row wgmma per consumer warpgroup.
BLOCK_M = 128
#: K per stage: one 128-byte swizzled row of 16-bit elements.
BLOCK_K = 64
WARPGROUP_THREADS = 128
CONSUMER_WARPGROUPS = BLOCK_M // 64
#: The consumer warpgroups and the producer warp.
THREADS = CONSUMER_WARPGROUPS * WARPGROUP_THREADS + 32
BLOCK_N_VALUES = (128, 256)
STAGES_VALUES = (2, 3, 4, 5)
#: Shared memory a block may use on sm_90.
MAX_SHARED_MEM = 227 * 1024
#: The mbarriers after the ring: a full and an empty barrier of 8 bytes per stage.
_BARRIER_BYTES = 16
_ELEMENT_BYTES = 2


@dataclass(frozen=True)
class WgmmaConfig:
    """Tiling of the Hopper kernel; see the module doc.

    block_n: columns of C per block (128 or 256: the wgmma's N); stages: chunks in the
    shared-memory ring (2 ... 5); group_m: C's tile rows per group of the blocks' order.
    """

    block_n: int = 256
    stages: int = 4
    group_m: int = 8

    def __post_init__(self) -> None:
        check_choices(
            self,
            (("block_n", BLOCK_N_VALUES), ("stages", STAGES_VALUES), ("group_m", GROUP_M_VALUES)),
        )
        if self.shared_mem > MAX_SHARED_MEM:
            raise ValueError(
                f"config needs {self.shared_mem} bytes of shared memory, more than an sm_90 "
                f"block may use ({MAX_SHARED_MEM})"
            )

    @property
    def block_m(self) -> int:
        return BLOCK_M

    @property
    def threads(self) -> int:
        return THREADS

    @property
    def stage_bytes(self) -> int:
        """Bytes one stage holds: A's 128 x 64 and B's block_n x 64 elements."""
        return (BLOCK_M + self.block_n) * BLOCK_K * _ELEMENT_BYTES

    @property
    def shared_mem(self) -> int:
        """Dynamic shared memory: the ring (which C's staged tile reuses) and its barriers."""
        ring = max(self.stages * self.stage_bytes, BLOCK_M * self.block_n * _ELEMENT_BYTES)
        return ring + self.stages * _BARRIER_BYTES


def tiles(params: MatmulParams, config: WgmmaConfig) -> tuple[int, int]:
    return ceil_div(params.m, BLOCK_M), ceil_div(params.n, config.block_n)


def launch_geometry(params: MatmulParams, config: WgmmaConfig) -> LaunchGeometry:
    tiles_m, tiles_n = tiles(params, config)
    return LaunchGeometry(tiles_m * tiles_n, THREADS, config.shared_mem)


def check_config(params: MatmulParams, config: WgmmaConfig) -> None:
    """Raise TypeError / ValueError unless config is a WgmmaConfig for params."""
    if not isinstance(params, MatmulParams):
        raise TypeError(f"params must be a MatmulParams, got {type(params).__name__}")
    if not isinstance(config, WgmmaConfig):
        raise TypeError(f"config must be a WgmmaConfig, got {type(config).__name__}")


def config_space() -> list[WgmmaConfig]:
    """Every valid WgmmaConfig, in a fixed order (the same for every shape it takes)."""
    space = []
    for block_n in BLOCK_N_VALUES:
        for stages in STAGES_VALUES:
            for group_m in GROUP_M_VALUES:
                try:
                    space.append(WgmmaConfig(block_n, stages, group_m))
                except ValueError:
                    continue  # more shared memory than a block may use
    return space


def default_config(params: MatmulParams, sm_count: int = 132) -> WgmmaConfig:
    """128 x 256 tiles in 4 stages where C has a tile per SM of them, else 128 x 128."""
    tiles_m = ceil_div(params.m, BLOCK_M)
    wide = tiles_m * ceil_div(params.n, 256) >= sm_count
    return WgmmaConfig(256 if wide else 128, 4)


#: Bytes between the 64-column slabs of a K x N B's (or a K x M A's) stage (64 rows of K of
#: 128 bytes), and between its 8-row groups of K: the descriptor offsets of an N-major B
#: (TransB) or an M-major A (TransA).
SLAB_BYTES = BLOCK_K * 128
GROUP_BYTES = 1024
#: (leading, stride) byte offsets of A's and B's descriptors, by layout: a K-major operand's
#: leading offset is unused with the 128-byte swizzle (16 by convention); an M- or N-major
#: one's is the slab step (which an M-major A, 64 rows of M per wgmma, never takes).
A_DESCRIPTOR_OFFSETS = {"mk": (16, GROUP_BYTES), "km": (SLAB_BYTES, GROUP_BYTES)}
B_DESCRIPTOR_OFFSETS = {"nk": (16, GROUP_BYTES), "kn": (SLAB_BYTES, GROUP_BYTES)}


def _smem_a(params: MatmulParams, config: WgmmaConfig, element: DType) -> Tensor:
    """A's stages as TMA fills them: 128 rows of 64 of K (an M x K A), or a slab of 64
    columns per consumer warpgroup, each 64 rows of K of 64 columns (a K x M A)."""
    if params.a_layout == "mk":
        return Tensor("SmemA", element, Dims(stage=config.stages, i=BLOCK_M, k=BLOCK_K))
    return Tensor(
        "SmemA",
        element,
        Dims(stage=config.stages, a_slab=CONSUMER_WARPGROUPS, k=BLOCK_K, i=64),
    )


def _smem_b(params: MatmulParams, config: WgmmaConfig, element: DType) -> Tensor:
    """B's stages as TMA fills them: block_n rows of 64 of K (an N x K B), or slabs of 64
    columns, each 64 rows of K of 64 columns (a K x N B)."""
    if params.b_layout == "nk":
        return Tensor("SmemB", element, Dims(stage=config.stages, j=config.block_n, k=BLOCK_K))
    return Tensor(
        "SmemB",
        element,
        Dims(stage=config.stages, b_slab=config.block_n // 64, k=BLOCK_K, j=64),
    )


def _specs(params: MatmulParams, config: WgmmaConfig) -> list[Spec]:
    element = dtype.half if params.dtype == "float16" else dtype.bfloat16
    c_cells = swizzle_cells(config.block_n * _ELEMENT_BYTES)
    return [
        Fold("block_i", "i", BLOCK_M),
        Fold("block_j", "j", config.block_n),
        Fold("c_slab", "j", VECTOR * c_cells),
        Tensor("C", dtype.uint4, Dims(i=params.m, j8=params.n // VECTOR)),
        *bias_specs(params),
        # The ring as TMA fills it: every stage of A, then every stage of B, in rows of 64
        # elements (of K, or of M or N for the K-row layouts), 128-byte swizzled.
        _smem_a(params, config, element),
        _smem_b(params, config, element),
        Tensor(
            "SmemC",
            dtype.uint4,
            Dims(
                c_slab=config.block_n // (VECTOR * c_cells),
                i8=BLOCK_M // VECTOR,
                c_swizzle=VECTOR * c_cells,
            ),
        ),
        Swizzle("SwizzleC", "i", "j8", "c_swizzle", cells=c_cells),
        CompoundIndex("CStoreIndex", Dims(i=BLOCK_M, j8=config.block_n // VECTOR)),
        # The accumulators' lane map: each warp's 16 rows of a wgmma's 64, per 8 columns, are
        # an m16n8 C fragment (wgmma.cuh).
        Fragment("CFrag", "m16n8k16.c", dtype.float, "i", "j"),
    ]


def _constants(params: MatmulParams, config: WgmmaConfig) -> str:
    tiles_m, tiles_n = tiles(params, config)
    values = [
        ("kM", params.m, "rows of A and C"),
        ("kN", params.n, "columns of C, rows of B"),
        ("kTilesM", tiles_m, "C's block tiles along M"),
        ("kTilesN", tiles_n, "C's block tiles along N"),
        ("kChunks", ceil_div(params.k, BLOCK_K), "chunks of K a block walks"),
        ("kStages", config.stages, "chunks in the shared-memory ring"),
        ("kGroupM", config.group_m, "tile rows per group of the blocks' order"),
        ("kThreads", THREADS, "threads per block: the consumer warpgroups and the producer"),
    ]
    lines = constant_lines("wgmma_spec", values)
    for operand, (leading, stride) in (
        ("A", A_DESCRIPTOR_OFFSETS[params.a_layout]),
        ("B", B_DESCRIPTOR_OFFSETS[params.b_layout]),
    ):
        lines += [
            f"// byte offsets of {operand}'s wgmma descriptors: leading dimension, 8-row groups",
            f"constexpr unsigned k{operand}LeadingBytes = {leading};",
            f"constexpr unsigned k{operand}StrideBytes = {stride};",
        ]
    lines += variant_macros(params, ": M-major tiles (TransA)", ": N-major tiles (TransB)")
    lines += ["// the kernel's entry point", f"#define SPIO_MATMUL_WGMMA_KERNEL {KERNEL_NAME}"]
    return "\n".join(lines) + "\n"


def generate_types(params: MatmulParams, config: WgmmaConfig) -> str:
    """Return the Hopper kernel's types.h for params and config (deterministic)."""
    check_config(params, config)
    return generate(_specs(params, config)) + _constants(params, config)
