"""The numbers a latency model sees for one config of one layer.

Three kinds, all from what is known before anything is compiled: the layer (its sizes and
the bytes the pass must move), the config's own fields, and what the kernel's spec derives
from both: the grid, its waves on the GPU, the work and bytes per block, the re-read halo
and, for wgrad, the partial sums. The waves use an occupancy bounded by threads and shared
memory only (registers are known after compiling); trees learn the rest from the fields.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from spio.kernels.conv2d_gw8 import wgrad_spec
from spio.kernels.conv2d_gw8.params import Conv2dGw8Params

from ._passes import kernel_pass


@dataclass(frozen=True)
class GpuLimits:
    """What the waves of a grid depend on. The defaults are an H100/H200 (sm_90)."""

    sm_count: int = 132
    max_threads_per_sm: int = 2048
    max_blocks_per_sm: int = 32
    shared_per_sm: int = 228 * 1024
    reserved_shared_per_block: int = 1024


_LAYER = (
    "n", "c", "h", "w", "r", "s", "p", "q", "groups", "pad_rows", "pad_cols", "bf16",
    "compulsory_mb",
)  # fmt: skip
_DERIVED = (
    "blocks", "warps_per_block", "shared_kb", "blocks_per_sm", "waves", "last_wave_fill",
    "resident_warps_per_sm", "outputs_per_block", "kb_per_block", "halo_cols", "halo_rows",
    "partials_share",
)  # fmt: skip


def feature_names(pass_name: str) -> tuple[str, ...]:
    """The names of the feature columns of pass_name, in order."""
    fields = tuple(f.name for f in dataclasses.fields(kernel_pass(pass_name).config_type))
    return _LAYER + fields + _DERIVED


def _layer_features(params: Conv2dGw8Params, pass_name: str) -> list[float]:
    pads = params.padding
    return [
        params.n,
        params.c,
        params.h,
        params.w,
        params.r,
        params.s,
        params.p,
        params.q,
        params.groups,
        pads[0] + pads[1],
        pads[2] + pads[3],
        float(params.dtype == "bfloat16"),
        params.compulsory_bytes(pass_name) / 1e6,  # type: ignore[arg-type]
    ]


def _derived_features(
    params: Conv2dGw8Params, pass_name: str, config: Any, limits: GpuLimits
) -> list[float]:
    geometry = kernel_pass(pass_name).launch_geometry(params, config)
    blocks, threads, shared = geometry.grid, geometry.block, geometry.shared_mem
    per_sm = min(
        limits.max_blocks_per_sm,
        limits.max_threads_per_sm // threads,
        limits.shared_per_sm // (shared + limits.reserved_shared_per_block),
    )
    slots = max(1, per_sm) * limits.sm_count
    waves = blocks / slots
    last_wave_fill = waves - math.floor(waves) if waves % 1 else 1.0
    resident_blocks = min(blocks, slots) / limits.sm_count
    outputs = params.n * params.p * params.q * params.groups
    block_q, block_p = config.block_q, config.block_p
    partials_share = 0.0
    if pass_name == "wgrad":
        partials_share = wgrad_spec.workspace_bytes(params, config) / params.compulsory_bytes(
            "wgrad"
        )
    return [
        blocks,
        threads / 32,
        shared / 1024,
        per_sm,
        waves,
        last_wave_fill,
        resident_blocks * threads / 32,
        outputs / blocks,
        params.compulsory_bytes(pass_name) / blocks / 1024,  # type: ignore[arg-type]
        (block_q + params.s - 1) / block_q,
        (block_p + params.r - 1) / block_p,
        partials_share,
    ]


def feature_matrix(
    pass_name: str,
    params: Conv2dGw8Params,
    configs: Sequence[Any],
    limits: GpuLimits | None = None,
) -> np.ndarray:
    """Return the features of each config of one layer: a float32 array, a row per config and
    a column per feature_names(pass_name)."""
    limits = limits or GpuLimits()
    layer = _layer_features(params, pass_name)
    rows = [
        layer
        + [float(v) for v in dataclasses.astuple(config)]
        + _derived_features(params, pass_name, config, limits)
        for config in configs
    ]
    width = len(feature_names(pass_name))
    return np.asarray(rows, dtype=np.float32).reshape(len(rows), width)
