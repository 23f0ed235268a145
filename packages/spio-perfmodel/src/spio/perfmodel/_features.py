"""The numbers a latency model sees for one config of one layer.

Three kinds, all from what is known before anything is compiled: the layer (its sizes and
the bytes the pass must move), the config's own fields, and what the kernel's spec derives
from both: the grid, its waves on the GPU, the work and bytes per block, the re-read halo
and, for wgrad, the partial sums. The waves use an occupancy bounded by threads and shared
memory only (registers are known after compiling); trees learn the rest from the fields.
Everything is computed on columns of configs at once (_space.Columns).

A model may learn from rows that differ from what it predicts: tiles timed as they are
beside tiles timed as the launcher runs them, or another GPU's rows beside its own. Each
such difference is one more column, a flag (FLAG_FEATURES), 1 or 0 per row; the model
predicts with each flag at PREDICTED_FLAGS (launched tiles, its own GPU). The many rows
teach it the layers and tiles, the flags what sets the kinds of rows apart.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from spio.kernels.conv2d_gw8 import wgrad_spec
from spio.kernels.conv2d_gw8.params import Conv2dGw8Params

from ._passes import kernel_pass
from ._space import Columns, grid_blocks, shared_mem, space_fields


@dataclass(frozen=True)
class GpuLimits:
    """What the waves of a grid depend on. The defaults are an H100/H200 (sm_90)."""

    sm_count: int = 132
    max_threads_per_sm: int = 2048
    max_blocks_per_sm: int = 32
    shared_per_sm: int = 228 * 1024
    reserved_shared_per_block: int = 1024
    #: Whether the GPU has TMA (sm_90 and newer), where wgrad's heuristic tile differs
    #: (wgrad_tma_tile.tma_tile); no feature depends on it. (Models saved before it were all
    #: trained on H100s and H200s.)
    tma: bool = True

    def __post_init__(self) -> None:
        # Limits come from the command line and from model files: a count below 1 (0 SMs)
        # would divide by zero in the waves, or train a model of a GPU that cannot exist.
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.name == "tma":
                if not isinstance(value, bool):
                    raise TypeError(f"GpuLimits.tma must be a bool, got {value!r}")
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(
                    f"GpuLimits.{field.name} must be an int, got {value!r} ({type(value).__name__})"
                )
            low = 0 if field.name == "reserved_shared_per_block" else 1
            if value < low:
                raise ValueError(f"GpuLimits.{field.name} must be >= {low}, got {value}")

    @classmethod
    def of_device(cls, device: int = 0) -> GpuLimits:
        """The limits of a CUDA device, from spio.jit.device_info (initializes the driver).

        (Resident blocks per SM: 32 from sm_80 on, which is all spio-jit compiles for.)
        """
        import spio.jit

        info = spio.jit.device_info(device)
        return cls(
            sm_count=info.sm_count,
            max_threads_per_sm=info.max_threads_per_sm,
            shared_per_sm=info.max_shared_per_sm,
            reserved_shared_per_block=info.reserved_shared_per_block,
            tma=info.compute_capability >= (9, 0),
        )


_LAYER = (
    "n", "c", "h", "w", "r", "s", "p", "q", "groups", "pad_rows", "pad_cols", "bf16",
    "compulsory_mb",
)  # fmt: skip
_DERIVED = (
    "blocks", "warps_per_block", "shared_kb", "blocks_per_sm", "waves", "last_wave_fill",
    "resident_warps_per_sm", "outputs_per_block", "kb_per_block", "halo_cols", "halo_rows",
    "partials_share",
)  # fmt: skip


#: The flag columns, in the order a model has them (each only where its rows differ so):
#: "launched", 1 for a tile timed as the launcher runs it (_data.ConfigTime.launch: wgrad's
#: walk and producer warps), 0 for a tile as it is; "other_gpu", 1 for a row of another GPU
#: than the model's, 0 for its own.
FLAG_FEATURES = ("launched", "other_gpu")
#: The value of each flag when a model predicts: tiles as launched, on its own GPU.
PREDICTED_FLAGS = {"launched": 1.0, "other_gpu": 0.0}


def feature_names(pass_name: str, flags: Sequence[str] = ()) -> tuple[str, ...]:
    """The names of the feature columns of pass_name, in order, with the flag columns among
    FLAG_FEATURES that flags names last (ValueError for another name)."""
    unknown = sorted(set(flags) - set(FLAG_FEATURES))
    if unknown:
        raise ValueError(f"flags must be among {FLAG_FEATURES}, got {unknown}")
    names = _LAYER + space_fields(kernel_pass(pass_name).config_type) + _DERIVED
    return names + tuple(flag for flag in FLAG_FEATURES if flag in flags)


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
    pass_name: str, params: Conv2dGw8Params, columns: Columns, limits: GpuLimits
) -> list[np.ndarray]:
    blocks = grid_blocks(pass_name, params, columns).astype(np.float64)
    threads = np.asarray(columns.threads, dtype=np.int64)
    shared = shared_mem(pass_name, params, columns)
    per_sm = np.minimum(
        np.minimum(limits.max_blocks_per_sm, limits.max_threads_per_sm // threads),
        limits.shared_per_sm // (shared + limits.reserved_shared_per_block),
    )
    slots = np.maximum(per_sm, 1) * limits.sm_count
    waves = blocks / slots
    fraction = waves - np.floor(waves)
    last_wave_fill = np.where(fraction > 0, fraction, 1.0)
    resident_blocks = np.minimum(blocks, slots) / limits.sm_count
    outputs = params.n * params.p * params.q * params.groups
    partials_share = np.zeros(len(columns))
    if pass_name == "wgrad":
        partials = np.asarray(wgrad_spec.workspace_bytes(params, columns.as_config()))
        partials_share = partials / params.compulsory_bytes("wgrad")
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
        (columns.block_q + params.s - 1) / columns.block_q,
        (columns.block_p + params.r - 1) / columns.block_p,
        partials_share,
    ]


def columns_matrix(
    pass_name: str,
    params: Conv2dGw8Params,
    columns: Columns,
    limits: GpuLimits | None = None,
    flags: Mapping[str, float] | None = None,
) -> np.ndarray:
    """The features of every config of columns on the layer params (float32, a row per
    config, a column per feature_names(pass_name, flags)): each flag's column holds its
    value in flags."""
    flags = flags or {}
    names = feature_names(pass_name, tuple(flags))
    # Each column is written into the float32 matrix as it is computed: one rounding from
    # the float64 (or int) values, as an astype of the whole would, without the float64
    # copies of a stack and a concatenate (0.08 ms a layer for wgrad's 1704-config spaces,
    # on two cores).
    matrix = np.empty((len(columns), len(names)), dtype=np.float32)
    if len(columns) == 0:
        return matrix
    limits = limits or GpuLimits()
    matrix[:, : len(_LAYER)] = _layer_features(params, pass_name)
    fields = space_fields(columns.config_type)
    for i, name in enumerate(fields, start=len(_LAYER)):
        matrix[:, i] = getattr(columns, name)
    derived = _derived_features(pass_name, params, columns, limits)
    for i, values in enumerate(derived, start=len(_LAYER) + len(fields)):
        matrix[:, i] = values
    first_flag = len(names) - len(flags)
    for i, name in enumerate(names[first_flag:], start=first_flag):
        matrix[:, i] = flags[name]
    return matrix


def feature_matrix(
    pass_name: str,
    params: Conv2dGw8Params,
    configs: Sequence[Any],
    limits: GpuLimits | None = None,
    flags: Mapping[str, float] | None = None,
) -> np.ndarray:
    """Return the features of each config of one layer: a float32 array, a row per config and
    a column per feature_names(pass_name, flags), each flag's holding its value in flags."""
    columns = Columns.of(kernel_pass(pass_name).config_type, configs)
    return columns_matrix(pass_name, params, columns, limits, flags)


def config_feature(
    pass_name: str, params: Conv2dGw8Params, config: Any, name: str, limits: GpuLimits
) -> float:
    """The value of feature `name` (one of feature_names(pass_name)) for one config on the
    layer params under limits: what a model sees of it, "waves" say."""
    names = feature_names(pass_name)
    if name not in names:
        raise ValueError(f"name must be one of {names}, got {name!r}")
    return float(feature_matrix(pass_name, params, [config], limits)[0, names.index(name)])
