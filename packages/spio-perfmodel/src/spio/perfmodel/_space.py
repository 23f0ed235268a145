"""A pass's config space for one layer as columns of arrays, without a Python step per config.

Choosing a config scores the whole space, and a Python loop that builds, checks and
featurizes every config takes tens of milliseconds (wgrad: 1392 configs at 128x64x64x64).
Here every candidate of a pass is enumerated once, as integer columns in the order of the
spec's `config_space`; a layer's space is a mask over them, computed with NumPy from the
same rules, and the kernel specs' arithmetic (grid, shared memory, partial sums) runs on the
columns directly: `Columns` gives a config's fields as arrays and its class's properties
(warps, threads, ...) on top. Only the chosen config becomes a dataclass.

The rules here restate the specs' checks (`config_space`, `check_config` and the configs'
`__post_init__`) in array form; tests hold them equal to the specs on many layers.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from spio.kernels.conv2d_gw8 import FpropConfig, WgradConfig, dgrad_spec, fprop_spec, wgrad_spec
from spio.kernels.conv2d_gw8._tiling import (
    MAX_SHARED_MEM,
    fragment_images,
    next_power_of_two,
)
from spio.kernels.conv2d_gw8.params import Conv2dGw8Params
from spio.kernels.conv2d_gw8.pass_params import fprop_kernel_params

from ._passes import kernel_pass


def space_fields(config_type: type) -> tuple[str, ...]:
    """The names of the fields of config_type that config spaces vary, in field order: all
    but its PLACEMENT_FIELDS, which the launchers set on a chosen config for its GPU."""
    placed = getattr(config_type, "PLACEMENT_FIELDS", ())
    return tuple(
        field.name for field in dataclasses.fields(config_type) if field.name not in placed
    )


class Columns:
    """Config fields as equal-length integer arrays, read like a config (`columns.block_q`),
    with the config class's properties computed on the arrays (`columns.threads`)."""

    def __init__(
        self,
        config_type: type,
        values: dict[str, np.ndarray],
        taken_from: tuple[Columns, np.ndarray] | None = None,
    ) -> None:
        self.config_type = config_type
        # Properties computed once per Columns. A space is taken from the pass's candidates
        # (taken_from: those Columns and the entries taken), which keep theirs for the
        # process: a layer's space slices them instead of recomputing (0.05 ms a layer
        # for wgrad's 1704-config spaces, on two cores).
        self._properties: dict[str, Any] = {}
        self._taken_from = taken_from
        for name, array in values.items():
            setattr(self, name, array)
        self._names = tuple(values)

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.config_type, name, None)
        if isinstance(attribute, property) and attribute.fget is not None:
            return self._property(name, attribute)
        if name in getattr(self.config_type, "PLACEMENT_FIELDS", ()):
            # As every config of a space has it: the field's default.
            return next(f.default for f in dataclasses.fields(self.config_type) if f.name == name)
        raise AttributeError(name)

    def _property(self, name: str, attribute: property) -> Any:
        """The config class's property `name` on these columns, computed once."""
        if name not in self._properties:
            if self._taken_from is None:
                self._properties[name] = attribute.fget(self)  # type: ignore[misc]
            else:
                source, entries = self._taken_from
                value = source._property(name, attribute)
                self._properties[name] = value[entries] if np.ndim(value) else value
        return self._properties[name]

    def __len__(self) -> int:
        return len(getattr(self, self._names[0]))

    def as_config(self) -> Any:
        """These columns, typed for the specs' functions of a config: their arithmetic runs on
        the arrays as it does on ints (the tests hold the results equal)."""
        return self

    def take(self, mask: np.ndarray) -> Columns:
        """The configs where mask holds (or at the given indices)."""
        values = {n: getattr(self, n)[mask] for n in self._names}
        return Columns(self.config_type, values, taken_from=(self, mask))

    def config(self, index: int) -> Any:
        """The config dataclass of entry index."""
        fields = {}
        names = space_fields(self.config_type)
        for field in dataclasses.fields(self.config_type):
            if field.name not in names:
                continue
            value = getattr(self, field.name)[index].item()
            fields[field.name] = bool(value) if field.type in (bool, "bool") else int(value)
        return self.config_type(**fields)

    def index_of(self, config: Any) -> int | None:
        """The first entry equal to config (of config_type), or None where there is none."""
        if not isinstance(config, self.config_type):
            return None
        found = np.ones(len(self), dtype=bool)
        for name in self._names:
            found &= getattr(self, name) == int(getattr(config, name))
        hits = np.flatnonzero(found)
        return int(hits[0]) if len(hits) else None

    @classmethod
    def of(cls, config_type: type, configs: Sequence[Any]) -> Columns:
        """Columns of configs of config_type; ValueError for a config placed on a GPU (a
        placement field not at its default: models score the tiles)."""
        names = space_fields(config_type)
        for field in dataclasses.fields(config_type):
            if field.name in names:
                continue
            placed = [c for c in configs if getattr(c, field.name) != field.default]
            if placed:
                raise ValueError(
                    f"configs must be tiles, with {field.name} = {field.default} (models score "
                    f"tiles; a launcher places them), got {placed[0]}"
                )
        # (dataclasses.astuple deep-copies every field: 30 times slower here.)
        return cls.from_rows(config_type, [[getattr(c, n) for n in names] for c in configs])

    @classmethod
    def from_rows(cls, config_type: type, rows: Sequence[Sequence[int]]) -> Columns:
        """Columns of rows of field values in config_type's field order."""
        names = space_fields(config_type)
        table = np.array(rows, dtype=np.int64).reshape(len(rows), len(names))
        return cls(config_type, {name: table[:, i] for i, name in enumerate(names)})


@functools.cache
def _fprop_candidates() -> Columns:
    """Every fprop/dgrad config that is well formed on its own (FpropConfig's checks), in
    config_space's order."""
    spec = fprop_spec
    rows = itertools.product(
        spec.BLOCK_Q_VALUES,
        spec.BLOCK_G_VALUES,
        spec.WARP_G_VALUES,
        spec.WARP_Q16_VALUES,
        spec.BLOCK_P_VALUES,
        spec.PREFETCH_VALUES,
        spec.MMA_K_VALUES,
    )
    columns = Columns.from_rows(FpropConfig, list(rows))
    narrow = (columns.block_q < spec.TILE_Q) & (columns.warp_q16 == 1)
    well_formed = (
        (columns.block_g % columns.warp_g == 0)
        & (narrow | (columns.block_q % (spec.TILE_Q * columns.warp_q16) == 0))
        & (columns.warps <= spec.MAX_WARPS)
    )
    return columns.take(well_formed)


@functools.cache
def _wgrad_candidates() -> Columns:
    """Every wgrad config that is well formed on its own, in config_space's order (each tile
    without image_sync, then with it where it has several warp rows; each of those without
    tma, then with it where the tile has TMA_BLOCK_G groups and whole TMA_ROW_PIXELS
    columns), then the same for the short chunks of small layers' spaces (block_p of
    SHORT_BLOCK_P_VALUES, all below BLOCK_P_VALUES', at SHORT_PREFETCH_VALUES, one step of
    images)."""
    spec = wgrad_spec
    rows = []
    # (row chunks, prefetches, image steps): the space's own, then small layers' short chunks.
    chunkings = (
        (spec.BLOCK_P_VALUES, spec.PREFETCH_VALUES, spec.WALK_N_VALUES),
        (spec.SHORT_BLOCK_P_VALUES, spec.SHORT_PREFETCH_VALUES, (1,)),
    )
    tiles = itertools.chain.from_iterable(
        itertools.product(
            spec.BLOCK_Q_VALUES,
            spec.BLOCK_G_VALUES,
            spec.WARP_G_VALUES,
            block_p_values,
            prefetch_values,
            spec.BLOCK_N_VALUES,
            walk_n_values,
        )
        for block_p_values, prefetch_values, walk_n_values in chunkings
    )
    for fields in tiles:
        block_q, block_g, block_n = fields[0], fields[1], fields[5]
        warp_rows = block_n // fragment_images(block_q)
        for image_sync in (0, 1) if warp_rows > 1 else (0,):
            tma_rows = block_g == spec.TMA_BLOCK_G and block_q % spec.TMA_ROW_PIXELS == 0
            for tma in (0, 1) if tma_rows else (0,):
                rows.append((*fields, image_sync, tma))
    columns = Columns.from_rows(WgradConfig, rows)
    several_images = columns.block_n > 1
    well_formed = (
        (columns.block_n % columns.warp_images == 0)
        & (columns.block_g % columns.warp_g == 0)
        & (columns.warps <= spec.MAX_WARPS)
        & (~several_images | (columns.block_q * columns.block_n <= spec.MAX_BLOCK_COLUMNS))
    )
    return columns.take(well_formed)


def _fprop_space(params: Conv2dGw8Params) -> Columns:
    spec = fprop_spec
    c = _fprop_candidates()
    # Blocks below 16 columns: images at most block_q wide, more than half a block's images.
    narrow_fits = (params.q <= c.block_q) & (2 * params.n > c.warp_images)
    fits_image = (
        (c.block_q <= max(spec.TILE_Q, next_power_of_two(params.q)))
        & (c.block_p <= max(spec.BLOCK_P_VALUES[0], next_power_of_two(params.p)))
        & ((c.block_q >= spec.TILE_Q) | narrow_fits)
    )
    registers = spec.weight_registers(params, c.as_config()) <= spec.MAX_WEIGHT_REGISTERS
    accumulators = 4 * params.r * c.warp_g * c.warp_q16 <= spec.MAX_ACC_REGISTERS
    groups = params.groups % c.block_g == 0
    shared = spec.shared_mem_bytes(params, c.as_config()) <= MAX_SHARED_MEM
    return c.take(fits_image & registers & accumulators & groups & shared)


def wgrad_shared_mem(params: Conv2dGw8Params, columns: Columns) -> np.ndarray:
    """wgrad_spec.shared_mem_bytes on columns (its max of the rings and the reduction, and
    the barriers of tma)."""
    rings = np.maximum(
        wgrad_spec.ring_bytes(params, columns.as_config()),
        wgrad_spec.reduce_bytes(params, columns.as_config()),
    )
    return rings + wgrad_spec.TMA_BARRIER_BYTES * columns.tma


def _wgrad_space(params: Conv2dGw8Params) -> Columns:
    spec = wgrad_spec
    c = _wgrad_candidates()
    images_cap = next_power_of_two(params.n)
    fits_image = (
        (c.block_q <= max(spec.TILE_Q, next_power_of_two(params.q)))
        & (c.block_p <= max(spec.BLOCK_P_VALUES[0], next_power_of_two(params.p)))
        & ((c.block_q >= spec.TILE_Q) | (params.q <= c.block_q))
    )
    images = ((c.block_n == 1) | (c.block_n <= images_cap)) & (
        (c.walk_n == 1) | (c.block_n * c.walk_n <= images_cap)
    )
    # (A space's tiles keep every filter row in a block: block_r is a placement field.)
    pairs = params.r * spec.column_pairs(params)
    registers = c.warp_g * pairs * 4 <= spec.MAX_ACC_REGISTERS
    groups = params.groups % c.block_g == 0
    shared = wgrad_shared_mem(params, c) <= MAX_SHARED_MEM
    short = c.block_p < spec.BLOCK_P_VALUES[0]
    chunks = ~short | (spec.has_short_chunks(params) & (c.block_p < params.p))
    return c.take(fits_image & images & registers & groups & shared & chunks)


def space_columns(pass_name: str, params: Conv2dGw8Params) -> Columns:
    """The config space of pass_name for params as Columns, in config_space's order."""
    name = kernel_pass(pass_name).name
    if name == "wgrad":
        return _wgrad_space(params)
    return _fprop_space(fprop_kernel_params(name, params))


def grid_blocks(pass_name: str, params: Conv2dGw8Params, columns: Columns) -> np.ndarray:
    """The spec's grid_blocks of every config of columns."""
    spec = {"fprop": fprop_spec, "dgrad": dgrad_spec, "wgrad": wgrad_spec}[pass_name]
    return np.asarray(spec.grid_blocks(params, columns.as_config()))


def shared_mem(pass_name: str, params: Conv2dGw8Params, columns: Columns) -> np.ndarray:
    """The spec's dynamic shared memory (bytes) of every config of columns."""
    if pass_name == "wgrad":
        return wgrad_shared_mem(params, columns)
    kernel_params = fprop_kernel_params(pass_name, params)
    return np.asarray(fprop_spec.shared_mem_bytes(kernel_params, columns.as_config()))
