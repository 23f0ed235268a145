"""Spreading a grid of at most one wave over every multiprocessor.

When a grid fits on the GPU at once, the kernel's occupancy (how many of its blocks fit on
one SM) leaves room the grid does not need. Measured on an H200 with the conv2d gw8
kernels, 512-block grids at an occupancy of 5 run 7-14% faster when at most 4 blocks fit
on an SM, which is what the blocks per SM of the grid itself come to (64x128x32x32 fprop
11.4 -> 10.1 us, 128x256x14x14 fprop 10.4 -> 8.9 us); grids of several waves gain
nothing. The way to cap occupancy from the host is dynamic shared memory: a block that
asks for a fraction 1 / k of an SM's shared memory leaves room for k blocks at most.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from spio.jit import _driver

if TYPE_CHECKING:
    from spio.jit._module import Kernel


def spread_shared_mem(
    kernel: Kernel, blocks: int, block: int | Sequence[int], shared_mem: int = 0
) -> int:
    """Return the dynamic shared memory with which `blocks` blocks spread over every SM.

    That is shared_mem itself when the grid fills every SM at the kernel's occupancy (one
    wave or more) or when that occupancy is already no more than ceil(blocks / SMs); else
    the padding at which at most ceil(blocks / SMs) blocks fit on one SM. The kernel only
    sees more shared memory than it uses; the launch opts in automatically past 48 KiB.

    Args:
        kernel: the Kernel to launch.
        blocks: the grid's block count.
        block: threads per block (an int or 1 to 3 ints), as for launch.
        shared_mem: the dynamic shared memory the kernel needs per block.
    """
    if isinstance(blocks, bool) or not isinstance(blocks, int) or blocks < 1:
        raise ValueError(f"blocks must be a positive int, got {blocks!r}")
    info = _driver.device_info(kernel.device)
    natural = kernel.max_active_blocks_per_sm(block, shared_mem)
    wanted = -(-blocks // info.sm_count)
    if natural <= wanted:
        return shared_mem
    attributes = kernel.attributes
    static = attributes.static_shared_mem
    padded = info.max_shared_per_sm // wanted - info.reserved_shared_per_block - static
    padded = min(padded, info.max_shared_per_block_optin - static)
    if padded <= shared_mem:
        return shared_mem
    if padded > attributes.max_dynamic_shared_mem:
        kernel.set_max_dynamic_shared_mem(padded)
    # The driver has the last word (its shared-memory granularity, the carveouts it offers).
    if kernel.max_active_blocks_per_sm(block, padded) != wanted:
        return shared_mem
    return padded
