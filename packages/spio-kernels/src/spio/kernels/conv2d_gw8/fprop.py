"""Launch the fprop kernel: compile through spio.jit (disk cache), memoise the loaded kernel."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from .._array_info import resolve_device
from ._arrays import check_activation, check_params, check_vector, check_weights
from ._tiling import LaunchGeometry, balance_waves, grid_slots, spread_over_sms, wave_fill
from .even_chunks import even_chunks
from .fprop_pointwise import pointwise_walk
from .fprop_segments import segments_or_chunks, slots_on
from .fprop_spec import (
    KERNEL_NAME,
    FpropConfig,
    check_config,
    default_config,
    generate_types,
    grid_blocks,
    shorter_walk,
)
from .fprop_spec import launch_geometry as _launch_geometry
from .one_wave import split_one_wave
from .params import Conv2dGw8Params
from .ring_depth import deeper_ring

SOURCE_NAME = "conv2d_gw8_fprop.cu"
RING_HEADER = "conv2d_gw8_ring.cuh"


@functools.cache
def kernel_source() -> str:
    """Return the device source of the fprop kernel."""
    return resources.files(__package__).joinpath(SOURCE_NAME).read_text(encoding="utf-8")


@functools.cache
def _ring_header() -> str:
    return resources.files(__package__).joinpath(RING_HEADER).read_text(encoding="utf-8")


def types_request(source_name: str, source: str, types_h: str, arch: str) -> Any:
    """Return the spio.jit.CompileRequest of a kernel source with its generated types.h (and
    the rings' layout header the conv kernels share)."""
    import spio.dims
    import spio.jit

    return spio.jit.CompileRequest(
        source,
        headers={"types.h": types_h, RING_HEADER: _ring_header()},
        include_dirs=(spio.dims.include_dir(),),
        arch=arch,
        name=source_name,
    )


def compile_request(params: Conv2dGw8Params, config: FpropConfig, arch: str) -> Any:
    """Return the spio.jit.CompileRequest of the fprop kernel (for compile_many)."""
    return types_request(SOURCE_NAME, kernel_source(), generate_types(params, config), arch)


def compile_requested(request: Any) -> Any:
    """Compile a CompileRequest made by types_request (spio.jit cache)."""
    import spio.jit

    return spio.jit.compile(
        request.source,
        headers=request.headers,
        include_dirs=request.include_dirs,
        arch=request.arch,
        name=request.name,
    )


def compile_types(types_h: str, arch: str) -> Any:
    """Compile the kernel source with a generated types.h to a cubin for arch (spio.jit cache).

    Returns the spio.jit.CompiledCode. fprop and dgrad share the source; types.h says which.
    """
    request = types_request(SOURCE_NAME, kernel_source(), types_h, arch)
    return compile_requested(request)


def compile_fprop(params: Conv2dGw8Params, config: FpropConfig, arch: str) -> Any:
    """Compile the fprop kernel for params and config to a cubin for arch (spio.jit cache)."""
    return compile_types(generate_types(params, config), arch)


@dataclass(frozen=True)
class ConvLaunch:
    """The fprop (or dgrad) kernel of one layer and config, loaded on one device with its
    launch geometry: calling it launches with no look-up, what a framework's per-step call
    wants (`fprop_launch`, `dgrad.dgrad_launch`)."""

    kernel: Any
    geometry: LaunchGeometry
    has_bias: bool = False

    def __call__(
        self, y: Any, x: Any, w: Any, bias: Any = None, stream: Any = None, pdl: bool = True
    ) -> None:
        """Launch on the arrays (as conv2d_gw8_fprop takes them; dgrad: grad_x, grad_y, w)."""
        if (bias is None) == self.has_bias:
            # (A bias for a layer without one would otherwise be dropped unseen.)
            raise ValueError(
                f"params.has_bias is {self.has_bias} but bias is "
                f"{'None' if bias is None else 'given'}"
            )
        geometry = self.geometry
        self.kernel.launch(
            geometry.grid,
            geometry.block,
            (y, x, w, bias if self.has_bias else 0),
            geometry.shared_mem,
            stream,
            pdl,
        )


@functools.cache
def fprop_launch(params: Conv2dGw8Params, config: FpropConfig, device: int = 0) -> ConvLaunch:
    """Return the ConvLaunch of fprop for params and config on device: checked, compiled
    (spio.jit cache) and loaded once (memoised)."""
    import spio.jit

    check_config(params, config)
    arch = spio.jit.device_info(device).arch
    kernel = compile_fprop(params, config, arch).load(device=device).get_kernel(KERNEL_NAME)
    geometry = spread_over_sms(kernel, _launch_geometry(params, config))
    return ConvLaunch(kernel, geometry, params.has_bias)


def launch_slots(launch: ConvLaunch) -> int:
    """Blocks of the launch (its kernel at its geometry) that fit on its GPU at once."""
    return resident_slots(launch.kernel, launch.geometry)


def resident_slots(kernel: Any, geometry: Any) -> int:
    """Blocks of the launch geometry that fit on the kernel's GPU at once (_tiling.grid_slots);
    ValueError where not one fits on an SM (no config of the spaces should get there)."""
    slots = grid_slots(kernel, geometry)
    if slots < 1:
        registers = kernel.attributes.registers
        raise ValueError(
            f"kernel {kernel.name!r} cannot run on cuda:{kernel.device}: not one block of "
            f"{geometry.block} threads ({registers} registers each) with {geometry.shared_mem} "
            "bytes of dynamic shared memory fits on an SM"
        )
    return slots


@functools.cache
def default_config_on(params: Conv2dGw8Params, device: int = 0) -> FpropConfig:
    """Return the config a launch without one runs on device (memoised): chunks_config_on,
    or its tile walking segments where fprop_segments' rule says."""
    return segments_or_chunks(
        params, chunks_config_on(params, device), lambda c: slots_on("fprop", params, c, device)
    )


@functools.cache
def chunks_config_on(params: Conv2dGw8Params, device: int = 0) -> FpropConfig:
    """Return default_config for the device's SM count walking row chunks (memoised), its
    walk shortened where more, smaller blocks fill the last wave of the GPU's block slots
    better (_tiling.balance_waves; the slots are the default's), or where its grid is one
    wave at most, as one_wave.split_one_wave says; loading two rows ahead rather than one
    where its SMs hold few of its blocks at a time (ring_depth.deeper_ring), and a 1 x 1
    tile in short walks six rows ahead where its grid takes several waves (tile_chunks); its
    image's rows cut into even chunks (even_chunks)."""
    import spio.jit

    sm_count = spio.jit.device_info(device).sm_count
    config = default_config(params, sm_count)
    return tile_chunks(
        params, config, lambda c: launch_slots(fprop_launch(params, c, device)), sm_count
    )


def tile_chunks(
    params: Conv2dGw8Params,
    tile: FpropConfig,
    slots_of: Callable[[FpropConfig], int],
    sm_count: int,
) -> FpropConfig:
    """tile's row chunks as walk_chunks places them, its walk and ring those
    fprop_pointwise.pointwise_walk gives a 1 x 1 tile of long walks. slots_of(config): the blocks
    of config that fit on the GPU at once (compiling it); params: the kernel's (for dgrad,
    dgrad_spec.to_fprop_params of the layer)."""
    walk = pointwise_walk(params, tile, slots_of)
    return walk_chunks(params, walk, slots_of(walk), sm_count)


def walk_chunks(
    params: Conv2dGw8Params, config: FpropConfig, slots: int, sm_count: int
) -> FpropConfig:
    """config's row chunks as chunks_config_on places them, where `slots` of its blocks fit
    on the GPU's sm_count SMs at once (params: the kernel's; for dgrad,
    dgrad_spec.to_fprop_params of the layer)."""
    if grid_blocks(params, config) <= slots:
        chunks = split_one_wave(params, config)
    else:
        chunks = balance_waves(
            config,
            lambda c: shorter_walk(params, c),
            lambda c: wave_fill(grid_blocks(params, c), slots),
        )
    return even_chunks(params, deeper_ring(params, chunks, slots, sm_count))


def get_kernel(params: Conv2dGw8Params, config: FpropConfig, device: int = 0) -> Any:
    """Return the loaded spio.jit.Kernel for params and config on device (memoised)."""
    return fprop_launch(params, config, device).kernel


def conv2d_gw8_fprop(
    y: Any,
    x: Any,
    w: Any,
    bias: Any,
    params: Conv2dGw8Params,
    config: FpropConfig | None = None,
    stream: Any = None,
    device: int | None = None,
    pdl: bool = True,
) -> None:
    """Compute y = conv2d(x, w) + bias, grouped with group width 8, stride 1 (asynchronously).

    y (n x p x q x c), x (n x h x w x c) and w (c x r x s x 8, see
    params.weights_from_torch_layout) are contiguous device arrays of params.dtype: torch
    tensors, objects with __cuda_array_interface__, or device pointers (ints); bias is c
    float32 values when params.has_bias, else None. Arrays that describe themselves (torch
    tensors, __cuda_array_interface__) are checked first: each must be dense in that order,
    or torch's N x C x H x W (weights K x 8 x R x S) view of it in channels_last memory, of
    the layer's dtype (ValueError names the array); device pointers are taken as they are.
    config None takes default_config_on(params, device).
    device defaults to x's device (torch tensors) or device 0; stream as spio.jit.launch.
    pdl (sm_90 and newer): launch with programmatic dependent launch, so that the kernel's
    blocks are placed while the previous kernel in the stream finishes (they wait for it
    before touching memory); False launches it the ordinary way. The result is the same.
    """
    check_params(params)
    check_activation("y", y, params.output_shape, params.dtype)
    check_activation("x", x, params.input_shape, params.dtype)
    check_weights("w", w, params, params.dtype)
    if bias is not None:
        if not params.has_bias:
            raise ValueError("bias is given, but the layer has no bias (params.has_bias is False)")
        check_vector("bias", bias, params.c, "float32")
    device = resolve_device(device, x)
    if config is None:
        config = default_config_on(params, device)
    fprop_launch(params, config, device)(y, x, w, bias, stream, pdl)
