"""Launch the dgrad kernel (fprop's source, kDgrad): compile through spio.jit, memoise."""

from __future__ import annotations

import functools
from typing import Any

from .._array_info import resolve_device
from . import dgrad_spec
from ._arrays import check_activation, check_params, check_weights
from ._tiling import spread_over_sms
from .fprop import (
    SOURCE_NAME,
    ConvLaunch,
    compile_types,
    kernel_source,
    launch_slots,
    tile_chunks,
    types_request,
)
from .fprop_segments import segments_or_chunks, slots_on
from .fprop_spec import FpropConfig
from .params import Conv2dGw8Params


def compile_request(params: Conv2dGw8Params, config: FpropConfig, arch: str) -> Any:
    """Return the spio.jit.CompileRequest of the dgrad kernel (for compile_many)."""
    types_h = dgrad_spec.generate_types(params, config)
    return types_request(SOURCE_NAME, kernel_source(), types_h, arch)


def compile_dgrad(params: Conv2dGw8Params, config: FpropConfig, arch: str) -> Any:
    """Compile the dgrad kernel of the layer params with config to a cubin for arch."""
    return compile_types(dgrad_spec.generate_types(params, config), arch)


@functools.cache
def dgrad_launch(params: Conv2dGw8Params, config: FpropConfig, device: int = 0) -> ConvLaunch:
    """Return the ConvLaunch of dgrad for the layer params and config on device (called as
    (grad_x, grad_y, w, stream=..., pdl=...)): checked, compiled and loaded once."""
    import spio.jit

    dgrad_spec.check_config(params, config)
    arch = spio.jit.device_info(device).arch
    code = compile_dgrad(params, config, arch)
    kernel = code.load(device=device).get_kernel(dgrad_spec.KERNEL_NAME)
    return ConvLaunch(kernel, spread_over_sms(kernel, dgrad_spec.launch_geometry(params, config)))


@functools.cache
def default_config_on(params: Conv2dGw8Params, device: int = 0) -> FpropConfig:
    """Return the dgrad config a launch without one runs on device (memoised), chosen as
    fprop.default_config_on chooses fprop's."""
    chunks = chunks_config_on(params, device)
    return segments_or_chunks(
        dgrad_spec.to_fprop_params(params), chunks, lambda c: slots_on("dgrad", params, c, device)
    )


@functools.cache
def chunks_config_on(params: Conv2dGw8Params, device: int = 0) -> FpropConfig:
    """Return the dgrad config walking row chunks, chosen as fprop.chunks_config_on chooses
    fprop's (memoised)."""
    import spio.jit

    sm_count = spio.jit.device_info(device).sm_count
    config = dgrad_spec.default_config(params, sm_count)
    return tile_chunks(
        dgrad_spec.to_fprop_params(params),
        config,
        lambda c: launch_slots(dgrad_launch(params, c, device)),
        sm_count,
    )


def get_dgrad_kernel(params: Conv2dGw8Params, config: FpropConfig, device: int = 0) -> Any:
    """Return the loaded spio.jit.Kernel of the layer params' dgrad with config (memoised)."""
    return dgrad_launch(params, config, device).kernel


def conv2d_gw8_dgrad(
    grad_x: Any,
    grad_y: Any,
    w: Any,
    params: Conv2dGw8Params,
    config: FpropConfig | None = None,
    stream: Any = None,
    device: int | None = None,
    pdl: bool = True,
) -> None:
    """Compute grad_x = the input gradient of conv2d(x, w) for grad_y (asynchronously).

    params describe the layer (its forward shape). grad_x (n x h x w x c), grad_y (n x p x
    q x c) and w (the layer's c x r x s x 8 weights, as fprop takes them) are contiguous
    device arrays of params.dtype: torch tensors, objects with __cuda_array_interface__, or
    device pointers, checked as conv2d_gw8_fprop checks its arrays; config None takes
    default_config_on(params, device); device, stream and pdl as conv2d_gw8_fprop.
    """
    check_params(params)
    check_activation("grad_x", grad_x, params.input_shape, params.dtype)
    check_activation("grad_y", grad_y, params.output_shape, params.dtype)
    check_weights("w", w, params, params.dtype)
    device = resolve_device(device, grad_y)
    if config is None:
        config = default_config_on(params, device)
    dgrad_launch(params, config, device)(grad_x, grad_y, w, None, stream, pdl)
