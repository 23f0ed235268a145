"""The kernel passes a latency model can choose configs for, and what each needs from spio-kernels.

A pass is a config dataclass plus the spec functions of its kernel: the config space of a
layer, the launch geometry of a config, the validity check and the heuristic default (what
the model is measured against). dgrad runs fprop's kernel on converted params; its spec
module does the conversion, so every function here takes the layer's own params.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from spio.kernels.conv2d_gw8 import (
    FpropConfig,
    WgradConfig,
    dgrad_spec,
    fprop_spec,
    wgrad_heuristic,
    wgrad_spec,
    wgrad_tma_tile,
)
from spio.kernels.conv2d_gw8.params import Conv2dGw8Params


@dataclass(frozen=True)
class KernelPass:
    """One pass of conv2d_gw8 as the latency model sees it."""

    name: str
    config_type: type
    config_space: Callable[[Conv2dGw8Params], list[Any]]
    launch_geometry: Callable[[Conv2dGw8Params, Any], Any]
    check_config: Callable[[Conv2dGw8Params, Any], None]
    default_config: Callable[[Conv2dGw8Params, int], Any]


def _memoised(default_config: Callable[[Conv2dGw8Params, int], Any]) -> Any:
    """default_config remembering its last layers: a config choice asks for the heuristic's
    default up to three times (the gain check and the rules that give way to it), at 0.1-0.2
    ms each on two cores, and the heuristic depends on nothing but the layer and the SM
    count."""
    return functools.lru_cache(maxsize=1024)(default_config)


PASSES: dict[str, KernelPass] = {
    "fprop": KernelPass(
        "fprop",
        FpropConfig,
        fprop_spec.config_space,
        fprop_spec.launch_geometry,
        fprop_spec.check_config,
        _memoised(fprop_spec.default_config),
    ),
    "dgrad": KernelPass(
        "dgrad",
        FpropConfig,
        dgrad_spec.config_space,
        dgrad_spec.launch_geometry,
        dgrad_spec.check_config,
        _memoised(dgrad_spec.default_config),
    ),
    "wgrad": KernelPass(
        "wgrad",
        WgradConfig,
        wgrad_spec.config_space,
        wgrad_spec.launch_geometry,
        wgrad_spec.check_config,
        _memoised(wgrad_heuristic.default_config),
    ),
}


def kernel_pass(name: str) -> KernelPass:
    """Return the pass called name; ValueError names the passes there are."""
    try:
        return PASSES[name]
    except (KeyError, TypeError):
        raise ValueError(f"pass must be one of {sorted(PASSES)}, got {name!r}") from None


def heuristic_tile(name: str, params: Conv2dGw8Params, sm_count: int, tma: bool) -> Any:
    """The tile a launch of pass `name` without a config starts from on a GPU of sm_count
    SMs, with TMA or without: the spec's default, and for wgrad on a GPU with TMA its
    wgrad_tma_tile.tma_tile (as wgrad.default_tile_on gives it for a device)."""
    tile = kernel_pass(name).default_config(params, sm_count)
    if kernel_pass(name).name == "wgrad" and tma:
        return wgrad_tma_tile.tma_tile(params, tile, sm_count)
    return tile
