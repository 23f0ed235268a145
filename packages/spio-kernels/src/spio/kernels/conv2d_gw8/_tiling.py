"""What the passes' specs share: launch geometry, config field checks and spec arithmetic."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from .params import Conv2dGw8Params

#: Shared memory a block may use: two blocks per SM fit on sm_80 and sm_90.
MAX_SHARED_MEM = 100 * 1024

#: Pixels of one 16-row tensor-core operand: fprop's A fragment, wgrad's K step.
FRAGMENT_PIXELS = 16
#: The block widths below FRAGMENT_PIXELS: a fragment is block_q columns of each of
#: FRAGMENT_PIXELS / block_q images side by side (two at 8, four at 4), for images at most
#: block_q wide, so that no fragment is mostly zeros.
NARROW_BLOCK_Q = (8, 4)

Config = TypeVar("Config")


@dataclass(frozen=True)
class LaunchGeometry:
    """grid (blocks, 1-D), block (threads) and dynamic shared memory (bytes) of a launch."""

    grid: int
    block: int
    shared_mem: int


def spread_over_sms(kernel: Any, geometry: LaunchGeometry) -> LaunchGeometry:
    """Return geometry with the dynamic shared memory that spreads a grid of at most one
    wave over every SM (spio.jit.spread_shared_mem); larger grids keep theirs."""
    import spio.jit

    shared_mem = spio.jit.spread_shared_mem(
        kernel, geometry.grid, geometry.block, geometry.shared_mem
    )
    return LaunchGeometry(geometry.grid, geometry.block, shared_mem)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


#: Grids of several waves whose blocks fill less than this share of the block slots they
#: occupy (blocks that fit on the GPU at once x waves) take a shorter walk that fills at
#: least this share, if one does: more, smaller blocks even out the last wave. From H200
#: runs of fprop and dgrad (one process, alternating; fill before -> after): 192x64x64x64
#: 0.73 -> 0.97, 62.4 -> 55.1 us; 160x64x64x64 0.61 -> 0.97, 57.0 -> 48.9; 300x64x64x64
#: 0.76 -> 0.91, 95.6 -> 86.5; 200x64x56x56 0.76 -> 0.88, 56.8 -> 51.5; 96x64x64x64 0.73 ->
#: 0.97, 34.6 -> 31.4. A shorter walk that reached only 0.81 lost (100x128x32x32, from 0.61:
#: 22.1 -> 23.1 us), and at N = 128 and 256 (0.97 as they are) the longer walks stay.
WAVE_FILL = 0.85


def grid_slots(kernel: Any, geometry: LaunchGeometry) -> int:
    """Blocks of the launch geometry that fit on the kernel's GPU at once."""
    import spio.jit

    sm_count = spio.jit.device_info(kernel.device).sm_count
    return sm_count * kernel.max_active_blocks_per_sm(geometry.block, geometry.shared_mem)


def wave_fill(blocks: int, slots: int) -> float:
    """The share of the block slots (blocks that fit at once x waves) a grid of `blocks`
    fills; 1.0 for a grid of one wave at most, which spreads over every SM instead
    (spread_over_sms)."""
    if blocks <= slots:
        return 1.0
    return blocks / (ceil_div(blocks, slots) * slots)


def balance_waves(
    config: Config, shorter: Callable[[Config], Config | None], fill: Callable[[Config], float]
) -> Config:
    """Return config, or where its waves fill less than WAVE_FILL of the GPU (fill(config)),
    the one of its ever shorter walks (shorter(config), shorter(shorter(config)), ... until
    None) that fills them best, if that reaches WAVE_FILL; of equals the longest walk (the
    fewest halo rows)."""
    if fill(config) >= WAVE_FILL:
        return config
    best, best_fill = config, 0.0
    candidate = shorter(config)
    while candidate is not None:
        if fill(candidate) > best_fill:
            best, best_fill = candidate, fill(candidate)
        candidate = shorter(candidate)
    return best if best_fill >= WAVE_FILL else config


def next_power_of_two(value: int) -> int:
    return 1 << max(0, value - 1).bit_length()


def check_positive_fields(config: Any, names: Iterable[str]) -> None:
    """Raise TypeError / ValueError naming the first field of config that is not an int >= 1."""
    for name in names:
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {value!r}")
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")


def check_groups_and_smem(params: Conv2dGw8Params, block_g: int, smem: int) -> None:
    """Raise ValueError when block_g does not divide the groups or smem exceeds the limit."""
    if params.groups % block_g != 0:
        raise ValueError(f"block_g = {block_g} must divide the groups c / 8 = {params.groups}")
    if smem > MAX_SHARED_MEM:
        raise ValueError(f"config needs {smem} bytes of shared memory, more than {MAX_SHARED_MEM}")


def fits(check: Callable[[Conv2dGw8Params, Config], None], params: Any, config: Config) -> bool:
    """Return whether check(params, config) accepts config (raises nothing)."""
    try:
        check(params, config)
    except ValueError:
        return False
    return True


def replaced_if_fits(
    check: Callable[[Conv2dGw8Params, Config], None], params: Any, config: Config, **fields: Any
) -> Config | None:
    """config with fields replaced, or None where the config rules or check(params, ...)
    refuse it (too many warps, registers or shared memory)."""
    try:
        replaced = dataclasses.replace(config, **fields)  # type: ignore[type-var]
    except ValueError:
        return None
    return replaced if fits(check, params, replaced) else None


def first_filling(
    candidates: Iterable[Config],
    total_warps: Callable[[Config], int],
    min_warps: Callable[[Config], int],
) -> Config:
    """Return the first candidate whose grid holds the warps min_warps(candidate) asks
    (total_warps(candidate)), else the candidate with the most warps (the first of equals);
    candidates is non-empty."""
    configs = list(candidates)
    for config in configs:
        if total_warps(config) >= min_warps(config):
            return config
    return max(configs, key=total_warps)


def constants_block(spec_module: str, values: Iterable[tuple[str, int, str]]) -> list[str]:
    """Return the generated header's lines of `constexpr int` kernel parameters, each with
    the comment that says what it is."""
    lines = ["", f"// Kernel parameters (spio.kernels.conv2d_gw8.{spec_module})."]
    for name, value, why in values:
        lines += [f"// {why}", f"constexpr int {name} = {value};"]
    return lines


def fragment_images(block_q: int) -> int:
    """Images side by side in each 16-pixel fragment of a block block_q columns wide:
    FRAGMENT_PIXELS / block_q below FRAGMENT_PIXELS (NARROW_BLOCK_Q), else 1. (Arithmetic
    only, so that it runs on columns of configs too.)"""
    return ceil_div(FRAGMENT_PIXELS, block_q)


def images_per_fragment(params: Conv2dGw8Params) -> int:
    """The images side by side the heuristics' tiles put in each 16-pixel fragment, in every
    pass: 4 (block_q = 4) where the images are at most 4 wide and there are three or more
    of them, 2 (block_q = 8) where they are at most 8 wide and there are two or more, else 1.
    The specs' default_config docs hold the sweeps behind it."""
    paired, four = NARROW_BLOCK_Q
    if params.q <= four and params.n >= 3:
        return FRAGMENT_PIXELS // four
    if params.q <= paired and params.n >= 2:
        return FRAGMENT_PIXELS // paired
    return 1
