"""Autotuning: a latency model shortlists a layer's configs, and the GPU times the shortlist.

A model's single pick is a prediction, and on a few layers in twenty it is 10-40% off
(held-out p95 regret 13.5-22.1%, docs/perfmodel). The fastest of its AUTOTUNE_CANDIDATES
best-predicted configs and the heuristic's, timed on the device, held out: p95 2.2-6.7% on
both GPUs and every pass (median 0.0%). That costs a layer's first call of each pass a
compile per candidate (side by side in threads; cached on disk after the first run) and
some milliseconds of GPU time, once per process, so it is opt-in:
`SPIO_CONFIG_SELECTION=autotune` (choose_config), or `tune_config` on request. wgrad's
shortlist also holds each candidate's other walks on the device (segments, deeper
prefetch: _select._with_walks), which no model scores.

Timing: every candidate runs on the same buffers, allocated on the device for the layer and
zero-filled (a config's time does not depend on the values). Before each repetition a wait
kernel holds the stream while the host queues TIMING_LAUNCHES launches behind it, so that
the events time the GPU alone: a small layer's kernel is shorter than a launch's host cost,
and a loop of host launches would time the host. Where the wait was over before the host
had queued them all, the repetition is timed again with a wait twice as long. Each
candidate's time is the median of TIMING_REPS repetitions, after TIMING_WARMUP launches.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import statistics
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from spio.kernels.conv2d_gw8.params import Conv2dGw8Params

from ._model import LatencyModel

#: The model's best-predicted configs a tuning times (with the heuristic's config and, on a
#: layer the model was trained on, the config measured fastest there). Held out, top 4 and
#: the heuristic gave p95 regret 2.2-6.7%; top 2, 5.9-9.8%; top 8, 0.0-2.8% (docs/perfmodel).
AUTOTUNE_CANDIDATES = 4
#: The shortlist where the model is another GPU's (no model ships for this one). Held out,
#: the H200's model shortlisting for the H100 and the H100's for the H200: p95 regret 3.7-7.7%
#: with 4 and the heuristic, 0.0-3.9% with 8 (docs/perfmodel).
PROXY_CANDIDATES = 8
TIMING_LAUNCHES = 10
TIMING_REPS = 5
TIMING_WARMUP = 2
#: How long the wait kernel first holds the stream while the host queues a repetition's
#: launches (a launch costs the host 5-20 us); doubled, up to WAIT_DOUBLINGS times, while the
#: host is slower than that.
WAIT_NS = 250_000
WAIT_DOUBLINGS = 4
#: Threads that compile a shortlist's kernels side by side on a cold cache.
COMPILE_THREADS = 8
#: Bytes of an activation or weight element (float16 and bfloat16, Conv2dGw8Params' dtypes).
ELEMENT_BYTES = 2

_WAIT_SOURCE = r"""
extern "C" __global__ void spio_autotune_wait(unsigned long long ns) {
    unsigned long long start;
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
"""


def candidates(
    model: LatencyModel,
    params: Conv2dGw8Params,
    heuristic: Any,
    count: int = AUTOTUNE_CANDIDATES,
) -> list[Any]:
    """The configs a tuning of params times, without repeats: the config the model's data
    measured fastest on this very layer (if any; campaigns time layers without bias), the
    model's `count` best-predicted configs of the whole space, and the heuristic's config."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be an int >= 1, got {count!r}")
    measured = model.measured_config(dataclasses.replace(params, has_bias=False))
    shortlist = [] if measured is None else [measured]
    shortlist += model.top_configs(params, count)
    shortlist.append(heuristic)
    return list(dict.fromkeys(shortlist))


def time_configs(
    pass_name: str, params: Conv2dGw8Params, configs: Sequence[Any], device: int = 0
) -> list[float]:
    """GPU microseconds of one launch of each config of pass_name on params (see the module
    doc for how). Compiles and loads each config (spio.jit's cache), and synchronizes the
    device first, so that work queued before does not run beside the timing. MemoryError
    where the device has no room for the layer's buffers (they come from cuda.core's memory
    pool, not PyTorch's)."""
    import spio.jit

    # The calling thread's current context (PyTorch's current device, for one) is restored
    # after: the device's primary context is current only for the timing.
    with spio.jit.using_device(device):
        return _time_on(pass_name, params, configs, device)


def _time_on(
    pass_name: str, params: Conv2dGw8Params, configs: Sequence[Any], device: int
) -> list[float]:
    from cuda.core import Device

    launch_of, buffer_sizes = _PASS_LAUNCHES[pass_name]
    gpu = Device(device)
    gpu.set_current()  # the primary context that using_device made current: cuda.core's handle
    sizes = [max(size, 16) for size in buffer_sizes(params, configs, device)]
    stream = gpu.create_stream()
    buffers: list[Any] = []
    try:
        try:
            for size in sizes:
                buffers.append(gpu.allocate(size, stream=stream))
        except Exception as error:
            # Only the device's lack of room is one a tuning may run its choice untimed
            # after (_select); any other error is a fault to see.
            if not _out_of_memory(error):
                raise
            raise MemoryError(
                f"timing {pass_name} configs for {params} needs {sum(sizes)} bytes of memory "
                f"on device {device}: {error}"
            ) from error
        _compile_side_by_side(pass_name, params, configs, device)
        launches = [launch_of(params, config, device) for config in configs]
        for buffer in buffers:
            buffer.fill(0, stream=stream)
        wait = _wait_kernel(device)
        pointers = [int(buffer.handle) for buffer in buffers]
        gpu.sync()
        return [_time_one(launch, pointers, wait, stream) for launch in launches]
    finally:
        stream.sync()
        for buffer in buffers:
            buffer.close()
        stream.close()


def _out_of_memory(error: BaseException) -> bool:
    """Whether error is cuda.core's CUDAError for an allocation the device had no room for
    (its message names the CUresult; the class lives in a private module of cuda.core)."""
    return type(error).__name__ == "CUDAError" and "CUDA_ERROR_OUT_OF_MEMORY" in str(error)


def _compile_side_by_side(
    pass_name: str, params: Conv2dGw8Params, configs: Sequence[Any], device: int
) -> None:
    """Compile the configs' kernels in threads (NVRTC lets go of the GIL: on two cores four
    fprop configs took 0.81 s instead of 1.16), so that loading them one by one finds them in
    spio.jit's cache. Nothing to gain where the cache is off, or with one config."""
    import spio.jit
    from spio.kernels.conv2d_gw8 import dgrad, fprop, wgrad

    workers = min(len(configs), os.cpu_count() or 1, COMPILE_THREADS)
    if workers < 2 or not spio.jit.cache_info().enabled:
        return
    requests_of: dict[str, Callable[[Conv2dGw8Params, Any, str], Any]] = {
        "fprop": fprop.compile_request,
        "dgrad": dgrad.compile_request,
        "wgrad": wgrad.compile_request,
    }
    request_of = requests_of[pass_name]
    arch = spio.jit.device_info(device).arch
    requests = [request_of(params, config, arch) for config in configs]
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(fprop.compile_requested, requests))


def _time_one(launch: Any, pointers: list[int], wait: Any, stream: Any) -> float:
    from cuda.core import EventOptions

    timing = EventOptions(timing_enabled=True)
    for _ in range(TIMING_WARMUP):
        launch(*pointers, stream=stream)
    times: list[float] = []
    wait_ns = WAIT_NS
    while len(times) < TIMING_REPS:
        wait.launch(1, 1, (wait_ns,), 0, stream)
        start = stream.record(options=timing)
        for _ in range(TIMING_LAUNCHES):
            launch(*pointers, stream=stream)
        # The wait kernel still running: the launches were all queued before the first ran.
        queued_in_time = not start.is_done
        end = stream.record(options=timing)
        end.sync()
        if queued_in_time or wait_ns >= WAIT_NS << WAIT_DOUBLINGS:
            times.append((end - start) * 1000.0 / TIMING_LAUNCHES)
        else:
            wait_ns *= 2
    return statistics.median(times)


@functools.cache
def _wait_kernel(device: int) -> Any:
    import spio.jit

    arch = spio.jit.device_info(device).arch
    module = spio.jit.compile(_WAIT_SOURCE, arch=arch, name="spio_autotune_wait.cu")
    return module.load(device=device).get_kernel("spio_autotune_wait")


def _activation_bytes(params: Conv2dGw8Params) -> tuple[int, int]:
    """Bytes of the input (N x H x W x C) and of the output (N x P x Q x C)."""
    return (
        params.n * params.h * params.w * params.c * ELEMENT_BYTES,
        params.n * params.p * params.q * params.c * ELEMENT_BYTES,
    )


def _weight_bytes(params: Conv2dGw8Params, element: int) -> int:
    return params.c * params.r * params.s * 8 * element


def _fprop_sizes(params: Conv2dGw8Params, configs: Sequence[Any], device: int) -> list[int]:
    """y, x, w and (with bias) the f32 bias: fprop's arguments."""
    x, y = _activation_bytes(params)
    sizes = [y, x, _weight_bytes(params, ELEMENT_BYTES)]
    return sizes + ([params.c * 4] if params.has_bias else [])


def _dgrad_sizes(params: Conv2dGw8Params, configs: Sequence[Any], device: int) -> list[int]:
    """grad_x, grad_y and w: dgrad's arguments."""
    x, y = _activation_bytes(params)
    return [x, y, _weight_bytes(params, ELEMENT_BYTES)]


def _wgrad_sizes(params: Conv2dGw8Params, configs: Sequence[Any], device: int) -> list[int]:
    """grad_w (f32), x, grad_y and the largest workspace of the configs: wgrad's arguments."""
    from spio.kernels.conv2d_gw8.wgrad import wgrad_workspace_bytes

    x, y = _activation_bytes(params)
    workspace = max(wgrad_workspace_bytes(params, config, device) for config in configs)
    return [_weight_bytes(params, 4), x, y, workspace]


def _fprop_launch(params: Conv2dGw8Params, config: Any, device: int) -> Callable[..., None]:
    from spio.kernels.conv2d_gw8 import fprop_launch

    return fprop_launch(params, config, device)


def _dgrad_launch(params: Conv2dGw8Params, config: Any, device: int) -> Callable[..., None]:
    from spio.kernels.conv2d_gw8 import dgrad_launch

    return dgrad_launch(params, config, device)


def _wgrad_launch(params: Conv2dGw8Params, config: Any, device: int) -> Callable[..., None]:
    from spio.kernels.conv2d_gw8 import wgrad_launch

    return wgrad_launch(params, config, device)


_PASS_LAUNCHES: dict[str, tuple[Callable[..., Any], Callable[..., list[int]]]] = {
    "fprop": (_fprop_launch, _fprop_sizes),
    "dgrad": (_dgrad_launch, _dgrad_sizes),
    "wgrad": (_wgrad_launch, _wgrad_sizes),
}
