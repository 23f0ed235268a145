"""The tensor-core matmul's configuration, its space, launch geometry and typed dims.

A block owns a `block_m` x `block_n` tile of C and walks K in chunks of `block_k`, through a
ring of `stages` shared-memory chunks of A and B filled with 16-byte cp.async (`stages - 1`
chunks in flight while one is multiplied). Its warps split the tile into `warp_m` x `warp_n`
warp tiles, each accumulated in float32 registers by m16n8k16 mma.sync from ldmatrix'ed
fragments. Shared rows are XOR-swizzled (spio::SwizzleIndex, TMA's 32/64/128-byte pattern)
so that ldmatrix reads them without bank conflicts. Blocks run over C's tiles in groups of
`group_m` tile rows, so that the tiles running at once share rows of A and columns of B in
L2. The epilogue stages C's tile in shared memory and writes it in whole 16-byte vectors.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from spio.dims import CompoundIndex, Dims, Fold, Fragment, Spec, Swizzle, Tensor, dtype, generate

from .params import VECTOR, MatmulParams

KERNEL_NAME = "spio_matmul"
WARP_SIZE = 32
#: The mma.sync tile: m16n8k16, so warp tiles are multiples of 16 rows and 8 columns, and
#: chunks of K multiples of 16.
MMA_M, MMA_N, MMA_K = 16, 8, 16
MAX_WARPS = 16
#: float32 accumulators per thread (warp_m * warp_n / 32) the space allows: more spill.
MAX_ACC_REGISTERS = 128
#: Shared memory a block may use on every supported GPU (sm_86 and sm_89 opt in to 99 KiB);
#: configs past it run on GPUs that allow them (sm_80: 163 KiB, sm_90: 227 KiB), which the
#: launch checks against the device.
PORTABLE_SHARED_MEM = 99 * 1024
MAX_SHARED_MEM = 227 * 1024
#: 16-byte cells per swizzled shared row at most: 128 bytes, one bank line.
MAX_SWIZZLE_CELLS = 8

BLOCK_MN_VALUES = (32, 64, 128, 256)
BLOCK_K_VALUES = (32, 64)
WARP_MN_VALUES = (16, 32, 64)
STAGES_VALUES = (2, 3, 4, 5, 6)
GROUP_M_VALUES = (1, 4, 8, 16)

_ELEMENT_BYTES = 2
_CELL_BYTES = 16


def check_choices(config: object, fields: Iterable[tuple[str, tuple[int, ...]]]) -> None:
    """Raise TypeError / ValueError naming the first (name, allowed) field of config whose
    value is not an int or not one of the allowed values."""
    for name, allowed in fields:
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {value!r}")
        if value not in allowed:
            raise ValueError(f"{name} must be one of {allowed}, got {value}")


@dataclass(frozen=True)
class MatmulConfig:
    """Tiling of the matmul kernel; see the module doc for what each field means.

    block_m, block_n: C's tile per block (one of BLOCK_MN_VALUES); block_k: K per
    shared-memory chunk (32 or 64); warp_m, warp_n: each warp's part of the tile (16, 32 or
    64; they divide block_m and block_n); stages: chunks in the shared-memory ring (2 ... 6);
    group_m: C's tile rows per group of the blocks' order (1, 4, 8 or 16).
    """

    block_m: int = 128
    block_n: int = 128
    block_k: int = 32
    warp_m: int = 64
    warp_n: int = 64
    stages: int = 4
    group_m: int = 8

    def __post_init__(self) -> None:
        fields = (
            ("block_m", BLOCK_MN_VALUES),
            ("block_n", BLOCK_MN_VALUES),
            ("block_k", BLOCK_K_VALUES),
            ("warp_m", WARP_MN_VALUES),
            ("warp_n", WARP_MN_VALUES),
            ("stages", STAGES_VALUES),
            ("group_m", GROUP_M_VALUES),
        )
        check_choices(self, fields)
        for warp, block in (("warp_m", "block_m"), ("warp_n", "block_n")):
            if getattr(self, block) % getattr(self, warp) != 0:
                raise ValueError(
                    f"{warp} = {getattr(self, warp)} must divide {block} = {getattr(self, block)}"
                )
        if self.warps > MAX_WARPS:
            raise ValueError(
                f"warps = (block_m / warp_m) * (block_n / warp_n) = {self.warps} must be at "
                f"most {MAX_WARPS}"
            )
        if self.acc_registers > MAX_ACC_REGISTERS:
            raise ValueError(
                f"warp_m * warp_n / 32 = {self.acc_registers} float32 accumulators per thread "
                f"must be at most {MAX_ACC_REGISTERS}"
            )
        if self.shared_mem > MAX_SHARED_MEM:
            raise ValueError(
                f"config needs {self.shared_mem} bytes of shared memory, more than any GPU "
                f"allows ({MAX_SHARED_MEM})"
            )

    @property
    def warps_m(self) -> int:
        return self.block_m // self.warp_m

    @property
    def warps_n(self) -> int:
        return self.block_n // self.warp_n

    @property
    def warps(self) -> int:
        return self.warps_m * self.warps_n

    @property
    def threads(self) -> int:
        return WARP_SIZE * self.warps

    @property
    def acc_registers(self) -> int:
        """float32 accumulators each thread holds."""
        return self.warp_m * self.warp_n // WARP_SIZE

    @property
    def shared_mem(self) -> int:
        """Dynamic shared memory in bytes: the ring of A and B chunks, or C's staged tile
        (which reuses it) where that is larger."""
        ring = self.stages * (self.block_m + self.block_n) * self.block_k * _ELEMENT_BYTES
        return max(ring, self.block_m * self.block_n * _ELEMENT_BYTES)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def tiles(params: MatmulParams, config: MatmulConfig) -> tuple[int, int]:
    """C's tiles along M and N."""
    return ceil_div(params.m, config.block_m), ceil_div(params.n, config.block_n)


def grid_blocks(params: MatmulParams, config: MatmulConfig) -> int:
    tiles_m, tiles_n = tiles(params, config)
    return tiles_m * tiles_n


@dataclass(frozen=True)
class LaunchGeometry:
    """grid (blocks, 1-D), block (threads) and dynamic shared memory (bytes) of a launch."""

    grid: int
    block: int
    shared_mem: int


def launch_geometry(params: MatmulParams, config: MatmulConfig) -> LaunchGeometry:
    return LaunchGeometry(grid_blocks(params, config), config.threads, config.shared_mem)


def check_config(params: MatmulParams, config: MatmulConfig) -> None:
    """Raise TypeError unless params and config are a MatmulParams and a MatmulConfig (their
    fields check themselves on construction)."""
    if not isinstance(params, MatmulParams):
        raise TypeError(f"params must be a MatmulParams, got {type(params).__name__}")
    if not isinstance(config, MatmulConfig):
        raise TypeError(f"config must be a MatmulConfig, got {type(config).__name__}")


def _buildable(fields: tuple[int, ...]) -> MatmulConfig | None:
    try:
        return MatmulConfig(*fields)
    except ValueError:
        return None


def _fits_problem(params: MatmulParams, config: MatmulConfig) -> bool:
    """Whether the tile is no more than twice the problem along M and N (a larger tile
    multiplies mostly zeros) and the chunk no more than twice K."""
    return (
        config.block_m <= max(BLOCK_MN_VALUES[0], 2 * params.m)
        and config.block_n <= max(BLOCK_MN_VALUES[0], 2 * params.n)
        and config.block_k <= max(BLOCK_K_VALUES[0], 2 * params.k)
    )


def config_space(
    params: MatmulParams, max_shared_mem: int = PORTABLE_SHARED_MEM
) -> list[MatmulConfig]:
    """Every valid config for params whose shared memory fits max_shared_mem (by default what
    every supported GPU allows), in a fixed order."""
    check_config(params, MatmulConfig())
    space = []
    for fields in itertools.product(
        BLOCK_MN_VALUES,
        BLOCK_MN_VALUES,
        BLOCK_K_VALUES,
        WARP_MN_VALUES,
        WARP_MN_VALUES,
        STAGES_VALUES,
        GROUP_M_VALUES,
    ):
        config = _buildable(fields)
        if config is None or config.shared_mem > max_shared_mem:
            continue
        if _fits_problem(params, config):
            space.append(config)
    return space


#: The heuristic's tiles, largest first: (block_m, block_n, warp_m, warp_n). Large tiles
#: read A and B fewest times; smaller ones fill the SMs where C has few large tiles.
_DEFAULT_TILES = (
    (128, 256, 64, 64),
    (256, 128, 64, 64),
    (128, 128, 64, 64),
    (128, 64, 64, 32),
    (64, 128, 32, 64),
    (64, 64, 32, 32),
    (32, 64, 16, 32),
    (32, 32, 16, 16),
)


#: The heuristic's chunks and ring depths, in order of preference: (block_k, stages). On an
#: H100 at 8192^3 (128 x 256 and 256 x 128 tiles, twenty-eighth session) chunks of 64 in 3 or
#: 4 stages ran 389-401 TFLOP/s, chunks of 32 in 4 stages 374-384, in 3 or 5 stages 341-375.
_DEFAULT_RINGS = ((64, 3), (32, 4), (32, 3), (32, 2))


def default_config(
    params: MatmulParams, sm_count: int = 132, max_shared_mem: int = PORTABLE_SHARED_MEM
) -> MatmulConfig:
    """The heuristic's config: the largest tile of _DEFAULT_TILES of which C has at least one
    per SM (else the smallest), with the first chunk and ring depth of _DEFAULT_RINGS that
    fits max_shared_mem (by default what every supported GPU allows a block)."""
    check_config(params, MatmulConfig())
    chosen = _DEFAULT_TILES[-1]
    for tile in _DEFAULT_TILES:
        block_m, block_n = tile[:2]
        if ceil_div(params.m, block_m) * ceil_div(params.n, block_n) >= sm_count:
            chosen = tile
            break
    block_m, block_n, warp_m, warp_n = chosen
    for block_k, stages in _DEFAULT_RINGS:
        config = MatmulConfig(block_m, block_n, block_k, warp_m, warp_n, stages)
        if config.shared_mem <= max_shared_mem:
            return config
    raise ValueError(
        f"no default config fits {max_shared_mem} bytes of shared memory; the smallest needs "
        f"{MatmulConfig(block_m, block_n, 32, warp_m, warp_n, 2).shared_mem}"
    )


def swizzle_cells(row_bytes: int) -> int:
    """16-byte cells per swizzled shared row for rows of row_bytes: the whole row up to one
    bank line (128 bytes); wider rows are cut into slabs of that."""
    return min(MAX_SWIZZLE_CELLS, row_bytes // _CELL_BYTES)


def _operand_specs(
    operand: str, dim: str, size: int, block: int, k_rows: bool, k: int, config: MatmulConfig
) -> list[Spec]:
    """One operand's global matrix, ring stages, their swizzle and the chunk copy's index:
    `operand` "a" (dim "i", the block's `block` rows of M) or "b" (dim "j", of N).

    Stored as rows of K (`k_rows`: A as K x M, B as K x N), a chunk is block_k rows of K,
    each the block's elements of `dim`, cut into slabs of one swizzled bank line (with the
    fold of the slabs), 16 rows of K per swizzle group: what the .trans fragment loads read.
    Stored as rows of `dim` (A as M x K, B as N x K), a chunk is the block's rows, each
    block_k elements of K, in swizzle groups of a fragment's rows: 16 for A, 8 for B.
    """
    name = operand.upper()
    vectors = f"{dim}8"
    if k_rows:
        cells = swizzle_cells(block * _ELEMENT_BYTES)
        return [
            Fold(f"{operand}_slab", dim, VECTOR * cells),
            Tensor(name, dtype.uint4, Dims(k=k, **{vectors: size // VECTOR}), constant=True),
            Tensor(
                f"Smem{name}",
                dtype.uint4,
                Dims(
                    stage=config.stages,
                    **{
                        f"{operand}_slab": block // (VECTOR * cells),
                        "k16": config.block_k // MMA_K,
                        f"{operand}_swizzle": MMA_K * cells,
                    },
                ),
            ),
            Swizzle(f"Swizzle{name}", "k", vectors, f"{operand}_swizzle", cells=cells),
            CompoundIndex(f"{name}LoadIndex", Dims(k=config.block_k, **{vectors: block // VECTOR})),
        ]
    cells = swizzle_cells(config.block_k * _ELEMENT_BYTES)
    group = MMA_M if operand == "a" else MMA_N
    return [
        Tensor(name, dtype.uint4, Dims(**{dim: size}, k8=k // VECTOR), constant=True),
        Tensor(
            f"Smem{name}",
            dtype.uint4,
            Dims(
                stage=config.stages,
                **{f"{dim}{group}": block // group, f"{operand}_swizzle": group * cells},
            ),
        ),
        Swizzle(f"Swizzle{name}", dim, "k8", f"{operand}_swizzle", cells=cells),
        CompoundIndex(f"{name}LoadIndex", Dims(**{dim: block}, k8=config.block_k // VECTOR)),
    ]


def bias_specs(params: MatmulParams) -> list[Spec]:
    """The bias vector (params.bias): n elements of C's dtype, added to every row of C."""
    if not params.bias:
        return []
    element = dtype.half if params.dtype == "float16" else dtype.bfloat16
    return [Tensor("Bias", element, Dims(j=params.n), constant=True)]


def variant_macros(params: MatmulParams, trans_a: str, trans_b: str) -> list[str]:
    """The generated header's macros for what changes the kernels' code, not only its values:
    the operands' layouts (each with what it means for the kernel) and the bias."""
    lines = []
    if params.a_layout == "km":
        lines += [f"// A is K x M{trans_a}", "#define SPIO_MATMUL_A_KM 1"]
    if params.b_layout == "kn":
        lines += [f"// B is K x N{trans_b}", "#define SPIO_MATMUL_B_KN 1"]
    if params.bias:
        lines += ["// C = A @ B + Bias, the bias added to every row", "#define SPIO_MATMUL_BIAS 1"]
    return lines


def _specs(params: MatmulParams, config: MatmulConfig) -> list[Spec]:
    element = dtype.half if params.dtype == "float16" else dtype.bfloat16
    c_cells = swizzle_cells(config.block_n * _ELEMENT_BYTES)
    return [
        # Block and warp tiles of C (I rows, J columns), and the chunks of K.
        Fold("block_i", "i", config.block_m),
        Fold("block_j", "j", config.block_n),
        Fold("warp_i", "i", config.warp_m),
        Fold("warp_j", "j", config.warp_n),
        Fold("chunk", "k", config.block_k),
        Fold("c_slab", "j", VECTOR * c_cells),
        CompoundIndex(
            "ThreadIndex",
            Dims(warp_i=config.warps_m, warp_j=config.warps_n, lane=WARP_SIZE),
            init="threadIdx.x",
        ),
        # Global memory in 16-byte vectors (A and B as their layouts say, C is I x J); the
        # ring of chunks in shared memory, swizzled; C's tile staged for the stores.
        *_operand_specs(
            "a", "i", params.m, config.block_m, params.a_layout == "km", params.k, config
        ),
        *_operand_specs(
            "b", "j", params.n, config.block_n, params.b_layout == "kn", params.k, config
        ),
        Tensor("C", dtype.uint4, Dims(i=params.m, j8=params.n // VECTOR)),
        *bias_specs(params),
        Tensor(
            "SmemC",
            dtype.uint4,
            Dims(
                c_slab=config.block_n // (VECTOR * c_cells),
                i8=config.block_m // VECTOR,
                c_swizzle=VECTOR * c_cells,
            ),
        ),
        Swizzle("SwizzleC", "i", "j8", "c_swizzle", cells=c_cells),
        CompoundIndex("CStoreIndex", Dims(i=config.block_m, j8=config.block_n // VECTOR)),
        # Tensor cores: m16n8k16 fragments; a warp's tile of accumulators, and per 16 of K
        # its column of A fragments and row of B fragments.
        Fragment("AFrag", "m16n8k16.a", element, "i", "k"),
        Fragment("BFrag", "m16n8k16.b", element, "k", "j"),
        Fragment("CFrag", "m16n8k16.c", dtype.float, "i", "j"),
        Tensor("ATile", "AFrag", Dims(i16=config.warp_m // MMA_M)),
        Tensor("BTile", "BFrag", Dims(j8=config.warp_n // MMA_N)),
        Tensor("CTile", "CFrag", Dims(i16=config.warp_m // MMA_M, j8=config.warp_n // MMA_N)),
    ]


def _constants(params: MatmulParams, config: MatmulConfig) -> str:
    tiles_m, tiles_n = tiles(params, config)
    values = [
        ("kM", params.m, "rows of A and C"),
        ("kN", params.n, "columns of B and C"),
        ("kK", params.k, "columns of A, rows of B: the reduction"),
        ("kTilesM", tiles_m, "C's block tiles along M"),
        ("kTilesN", tiles_n, "C's block tiles along N"),
        ("kChunks", ceil_div(params.k, config.block_k), "chunks of K a block walks"),
        ("kStages", config.stages, "chunks in the shared-memory ring"),
        ("kGroupM", config.group_m, "tile rows per group of the blocks' order"),
        ("kThreads", config.threads, "threads per block"),
    ]
    lines = constant_lines("spec", values)
    # Macros, not constants: the layouts' code differs in types, not only values.
    lines += variant_macros(params, " (else M x K)", " (else N x K, B transposed)")
    lines += ["// the kernel's entry point", f"#define SPIO_MATMUL_KERNEL {KERNEL_NAME}"]
    return "\n".join(lines) + "\n"


def constant_lines(module: str, values: list[tuple[str, int, str]]) -> list[str]:
    """The generated header's `constexpr int` kernel parameters (name, value, what it is),
    each after its comment, under a line naming the spec module that wrote them."""
    lines = ["", f"// Kernel parameters (spio.kernels.matmul.{module})."]
    for name, value, why in values:
        lines += [f"// {why}", f"constexpr int {name} = {value};"]
    return lines


def generate_types(params: MatmulParams, config: MatmulConfig) -> str:
    """Return the kernel's types.h for params and config (deterministic: same in, same bytes)."""
    check_config(params, config)
    return generate(_specs(params, config)) + _constants(params, config)
