"""Grouped conv2d with group width 8, stride 1: fprop, dgrad and wgrad.

`Conv2dGw8Params` holds a layer's shape (its forward pass; dgrad and wgrad take the same
params). `FpropConfig` tiles fprop and dgrad (dgrad runs fprop's kernel on converted params,
see dgrad_spec), `WgradConfig` tiles wgrad. `conv2d_gw8_fprop`, `conv2d_gw8_dgrad` and
`conv2d_gw8_wgrad` launch them on device arrays; `fprop_launch`, `dgrad_launch` and
`wgrad_launch` return a layer's loaded kernels as a callable that launches them with no
look-up, for frameworks that call the same layer every step. torch is imported only by the
reference and the benchmark.
"""

from . import dgrad_spec, wgrad_heuristic, wgrad_spec, wgrad_tma_tile
from .dgrad import conv2d_gw8_dgrad, dgrad_launch
from .fprop import ConvLaunch, conv2d_gw8_fprop, fprop_launch, get_kernel
from .fprop_spec import FpropConfig, config_space, default_config, generate_types, launch_geometry
from .params import Conv2dGw8Params, normalize_padding, weights_from_torch_layout
from .wgrad import WgradLaunch, conv2d_gw8_wgrad, wgrad_launch, wgrad_workspace_bytes
from .wgrad_spec import WgradConfig

__all__ = [
    "Conv2dGw8Params",
    "ConvLaunch",
    "FpropConfig",
    "WgradConfig",
    "WgradLaunch",
    "config_space",
    "conv2d_gw8_dgrad",
    "conv2d_gw8_fprop",
    "conv2d_gw8_wgrad",
    "default_config",
    "dgrad_launch",
    "dgrad_spec",
    "fprop_launch",
    "generate_types",
    "get_kernel",
    "launch_geometry",
    "normalize_padding",
    "weights_from_torch_layout",
    "wgrad_heuristic",
    "wgrad_launch",
    "wgrad_spec",
    "wgrad_tma_tile",
    "wgrad_workspace_bytes",
]
