"""How many blocks of a kernel a Hopper SM holds at once, from its registers, threads and shared
memory (the CUDA occupancy calculator's limits), for the tools that read ptxas's reports."""

from __future__ import annotations

SM_REGISTERS = 65536
REGISTER_UNIT = 256  # registers are allocated to a warp in units of 256
SM_THREADS = 2048
SM_BLOCKS = 32
SM_SHARED = 228 * 1024
BLOCK_RESERVED_SHARED = 1024


def blocks_per_sm(registers: int, threads: int, shared_mem: int = 0) -> int:
    """The blocks of a kernel that fit on a Hopper SM at once."""
    warps = -(-threads // 32)
    per_warp = -(-registers * 32 // REGISTER_UNIT) * REGISTER_UNIT
    by_registers = SM_REGISTERS // (per_warp * warps)
    by_shared = SM_SHARED // (shared_mem + BLOCK_RESERVED_SHARED)
    return min(by_registers, by_shared, SM_THREADS // threads, SM_BLOCKS)
