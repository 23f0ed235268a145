"""Launch the wgrad kernels: compile through spio.jit (disk cache), memoise the loaded kernels."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Any

from . import wgrad_spec
from ._tiling import LaunchGeometry, spread_over_sms
from .fprop import compile_requested, device_of, resolve_device, types_request
from .params import Conv2dGw8Params
from .wgrad_spec import WgradConfig

# The heuristic is pure: memoised, so a launch without a config costs one look-up.
_default_config = functools.cache(wgrad_spec.default_config)

SOURCE_NAME = "conv2d_gw8_wgrad.cu"


@functools.cache
def kernel_source() -> str:
    """Return the device source of the wgrad kernels."""
    return resources.files(__package__).joinpath(SOURCE_NAME).read_text(encoding="utf-8")


def compile_request(params: Conv2dGw8Params, config: WgradConfig, arch: str) -> Any:
    """Return the spio.jit.CompileRequest of the wgrad kernels (for compile_many)."""
    types_h = wgrad_spec.generate_types(params, config)
    return types_request(SOURCE_NAME, kernel_source(), types_h, arch)


def compile_wgrad(params: Conv2dGw8Params, config: WgradConfig, arch: str) -> Any:
    """Compile the wgrad kernels for params and config to a cubin for arch (spio.jit cache)."""
    return compile_requested(compile_request(params, config, arch))


@dataclass(frozen=True)
class _Plan:
    """What a launch needs, checked and built once per (params, config, device).

    fused_geometry is the geometry of the single-launch kernel (spread as the main one);
    single_launch says whether the default is to use it: its grid fits on the device at
    once (a cooperative launch) and has no fewer blocks than the reduction has units.
    """

    main: Any
    reduce: Any
    fused: Any
    geometry: LaunchGeometry
    reduce_geometry: LaunchGeometry
    fused_geometry: LaunchGeometry
    fused_fits: bool
    single_launch: bool
    workspace_bytes: int


@functools.cache
def _plan(params: Conv2dGw8Params, config: WgradConfig, device: int) -> _Plan:
    import spio.jit

    wgrad_spec.check_config(params, config)
    info = spio.jit.device_info(device)
    module = compile_wgrad(params, config, info.arch).load(device=device)
    main = module.get_kernel(wgrad_spec.KERNEL_NAME)
    fused = module.get_kernel(wgrad_spec.FUSED_KERNEL_NAME)
    geometry = wgrad_spec.launch_geometry(params, config)
    fused_geometry = spread_over_sms(fused, geometry)
    resident = fused.max_active_blocks_per_sm(fused_geometry.block, fused_geometry.shared_mem)
    fits = geometry.grid <= resident * info.sm_count
    return _Plan(
        main,
        module.get_kernel(wgrad_spec.REDUCE_KERNEL_NAME),
        fused,
        spread_over_sms(main, geometry),
        wgrad_spec.reduce_geometry(params),
        fused_geometry,
        fits,
        fits and wgrad_spec.reduce_units(params) <= geometry.grid,
        wgrad_spec.workspace_bytes(params, config),
    )


def get_wgrad_kernels(
    params: Conv2dGw8Params, config: WgradConfig, device: int = 0
) -> tuple[Any, Any, Any]:
    """Return the loaded (main, reduce, fused) spio.jit.Kernels for params and config
    (memoised)."""
    plan = _plan(params, config, device)
    return plan.main, plan.reduce, plan.fused


def wgrad_workspace_bytes(params: Conv2dGw8Params, config: WgradConfig | None = None) -> int:
    """Bytes of workspace conv2d_gw8_wgrad needs for params and config (None: the default)."""
    if config is None:
        config = wgrad_spec.default_config(params)
    return wgrad_spec.workspace_bytes(params, config)


def _torch_workspace(like: Any, nbytes: int) -> Any:
    """A workspace from torch's allocator, its header zeroed (a small fill on the stream)."""
    import torch

    workspace = torch.empty(nbytes // 4, dtype=torch.float32, device=like.device)
    workspace[: wgrad_spec.WORKSPACE_HEADER_BYTES // 4].zero_()
    return workspace


def wgrad_uses_single_launch(
    params: Conv2dGw8Params, config: WgradConfig | None = None, device: int = 0
) -> bool:
    """Whether conv2d_gw8_wgrad runs params and config (None: the default) as one cooperative
    launch on device when single_launch is None (compiles and loads the kernels if needed)."""
    if config is None:
        config = _default_config(params)
    return _plan(params, config, device).single_launch


def conv2d_gw8_wgrad(
    grad_w: Any,
    x: Any,
    grad_y: Any,
    params: Conv2dGw8Params,
    config: WgradConfig | None = None,
    workspace: Any = None,
    stream: Any = None,
    device: int | None = None,
    pdl: bool = True,
    single_launch: bool | None = None,
) -> None:
    """Compute grad_w, the weight gradient of conv2d(x, w) for grad_y, in f32 (asynchronously).

    params describe the layer. grad_w (c x r x s x 8, Spio's weight layout, float32), x (n x
    h x w x c) and grad_y (n x p x q x c, both params.dtype) are contiguous device arrays:
    torch tensors, objects with __cuda_array_interface__, or device pointers. Every array
    starts on a 16-byte boundary (the kernels move 16-byte cells; torch allocations do). No
    shape or dtype checking happens here (spio-torch checks); config None takes
    wgrad_spec.default_config(params); device and stream as conv2d_gw8_fprop.

    workspace is device memory of at least wgrad_workspace_bytes(params, config) bytes: a
    128-byte header (the single launch's grid-barrier counter), then the partial sums. Its
    header must be zero before its first use; every launch leaves it zero, so one workspace
    serves any number of launches, one at a time (concurrent launches on other streams need
    their own). None allocates one with torch when x is a torch tensor, and zeroes its header
    on the stream: one more small launch each call, so pass a workspace where speed matters.

    The pass is the same bits on every run, either way it is launched: single_launch True
    runs it as one cooperative launch (the partial sums, a grid-wide barrier, their sum),
    which needs the grid to fit on the device at once (ValueError otherwise); False as two
    launches (the partial sums, then a reduce kernel); None (the default) picks the single
    launch where the grid fits and has at least as many blocks as the reduction has units
    (wgrad_uses_single_launch). pdl (sm_90 and newer) launches with programmatic dependent
    launch: a kernel's blocks are placed while the kernel before it finishes; False launches
    in plain stream order.
    """
    if single_launch is not None and not isinstance(single_launch, bool):
        raise TypeError(f"single_launch must be None, True or False, got {single_launch!r}")
    if config is None:
        config = _default_config(params)
    device = resolve_device(device, x)
    plan = _plan(params, config, device)
    single = plan.single_launch if single_launch is None else single_launch
    if single and not plan.fused_fits:
        raise ValueError(
            f"single_launch=True, but the {plan.geometry.grid} blocks of config {config} do "
            f"not fit on cuda:{device} at once; pass single_launch=None or False"
        )
    if workspace is None:
        if device_of(x) is None:
            raise ValueError(
                "workspace is None and x is not a torch tensor: pass device memory of "
                f"wgrad_workspace_bytes(params, config) = {plan.workspace_bytes} bytes "
                "whose first 128 bytes are zero"
            )
        workspace = _torch_workspace(x, plan.workspace_bytes)
    import spio.jit

    if single:
        geometry = plan.fused_geometry
        spio.jit.launch(
            plan.fused,
            geometry.grid,
            geometry.block,
            (grad_w, workspace, x, grad_y),
            shared_mem=geometry.shared_mem,
            stream=stream,
            pdl=pdl,
            cooperative=True,
        )
        return
    geometry = plan.geometry
    spio.jit.launch(
        plan.main,
        geometry.grid,
        geometry.block,
        (workspace, x, grad_y),
        shared_mem=geometry.shared_mem,
        stream=stream,
        pdl=pdl,
    )
    finish = plan.reduce_geometry
    spio.jit.launch(
        plan.reduce, finish.grid, finish.block, (grad_w, workspace), stream=stream, pdl=pdl
    )
