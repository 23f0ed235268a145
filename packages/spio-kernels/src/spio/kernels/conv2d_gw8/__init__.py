"""Grouped conv2d with group width 8, stride 1: fprop (dgrad and wgrad follow).

`Conv2dGw8Params` holds a layer's shape; `FpropConfig` a tiling of the fprop kernel;
`conv2d_gw8_fprop` launches it on device arrays. torch is imported only by the reference
and the benchmark.
"""

from .fprop import conv2d_gw8_fprop, get_kernel
from .fprop_spec import FpropConfig, config_space, default_config, generate_types, launch_geometry
from .params import Conv2dGw8Params, normalize_padding, weights_from_torch_layout

__all__ = [
    "Conv2dGw8Params",
    "FpropConfig",
    "config_space",
    "conv2d_gw8_fprop",
    "default_config",
    "generate_types",
    "get_kernel",
    "launch_geometry",
    "normalize_padding",
    "weights_from_torch_layout",
]
