"""dgrad (input gradient) of grouped conv2d gw8, as the fprop kernel on converted params.

With stride 1, grad_x[h, w] = sum over taps (r, s) of grad_y[h + (R - 1 - r) - (R - 1 -
pad_top), ...] x W[r, s]^T: a forward convolution of grad_y (p x q) by the weights
transposed within each group and rotated by 180 degrees, with each side's padding mirrored
to extent - 1 - padding, whose output is h x w again. So dgrad shares fprop's kernel
(kDgrad selects the weight load), its tiling (FpropConfig), its config space and its
heuristic, all applied to `to_fprop_params(params)`.
"""

from __future__ import annotations

from . import fprop_spec
from .fprop_spec import FpropConfig, LaunchGeometry
from .params import Conv2dGw8Params, check_params

KERNEL_NAME = fprop_spec.DGRAD_KERNEL_NAME


def to_fprop_params(params: Conv2dGw8Params) -> Conv2dGw8Params:
    """Return the fprop problem that computes params' dgrad: input p x q, output h x w."""
    check_params(params)
    return Conv2dGw8Params(
        n=params.n,
        c=params.c,
        h=params.p,
        w=params.q,
        r=params.r,
        s=params.s,
        padding=(
            params.r - 1 - params.pad_top,
            params.r - 1 - params.pad_bottom,
            params.s - 1 - params.pad_left,
            params.s - 1 - params.pad_right,
        ),
        dtype=params.dtype,
        has_bias=False,
    )


def config_space(params: Conv2dGw8Params) -> list[FpropConfig]:
    """Return every valid dgrad config for the layer params."""
    return fprop_spec.config_space(to_fprop_params(params))


def default_config(params: Conv2dGw8Params, sm_count: int = 132) -> FpropConfig:
    """Pick a dgrad config by fprop's rule of thumb on the converted problem."""
    return fprop_spec.default_config(to_fprop_params(params), sm_count)


def shorter_walk(params: Conv2dGw8Params, config: FpropConfig) -> FpropConfig | None:
    """fprop_spec.shorter_walk on the converted problem."""
    return fprop_spec.shorter_walk(to_fprop_params(params), config)


def grid_blocks(params: Conv2dGw8Params, config: FpropConfig) -> int:
    """Blocks in the grid of params' dgrad with config."""
    return fprop_spec.grid_blocks(to_fprop_params(params), config)


def check_config(params: Conv2dGw8Params, config: FpropConfig) -> None:
    """Raise ValueError when config cannot run params' dgrad."""
    fprop_spec.check_config(to_fprop_params(params), config)


def launch_geometry(params: Conv2dGw8Params, config: FpropConfig) -> LaunchGeometry:
    """Return the launch geometry of the dgrad of params with config."""
    return fprop_spec.launch_geometry(to_fprop_params(params), config)


def generate_types(params: Conv2dGw8Params, config: FpropConfig) -> str:
    """Return the dgrad kernel's types.h for the layer params and config."""
    return fprop_spec.generate_types(to_fprop_params(params), config, dgrad=True)
