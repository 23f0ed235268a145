"""Launch the wgrad kernels: compile through spio.jit (disk cache), memoise the loaded kernels."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from importlib import resources
from typing import Any

from .._array_info import device_of, resolve_device
from . import wgrad_heuristic, wgrad_spec, wgrad_types
from ._arrays import (
    check_activation,
    check_params,
    check_vector,
    check_weights,
    check_workspace,
)
from ._tensor_maps import TensorMapCache, device_pointer, has_tma, nhwc_row_map
from ._tiling import WAVE_FILL, LaunchGeometry, ceil_div, fits, grid_slots, spread_over_sms
from .even_chunks import even_chunks
from .fprop import compile_requested, types_request
from .params import Conv2dGw8Params
from .wgrad_spec import WgradConfig

SOURCE_NAME = "conv2d_gw8_wgrad.cu"
#: The headers of this folder the main source includes: the block's sizes, its warps and the
#: walks' stream rows, the sums' additions, the rows' cp.async copies, and at its end the
#: reduce kernels.
OWN_HEADERS = (
    "conv2d_gw8_wgrad_shape.cuh",
    "conv2d_gw8_wgrad_warps.cuh",
    "conv2d_gw8_wgrad_segments.cuh",
    "conv2d_gw8_wgrad_sums.cuh",
    "conv2d_gw8_wgrad_copies.cuh",
    "conv2d_gw8_wgrad_reduce.cuh",
)


@functools.cache
def kernel_source() -> str:
    """Return the device source of the wgrad kernels (the main kernel's file)."""
    return resources.files(__package__).joinpath(SOURCE_NAME).read_text(encoding="utf-8")


@functools.cache
def _header(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def compile_request(params: Conv2dGw8Params, config: WgradConfig, arch: str) -> Any:
    """Return the spio.jit.CompileRequest of the wgrad kernels (for compile_many)."""
    types_h = wgrad_types.generate_types(params, config)
    request = types_request(SOURCE_NAME, kernel_source(), types_h, arch)
    headers = {**request.headers, **{name: _header(name) for name in OWN_HEADERS}}
    return dataclasses.replace(request, headers=headers)


def compile_wgrad(params: Conv2dGw8Params, config: WgradConfig, arch: str) -> Any:
    """Compile the wgrad kernels for params and config to a cubin for arch (spio.jit cache)."""
    return compile_requested(compile_request(params, config, arch))


#: grad_w's dtype by default: each weight's f32 sum as it is.
GRAD_W_F32 = "float32"


@dataclass(frozen=True)
class WgradLaunch:
    """The wgrad kernels of one layer and config, loaded on one device with their launch
    geometry: calling it launches them with no look-up (`wgrad_launch`)."""

    main: Any
    reduce: Any
    #: The reduce kernel that writes grad_w in the activations' dtype (`rounded`).
    reduce_to_element: Any
    geometry: LaunchGeometry
    reduce_geometry: LaunchGeometry
    workspace_bytes: int
    #: One partial sum per weight and no bias gradient: the main kernel writes an f32 grad_w
    #: itself (its partials are laid out as grad_w) and no reduction runs.
    single_partial: bool
    #: The layer has a bias (Conv2dGw8Params.has_bias): the kernels also write its gradient.
    bias_grad: bool
    #: With WgradConfig.tma on sm_90 and newer: the main kernel's tensor maps of (x, grad_y),
    #: kept per pair of addresses; None where the rows arrive by cp.async.
    tensor_maps: TensorMapCache | None = None
    #: With WgradConfig.atomic_sums: the kernel that zeroes the one sum the main kernel's
    #: blocks add into, launched before it (None without).
    zero: Any = None
    zero_geometry: LaunchGeometry | None = None

    def __call__(
        self,
        grad_w: Any,
        x: Any,
        grad_y: Any,
        workspace: Any = None,
        stream: Any = None,
        pdl: bool = True,
        rounded: bool = False,
        grad_bias: Any = None,
    ) -> None:
        """Launch on the arrays, as conv2d_gw8_wgrad takes them. rounded: grad_w is of the
        activations' dtype and takes each weight's f32 sum rounded once (to nearest even),
        by the reduce kernel, which then runs for one partial sum per weight too. grad_bias:
        the bias gradient's f32 array, for a layer with a bias only (else ValueError)."""
        if (grad_bias is not None) != self.bias_grad:
            raise ValueError(_bias_mismatch(self.bias_grad, grad_bias))
        direct = self.single_partial and not rounded
        if direct:
            partials = grad_w  # one partial sum per weight: the main kernel writes grad_w
        elif workspace is not None:
            partials = workspace
        elif device_of(x) is None:
            raise ValueError(
                "workspace is None and x is not a torch tensor: pass device memory of "
                f"wgrad_workspace_bytes(params, config) = {self.workspace_bytes} bytes"
            )
        else:
            partials = _torch_workspace(x, self.workspace_bytes)
        geometry = self.geometry
        args: tuple[Any, ...] = (partials, x, grad_y)
        if self.tensor_maps is not None:
            args += self.tensor_maps((device_pointer(x), device_pointer(grad_y)))
        clear = self.zero_geometry
        if clear is not None:
            self.zero.launch(clear.grid, clear.block, (partials,), 0, stream, pdl)
        self.main.launch(geometry.grid, geometry.block, args, geometry.shared_mem, stream, pdl)
        if not direct:
            finish = self.reduce_geometry
            reduce = self.reduce_to_element if rounded else self.reduce
            bias = 0 if grad_bias is None else grad_bias  # a null pointer the kernel never reads
            reduce.launch(finish.grid, finish.block, (grad_w, partials, bias), 0, stream, pdl)


def _bias_mismatch(bias_grad: bool, grad_bias: Any) -> str:
    """What is wrong where grad_bias is given without the layer's bias, or missing with it."""
    if bias_grad:
        return (
            "the layer has a bias (params.has_bias), so the kernels write its gradient: pass "
            "grad_bias, an f32 device array of params.c values; got None"
        )
    return (
        "grad_bias is given, but the layer has no bias (params.has_bias is False): "
        f"got {type(grad_bias).__name__}"
    )


@functools.cache
def wgrad_launch(params: Conv2dGw8Params, config: WgradConfig, device: int = 0) -> WgradLaunch:
    """Return the WgradLaunch of the layer params with config on device: checked, compiled
    (spio.jit cache) and loaded once (memoised)."""
    import spio.jit

    wgrad_spec.check_config(params, config)
    arch = spio.jit.device_info(device).arch
    module = compile_wgrad(params, config, arch).load(device=device)
    main = module.get_kernel(wgrad_spec.KERNEL_NAME)
    atomic = config.atomic_sums
    return WgradLaunch(
        main,
        module.get_kernel(wgrad_spec.REDUCE_KERNEL_NAME),
        module.get_kernel(wgrad_spec.REDUCE_TO_ELEMENT_KERNEL_NAME),
        spread_over_sms(main, wgrad_spec.launch_geometry(params, config)),
        wgrad_spec.reduce_geometry(params, config),
        wgrad_spec.workspace_bytes(params, config),
        wgrad_spec.partial_count(params, config) == 1 and not params.has_bias,
        params.has_bias,
        TensorMapCache(_row_maps(params, config), device) if config.tma and has_tma(arch) else None,
        module.get_kernel(wgrad_spec.ZERO_KERNEL_NAME) if atomic else None,
        wgrad_spec.zero_geometry(params) if atomic else None,
    )


@functools.cache
def stream_config_on(params: Conv2dGw8Params, config: WgradConfig, device: int = 0) -> WgradConfig:
    """Return config's tile walking segments of the stream of rows on device
    (wgrad_spec.stream_config): one segment per block of the segmented kernel that fits on
    the device at once (memoised). The kernel's occupancy is its own, which its registers
    decide: it is compiled for one block per SM first, and again where more fit."""
    import spio.jit

    wgrad_spec.check_config(params, config)
    sm_count = spio.jit.device_info(device).sm_count
    chosen = wgrad_spec.stream_config(params, config, sm_count)
    while True:
        main = wgrad_launch(params, chosen, device).main
        slots = grid_slots(main, wgrad_spec.launch_geometry(params, chosen))
        again = wgrad_spec.stream_config(params, config, slots)
        if again.segments <= chosen.segments:
            return chosen
        chosen = again


#: Share of the pass's compulsory bytes that fewer partial sums (each written once and read
#: once more) must save for segments to be taken on a grid whose waves are full: at
#: 256x512x7x7 7 x 7 (H200) two whole waves of 16 partials per group slice became 8
#: segments, saving half the pass's bytes: 46.0 -> 39.8 us.
SAVED_PARTIALS_SHARE = 0.10


def _saved_partials_share(
    params: Conv2dGw8Params, chunked: WgradConfig, segmented: WgradConfig
) -> float:
    """The partial sums' bytes (written and read back) segmented saves against chunked, as a
    share of the pass's compulsory bytes."""
    saved = wgrad_spec.workspace_bytes(params, chunked) - wgrad_spec.workspace_bytes(
        params, segmented
    )
    return 2 * saved / params.compulsory_bytes("wgrad")


@functools.cache
def balanced_config_on(
    params: Conv2dGw8Params, config: WgradConfig, device: int = 0
) -> WgradConfig:
    """Return config as it runs best on device by rule (memoised; compiles what it
    compares): its image's rows cut into even chunks (even_chunks), its tile walking
    segments where _balanced_walk says, then with the kernel's improvements where they fit
    (improved_config_on)."""
    walk = _balanced_walk(params, even_chunks(params, config), device)
    return improved_config_on(params, walk, device)


def improved_config_on(
    params: Conv2dGw8Params, config: WgradConfig, device: int = 0
) -> WgradConfig:
    """Return config with producer warps (producer_config_on), then padded slabs
    (padded_config_on), then the lanes' addresses in registers (lane_config_on), then the
    padding rows' products left out (pad_rows_config_on), each where its kernel keeps
    config's blocks per SM without spilling, and the partial sums' lines discarded after the
    reduction where that has paid (discard_config_on): the placement fields that no latency
    model knows, as a launch takes them."""
    producer = producer_config_on(params, config, device)
    lanes = lane_config_on(params, padded_config_on(params, producer, device), device)
    return discard_config_on(pad_rows_config_on(params, lanes, device))


def _balanced_walk(params: Conv2dGw8Params, config: WgradConfig, device: int) -> WgradConfig:
    """Return config, or the same tile walking segments (stream_config_on) where that kernel
    fits as many blocks per SM and config's grid takes more than one wave on device and
    fills less than WAVE_FILL of the block slots its waves take, or the segments' fewer
    partial sums save SAVED_PARTIALS_SHARE of the pass's bytes.

    From H200 runs, chunks against segments of the same tile in one process. Grids of
    several waves filling 61-76% of them gained: the heuristic's tiles at 96x64x64x64 40.1 ->
    34.9 us, 160x64x64x64 63.5 -> 49.8, 300x64x64x64 101.8 -> 87.5; the models' picks at
    320x64x64x64 122.4 -> 83.9, 200x64x56x56 61.2 -> 50.3, 100x128x32x32 20.8 -> 19.1.
    Grids filling 97% of theirs lost 2-3% (128x64x64x64 38.4 -> 39.4), or, where the
    segments' registers halved the blocks per SM, up to 31% (128x256x14x14 11.1 -> 16.1,
    32x64x64x64 12.7 -> 17.1). Grids of under a wave, the models' picks for small layers,
    lost 10-28% (8x64x56x56 5.9 -> 7.0, 2x512x7x7 7 x 7 5.5 -> 7.7, 64x128x7x7 1 x 1 2.6 ->
    2.9), though the heuristic's tile at 1x64x56x56 gained (6.4 -> 5.3).
    """
    if config.segments or config.block_r:
        return config  # (segments walk whole filters)
    geometry = wgrad_spec.launch_geometry(params, config)
    slots = grid_slots(wgrad_launch(params, config, device).main, geometry)
    waves = ceil_div(geometry.grid, slots)
    idle = waves > 1 and geometry.grid / (waves * slots) < WAVE_FILL
    # (The segments at this occupancy: the segmented kernel's is checked below.)
    estimate = wgrad_spec.stream_config(params, config, slots)
    if not fits(wgrad_spec.check_config, params, estimate):
        return config
    if not idle and _saved_partials_share(params, config, estimate) < SAVED_PARTIALS_SHARE:
        return config
    segmented = stream_config_on(params, config, device)
    segmented_geometry = wgrad_spec.launch_geometry(params, segmented)
    segmented_slots = grid_slots(wgrad_launch(params, segmented, device).main, segmented_geometry)
    return segmented if segmented_slots >= slots else config


@functools.cache
def producer_config_on(
    params: Conv2dGw8Params, config: WgradConfig, device: int = 0
) -> WgradConfig:
    """Return config with producer warps (WgradConfig.producer) where its rows arrive by TMA
    on device and that kernel fits as many blocks per SM without spilling, else config
    (memoised; compiles both).

    From H100 runs (2026-11-25, one process, the main kernel alone, 62 TMA tiles of 10
    layers in chunks and segments): 1.077x in geometric mean, 0.95-1.42x. The walks that
    kept few warps busy gained most (8x64x56x56 in 8-16 blocks 1.30-1.40x, 64x128x32x32
    1.25-1.30x); the models' tiles of large layers stayed within 2% (128x64x64x64 1.004x,
    128x64x56x56 1.008x); the worst were segments of 128x128x32x32 (0.95-0.97x). On the H200
    the models' tiles of 32x64x64x64 and 256x64x64x64 gained 1.06x each.
    """
    import spio.jit

    if not config.tma or not has_tma(spio.jit.device_info(device).arch):
        return config
    return _flag_if_it_fits(params, config, "producer", device)


@functools.cache
def padded_config_on(params: Conv2dGw8Params, config: WgradConfig, device: int = 0) -> WgradConfig:
    """Return config with padded slabs of partial sums (WgradConfig.padded_slabs) where that
    kernel fits as many blocks per SM without spilling, else config (memoised; compiles both).

    From H200 runs (2026-11-25, the models' picks, the main kernel alone, one process):
    32x64x64x64 11.22 -> 11.02 us, 128x64x64x64 36.98 -> 36.76, 256x64x64x64 69.38 -> 69.15,
    64x128x32x32 11.80 -> 11.69, 128x1024x16x16 42.27 -> 41.99, 32x256x16x16 5 x 5 8.02 ->
    7.64: the block's accumulator stores, all at the end of its walk, reach all 32 banks.
    """
    return _flag_if_it_fits(params, config, "padded_slabs", device)


@functools.cache
def lane_config_on(params: Conv2dGw8Params, config: WgradConfig, device: int = 0) -> WgradConfig:
    """Return config with the lanes' ldmatrix addresses in registers
    (WgradConfig.lane_registers) where that kernel fits as many blocks per SM without
    spilling, else config (memoised; compiles both).

    From an H100 run (2026-11-27, tools/wgrad_lane_check.py: the launchers' configs of 10
    layers, deterministic and with atomic sums, alternated in one process): 0.999-1.095x,
    1.03x in geometric mean. A row's walk went from 67 to 47 instructions (the sm_90 SASS of
    32x64x64x64's config); the walks that kept few warps busy gained most (8x64x56x56 5.88 ->
    5.49 us, 64x128x32x32 14.06 -> 13.51, 32x64x64x64 12.00 -> 11.66, with atomic sums 10.34 ->
    9.72), the large layers at the copy bandwidth stayed within 1% (128x64x64x64, 512x256x14x14).
    """
    return _flag_if_it_fits(params, config, "lane_registers", device)


@functools.cache
def pad_rows_config_on(
    params: Conv2dGw8Params, config: WgradConfig, device: int = 0
) -> WgradConfig:
    """Return config with the padding rows left out (WgradConfig.skip_pad_rows) where the
    blocks walk every filter row (no block_r), that kernel fits as many blocks per SM
    without spilling, the layer is padded above or below, and either the filter has at
    least PAD_ROWS_MIN_R rows (the padding rows' products left out) or the blocks walk
    several steps of images in row chunks (each step's rows below the image left out, and
    each step after the first starting below the padding row above it); else config
    (memoised; compiles both).

    From H200 runs (2026-11-29, tools/wgrad_pad_rows_check.py: the launcher's configs without
    and with, alternated in one process). 5 x 5 and 7 x 7 walks are bound by their mma: 10
    of 11 layers gained, most where more of the walks' input rows are padding
    (128x256x16x16 5 x 5, 20% of the rows, 21.60 -> 19.54 us; 256x512x7x7 7 x 7, 46%,
    45.59 -> 41.11; 256x128x8x8 5 x 5, 33%, 9.24 -> 8.58; 32x128x28x28 5 x 5, 11%, 1.042x;
    8x64x56x56 5 x 5, 6%, 1.021x), and 32x256x16x16 5 x 5 went 0.988x. A short walk split
    by filter rows, which waits on its loads, lost (1x64x16x16 5 x 5 2.52 -> 2.64 us). So
    did 3 x 3 walks, bound by their rows' loads: 0.91-1.02x (512x256x14x14 and
    128x1024x16x16 1.003x and 1.000x with 11-12.5% of their rows padding; 32x64x64x64
    0.91x, where the branch took the TMA tile from 82 to 96 registers).

    So the kernel leaves the products out only for filters of PAD_ROWS_MIN_R rows or more,
    and every walk of row chunks ends each step before the rows below the image, which have
    no grad_y row: it then loads fewer rows and meets at fewer barriers. 3 x 3 walks, H200
    (2026-11-29, tools/wgrad_variants_check.py, alternating in one process; the rows left
    out are 1 of each step's 16-18): walked 2 or 4 steps of 14 x 14 or 16 x 16 images,
    1.021-1.033x (128x1024x16x16 36.74 -> 35.58 us, 512x256x14x14 30.73 -> 29.95,
    256x512x14x14 29.76 -> 28.82, 64x1024x14x14, 256x256x14x14), at the same 82 registers;
    walks of one step, 1 row in 34-66, 0.988-1.000x (32x64x56x56, 32x64x64x64,
    128x64x64x64), so those are left alone. Each step after the first then also starts below
    the padding row above the image (its grad_y row 0 carried by the step before): with
    both, against neither, H200 (2026-11-29, the same tool): 1.041-1.054x on the five
    walked layers (512x256x14x14 31.02 -> 29.79 us, 128x1024x16x16 36.84 -> 35.32,
    256x256x14x14 17.29 -> 16.41), still 82 registers.
    """
    if config.skip_pad_rows or config.block_r:
        return config
    pad_top, pad_bottom = params.padding[:2]
    if pad_top == 0 and pad_bottom == 0:
        return config  # (no row of the walks is padding)
    if params.r < PAD_ROWS_MIN_R and (config.walk_n == 1 or config.segments):
        return config  # (no padding row in each of several steps)
    return _flag_if_it_fits(params, config, "skip_pad_rows", device)


#: Filter rows from which pad_rows_config_on leaves the padding rows' products out.
PAD_ROWS_MIN_R = 5


def discard_config_on(config: WgradConfig) -> WgradConfig:
    """Return config with its partial sums dropped from L2 once the reduce kernel has read
    them (WgradConfig.discard_partials) where its blocks hold at least DISCARD_MIN_GROUPS
    groups each and add no atomic sums, else config.

    From H100 runs (2026-11-27, the models' configs without and with, alternated in one
    process; docs/benchmarks.md, twenty-fifth session): every tile of 4 or 8 groups of 20
    layers gained, 1.014-1.122x (tools/wgrad_discard_check.py: 32x64x64x64 11.53 -> 10.28 us,
    128x64x64x64 50.35 -> 48.73, 64x128x32x32 13.54 -> 12.36); tiles of 1 or 2 groups went
    0.984-1.023x there and lost up to 8.5% in the prototype's runs (32x256x16x16 5 x 5 0.915x,
    16x128x28x28 0.958x), for a reason not found yet.
    """
    if config.discard_partials or config.atomic_sums or config.block_g < DISCARD_MIN_GROUPS:
        return config
    return dataclasses.replace(config, discard_partials=True)


#: Groups a block holds at least for discard_config_on to discard its partial sums.
DISCARD_MIN_GROUPS = 4


@functools.cache
def atomic_config_on(
    params: Conv2dGw8Params, config: WgradConfig, device: int = 0, reduced: bool = False
) -> WgradConfig:
    """Return config with atomic sums (WgradConfig.atomic_sums: the blocks add into one sum
    instead of writing partial sums for the reduce kernel) where its grid fits on device in
    one wave, and the atomic sums' kernel fits as many blocks per SM without spilling and
    takes within ATOMIC_REGISTER_SHIFT registers a thread of config's; else config
    (memoised; compiles both). Only for launches that allow results that vary from run to
    run in their last bits (deterministic=False). reduced: the launch runs the reduce kernel
    anyway (grad_w in the activations' dtype, or a bias gradient), to copy and round the one
    sum; then only where config's blocks make at least ATOMIC_REDUCED_MIN_SUMS partial sums
    of each weight.

    From runs of 16 layers (2026-11-25, the models' picks against the same configs with atomic
    sums, one process: tools/wgrad_atomic_check.py): every grid the rule takes is one wave,
    whose blocks finish together so that the reduction runs alone after them; there the H200
    gained 1.02-1.13x on 14 of the 15 layers it took (32x64x64x64 11.39 -> 10.10 us,
    128x64x64x64 37.07 -> 34.22) and lost 0.97x on 128x1024x16x16, the H100 gained 1.03-1.17x on
    all 16. Of two grids of several waves timed (the heuristic's tiles, H200), 512x64x64x64 lost
    0.945x and 256x64x64x64 gained 1.027x: there the partial sums of early waves are written
    while later waves walk, and hundreds of blocks' atomic adds per weight cost the L2 more than
    the reduction did.
    """
    if config.atomic_sums:
        return config
    if reduced and wgrad_spec.block_sums(params, config) < ATOMIC_REDUCED_MIN_SUMS:
        return config
    # (No partial sums to discard: the reduce kernel, where it runs, reads the one sum.)
    variant = dataclasses.replace(config, atomic_sums=True, discard_partials=False)
    if not fits(wgrad_spec.check_config, params, variant):
        return config
    base = wgrad_launch(params, config, device).main
    atomic = wgrad_launch(params, variant, device).main
    if abs(atomic.attributes.registers - base.attributes.registers) > ATOMIC_REGISTER_SHIFT:
        return config
    geometry = wgrad_spec.launch_geometry(params, config)
    if geometry.grid > grid_slots(base, geometry):
        return config
    return _variant_if_it_fits(params, config, variant, device)


#: Registers a thread by which atomic_config_on lets the atomic sums' kernel differ from the
#: partial sums' one. Without the block's own partial sum to index, the compiler lays out
#: the whole kernel anew; where the registers moved far, so did the walk: the heuristic's
#: tile of 32x64x64x64 and 64x128x32x32 (H200) went from 63 to 54 registers and from 4.1 M
#: to 7.4 M instructions executed, 12.3 -> 15.3 us a pass (0.80x), where the other layers
#: measured moved by at most one register.
ATOMIC_REGISTER_SHIFT = 4

#: Partial sums of each weight below which atomic_config_on keeps them where the launch
#: reduces anyway. With grad_w in the activations' dtype (H200, 15 layers, the models'
#: configs, wgrad alone) the atomic sums gained 1.02-1.06x where the blocks made 128-256
#: partial sums of each weight (32x64x64x64 11.68 -> 11.18 us, 128x64x56x56 30.53 ->
#: 28.79) and 0.92-1.06x where they made 16-64 (128x1024x16x16 40.11 -> 43.39,
#: 128x128x32x32 21.63 -> 20.42): the zero kernel and the copy of the one sum then cost
#: about what the reduction of the few partials saved. In a training step
#: (spio.torch.bench_step) 128x256x14x14, 64 partial sums, went from 32.5 to 35.4 us and
#: 128x128x32x32 stayed at 64 us.
ATOMIC_REDUCED_MIN_SUMS = 128


def _flag_if_it_fits(
    params: Conv2dGw8Params, config: WgradConfig, flag: str, device: int
) -> WgradConfig:
    """config with the placement flag `flag` set where that kernel fits
    (_variant_if_it_fits), else config; config as it is where the flag is set already."""
    if getattr(config, flag):
        return config
    return _variant_if_it_fits(params, config, dataclasses.replace(config, **{flag: True}), device)


def _variant_if_it_fits(
    params: Conv2dGw8Params, config: WgradConfig, variant: WgradConfig, device: int
) -> WgradConfig:
    """variant where its kernel runs params, uses no more local memory than config's and
    fits as many blocks per SM, else config (compiles both)."""
    if not fits(wgrad_spec.check_config, params, variant):
        return config
    base = wgrad_launch(params, config, device).main
    changed = wgrad_launch(params, variant, device).main
    if changed.attributes.local_mem > base.attributes.local_mem:
        return config
    slots = grid_slots(base, wgrad_spec.launch_geometry(params, config))
    variant_slots = grid_slots(changed, wgrad_spec.launch_geometry(params, variant))
    return variant if variant_slots >= slots else config


def _row_maps(params: Conv2dGw8Params, config: WgradConfig) -> Any:
    """A function of (x, grad_y) addresses to the main kernel's two tensor maps: boxes of one
    ring row of one image (the input's row with the S - 1 halo)."""
    input_shape = (params.n, params.h, params.w, params.c)
    output_shape = (params.n, params.p, params.q, params.c)
    columns = wgrad_spec.input_columns(params, config)

    def make(pointers: tuple[int, ...]) -> tuple[Any, Any]:
        x, grad_y = pointers
        return (
            nhwc_row_map(x, input_shape, columns, config.block_g),
            nhwc_row_map(grad_y, output_shape, config.block_q, config.block_g),
        )

    return make


def default_tile_on(params: Conv2dGw8Params, device: int = 0) -> WgradConfig:
    """Return the heuristic's tile for device, before its walk is balanced: wgrad_heuristic's
    default for the device's SM count, on a GPU with TMA with 8 groups and TMA rows where
    the grid stays full (wgrad_heuristic.tma_tile), and a small layer's short walk as blocks
    of one filter row each (wgrad_heuristic.split_walk_tile). Compiles nothing."""
    import spio.jit

    info = spio.jit.device_info(device)
    tile = wgrad_heuristic.default_config(params, info.sm_count)
    if has_tma(info.arch):
        tile = wgrad_heuristic.tma_tile(params, tile, info.sm_count)
    return wgrad_heuristic.split_walk_tile(params, tile, info.sm_count)


@functools.cache
def default_config_on(params: Conv2dGw8Params, device: int = 0) -> WgradConfig:
    """Return the wgrad config a launch without one runs on device (memoised): the
    heuristic's tile (default_tile_on), its rows in even chunks, walking segments where its
    waves would leave SMs idle, with the kernel's improvements (balanced_config_on).
    (Unlike fprop's, its walks are not shortened to even out the last wave: on an H200 that
    was 3-11% slower at 96, 160, 300 and 320 images of 64x64x64 and 2% faster at 192, the
    partial sums doubling with the blocks.)"""
    return balanced_config_on(params, default_tile_on(params, device), device)


def get_wgrad_kernels(
    params: Conv2dGw8Params, config: WgradConfig, device: int = 0
) -> tuple[Any, Any, Any]:
    """Return the loaded (main, reduce, reduce_to_element) spio.jit.Kernels for params and
    config (memoised)."""
    launch = wgrad_launch(params, config, device)
    return launch.main, launch.reduce, launch.reduce_to_element


def wgrad_workspace_bytes(
    params: Conv2dGw8Params,
    config: WgradConfig | None = None,
    device: int = 0,
    grad_w_dtype: str = GRAD_W_F32,
    deterministic: bool = True,
) -> int:
    """Bytes of workspace conv2d_gw8_wgrad needs for params and config (None: the config a
    launch without one runs on device, default_config_on, which asks the device for its SM
    count), grad_w_dtype and deterministic (as conv2d_gw8_wgrad takes them); 0 where the
    config makes one partial sum per weight, grad_w is f32 and the layer has no bias (the
    main kernel writes grad_w)."""
    check_params(params)
    rounded = _rounded(grad_w_dtype, params)
    return _workspace_bytes(
        params, _launched_config(params, config, device, deterministic, rounded), rounded
    )


def _workspace_bytes(params: Conv2dGw8Params, config: WgradConfig, rounded: bool) -> int:
    """Bytes of workspace a launch of config needs (0: the main kernel writes grad_w)."""
    if wgrad_spec.partial_count(params, config) == 1 and not rounded and not params.has_bias:
        return 0
    return wgrad_spec.workspace_bytes(params, config)


def _launched_config(
    params: Conv2dGw8Params,
    config: WgradConfig | None,
    device: int,
    deterministic: bool,
    rounded: bool,
) -> WgradConfig:
    """The config a launch runs: config as given, else default_config_on's, with atomic sums
    where they pay (atomic_config_on) unless deterministic. ValueError for a config with
    atomic sums where deterministic asks for the same bits on every run."""
    if not isinstance(deterministic, bool):
        raise TypeError(f"deterministic must be a bool, got {deterministic!r}")
    if config is None:
        config = default_config_on(params, device)
        if deterministic:
            return config
        return atomic_config_on(params, config, device, rounded or params.has_bias)
    if not isinstance(config, WgradConfig):  # (its fitness is wgrad_launch's to check, once)
        raise TypeError(f"config must be a WgradConfig, got {type(config).__name__}")
    if config.atomic_sums and deterministic:
        raise ValueError(
            "config.atomic_sums adds the blocks' sums in an order that varies from run to run, "
            "so the result's last bits do too: pass deterministic=False to run it (got "
            "deterministic=True)"
        )
    return config


def _rounded(grad_w_dtype: str, params: Conv2dGw8Params) -> bool:
    """Whether grad_w_dtype asks for grad_w in the activations' dtype (else f32); raises
    ValueError for any other."""
    if grad_w_dtype == GRAD_W_F32:
        return False
    if grad_w_dtype == params.dtype:
        return True
    raise ValueError(
        f"grad_w_dtype must be {GRAD_W_F32!r} or the activations' dtype {params.dtype!r}, "
        f"got {grad_w_dtype!r}"
    )


def _torch_workspace(like: Any, nbytes: int) -> Any:
    import torch

    return torch.empty(nbytes // 4, dtype=torch.float32, device=like.device)


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
    grad_w_dtype: str = GRAD_W_F32,
    grad_bias: Any = None,
    deterministic: bool = True,
) -> None:
    """Compute grad_w, the weight gradient of conv2d(x, w) for grad_y, in f32 (asynchronously),
    and with params.has_bias the bias gradient grad_bias too.

    params describe the layer. grad_w (c x r x s x 8, Spio's weight layout, float32), x (n x h x
    w x c) and grad_y (n x p x q x c, both params.dtype) are contiguous device arrays: torch
    tensors, objects with __cuda_array_interface__, or device pointers. workspace is device
    memory of at least wgrad_workspace_bytes(params, config, grad_w_dtype=...,
    deterministic=...) bytes for the partial sums, scratch whose contents are undefined
    afterwards (the reduce kernel may drop them from L2 unwritten: discard_config_on); None
    allocates it with torch when x is a torch tensor. A config with one partial sum per
    weight needs none for an f32 grad_w: the main kernel writes grad_w and the reduction is
    skipped. Every array starts on a 16-byte
    boundary (the kernels move 16-byte cells; torch allocations do). The result is the same bits
    on every run unless deterministic=False (below). The arrays are checked as
    conv2d_gw8_fprop checks its own (grad_w of float32, or grad_w_dtype; a workspace that
    describes itself must hold the bytes); config None takes default_config_on(params,
    device); device and stream as conv2d_gw8_fprop. pdl (sm_90 and newer) launches both kernels with
    programmatic dependent launch: the main kernel's blocks are placed while the previous kernel
    finishes, and the reduce kernel's while the main kernel's last blocks run; False launches
    them the ordinary way. The result is the same bits either way.

    grad_w_dtype: "float32" (the default), or params.dtype for a grad_w of the activations'
    dtype: each weight's f32 sum rounded once, to nearest even, as it is written (the same
    bits as the f32 result cast afterwards, without the f32 array or the cast). A ValueError
    names any other.

    grad_bias: for a layer with a bias (params.has_bias), and only then, an f32 device array
    of params.c values that takes the bias gradient, grad_y summed over images, rows and
    columns per channel: the main kernel adds grad_y up as it reads it for the weights, so
    the bias costs no pass over grad_y of its own. The same bits on every run; the launch
    then always reduces from the workspace.

    deterministic: True (the default) gives the same bits on every run. False lets a launch
    without a config add the blocks' sums into one with atomic adds where that pays
    (atomic_config_on; a config with atomic_sums needs it): no partial sums and no
    reduction, 1.02-1.17x on most layers measured (H200, H100), but the order of the additions,
    and so the last bits of the sums, vary from run to run. A config with atomic_sums and
    deterministic=True raises ValueError.
    """
    check_params(params)
    rounded = _rounded(grad_w_dtype, params)
    if (grad_bias is not None) != params.has_bias:
        raise ValueError(_bias_mismatch(params.has_bias, grad_bias))
    check_weights("grad_w", grad_w, params, params.dtype if rounded else GRAD_W_F32)
    check_activation("x", x, params.input_shape, params.dtype)
    check_activation("grad_y", grad_y, params.output_shape, params.dtype)
    if grad_bias is not None:
        check_vector("grad_bias", grad_bias, params.c, GRAD_W_F32)
    device = resolve_device(device, x)
    config = _launched_config(params, config, device, deterministic, rounded)
    if workspace is not None:
        check_workspace(workspace, _workspace_bytes(params, config, rounded))
    wgrad_launch(params, config, device)(
        grad_w, x, grad_y, workspace, stream, pdl, rounded, grad_bias
    )
