"""spio.torch.precompile: a model's kernels compiled side by side before its first step.

Each of a model's Spio convolutions compiles its kernels with NVRTC at its first call at a
shape: on the 2-core development machine 0.4-0.8 s a kernel, and a layer's three passes
take a few kernels each (the chosen config's, and the heuristic's, whose registers the
choice reads), one layer after another; each geometry of a Spio matrix product (a linear
layer's forward and its two gradients) compiles one. So a cold first step of a network of a
dozen layer shapes waits tens of seconds, once per shape, machine and kernel version
(spio-jit's disk cache keeps the kernels).

precompile records the calls of Spio's operators the model makes on fake tensors
(_precompile_calls) and prepares every kernel a training step will run for them in a pool
of threads: a convolution's passes with the configs choose_config picks (the layer's
`_cuda_passes.LayerPlan`, which the calls then find ready), and each product's kernel
(`_matmul.product_launch`).

The threads wait on NVRTC, which runs in worker processes (spio.jit.compile_in_workers):
within one process its compiles do not run side by side past about four threads. On a
16-core H100 host, 32 compiles took 15.8 s in one thread and 5.5 s in 16, where 16 worker
processes took 1.7 s; precompile's 133 compiles for bench_precompile's 46 kernels took 26.3 s
in 16 threads, each compile 2.3 s against 0.5 s alone (2026-12-06). A pass's preparation is
a chain: wgrad's launcher compiles up to eight variants one after another (producer warps,
padded slabs, ...), each chosen from the registers of the last, so once the compiles run
side by side the longest chains bound the whole; the wgrad passes start first.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Protocol

import spio.jit
import torch
from spio.kernels.conv2d_gw8 import Conv2dGw8Params
from spio.kernels.matmul import MatmulParams, default_config_on
from spio.perfmodel import selection_mode

from ._cuda_passes import LayerPlan, layer_plan
from ._matmul import product_launch
from ._precompile_calls import LayerCall, Recorded, record_calls

#: The most threads (and compile worker processes) precompile starts by default: each NVRTC
#: compile holds about 130 MB of host memory while it runs.
MAX_THREADS = 16


@dataclass(frozen=True)
class PrecompiledPass:
    """A kernel precompile prepared: `pass_name` ("fprop", "dgrad", "wgrad", "wgrad_bias": the
    weight and bias gradients from one walk, or "mm": a matrix product) of `params` (the
    layer's Conv2dGw8Params, or the product's MatmulParams) on cuda:`device`, with `config`,
    the config it runs (choose_config's for a convolution, default_config_on's for a
    product)."""

    params: Conv2dGw8Params | MatmulParams
    pass_name: str
    device: int
    config: Any


@dataclass(frozen=True)
class Precompiled:
    """What precompile prepared: each pass of each distinct layer and each distinct product,
    in the order of their first calls, how long it took and in how many threads."""

    passes: tuple[PrecompiledPass, ...]
    seconds: float
    threads: int

    @property
    def layers(self) -> int:
        """The number of distinct convolution layers (shape, filter, padding, dtype, bias,
        device)."""
        return sum(p.pass_name == "fprop" for p in self.passes)

    @property
    def products(self) -> int:
        """The number of distinct matrix products (forward and gradients alike)."""
        return sum(p.pass_name == "mm" for p in self.passes)

    def __str__(self) -> str:
        if not self.passes:
            return "precompile: no Spio operator ran on a CUDA device"
        return (
            f"precompile: {len(self.passes)} kernels' passes ({self.layers} convolution "
            f"layers, {self.products} matrix products) ready in {self.seconds:.1f} s "
            f"({self.threads} threads)"
        )


def precompile(
    model: torch.nn.Module,
    *inputs: torch.Tensor | tuple[Any, ...],
    backward: bool = True,
    threads: int | None = None,
    progress: bool = False,
) -> Precompiled:
    """Compile and load, side by side, the kernels of every Spio convolution and matrix
    product that model calls on a CUDA device for each of inputs, and of their gradients;
    return what was prepared.

    The model runs once per input on fake tensors: nothing is computed or launched, no GPU
    memory is taken, and its parameters and buffers stay as they are (batch norm's running
    statistics and count of batches too). Give it every input shape a run will see: the
    training batch, the last, smaller batch of an epoch, a validation batch size, each
    resolution. An input's values are never read, so torch.empty serves:

        spio.torch.precompile(
            model,
            torch.empty(256, 3, 224, 224, device="cuda"),
            torch.empty(80, 3, 224, 224, device="cuda"),  # the epoch's last batch
        )

    Call it as the step runs: under the same torch.autocast, after convert and .to(), on the
    eager model (wrap it in torch.compile afterwards, if at all; of a DistributedDataParallel,
    pass its .module). Calls at those shapes then find their kernels loaded, so their first
    step compiles nothing (nor does a later process: the kernels stay in spio-jit's disk
    cache).

    Args:
        model: the model (an nn.Module) whose Spio operators to prepare.
        inputs: one example call each: a tensor, model(tensor), or a tuple of model's
            positional arguments, model(*arguments).
        backward: also prepare the gradients' kernels, as a training step runs them (a
            convolution's dgrad where its input requires a gradient and wgrad where its
            weight does; a product's grad @ b.t() and a.t() @ grad likewise); False for
            inference (the model then runs under torch.no_grad()).
        threads: how many kernels are prepared at once, each thread's NVRTC compiles run
            in one of as many worker processes (spio.jit.compile_in_workers); None: the CPUs
            this process may use, at most MAX_THREADS. With SPIO_CONFIG_SELECTION=autotune
            one at a time, whatever threads says: each tuning times its candidates on the
            device (and compiles them side by side itself).
        progress: show a progress bar (tqdm) of the kernels prepared.

    Raises:
        TypeError, ValueError: an argument out of range (named in the message).
        RuntimeError: the model's forward pass needed a tensor's value (fake tensors have
            none), or precompile was called while a CUDA graph is being captured.
        Whatever preparing a kernel raised (a spio.jit.CompileError, say), with a note naming
            the layer or product and the pass.
    """
    calls_args = _checked_arguments(model, inputs, backward, threads, progress)
    if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
        raise RuntimeError(
            "precompile compiles and loads kernels, which CUDA-graph capture does not allow: "
            "call it before capturing"
        )
    start = time.perf_counter()
    tasks = _tasks(record_calls(model, calls_args, backward), backward)
    count = _thread_count(threads, len(tasks))
    _prepare_all(tasks, count, progress)
    passes = tuple(task.prepared() for task in tasks)
    return Precompiled(passes, time.perf_counter() - start, count)


class _Task(Protocol):
    """One kernel to prepare."""

    def prepare(self) -> None: ...

    def prepared(self) -> PrecompiledPass: ...


@dataclass(frozen=True)
class _LayerTask:
    """One pass of one convolution layer: LayerPlan.launch's arguments."""

    plan: LayerPlan
    pass_name: str
    atomic_sums: bool
    rounded: bool

    def prepare(self) -> None:
        self.plan.launch(self.pass_name, self.atomic_sums, self.rounded)

    def prepared(self) -> PrecompiledPass:
        # "wgrad_bias" runs wgrad's config.
        config = self.plan.config("wgrad" if self.pass_name == "wgrad_bias" else self.pass_name)
        return PrecompiledPass(self.plan.params, self.pass_name, self.plan.device, config)

    def __str__(self) -> str:
        return f"{self.pass_name} of {self.plan.params} on cuda:{self.plan.device}"


@dataclass(frozen=True)
class _ProductTask:
    """One matrix product's kernel: product_launch's arguments."""

    params: MatmulParams
    device: int

    def prepare(self) -> None:
        product_launch(self.params, self.device)

    def prepared(self) -> PrecompiledPass:
        config = default_config_on(self.params, self.device)
        return PrecompiledPass(self.params, "mm", self.device, config)

    def __str__(self) -> str:
        return f"the product {self.params} on cuda:{self.device}"


def _tasks(recorded: Recorded, backward: bool) -> list[_Task]:
    """The kernels of the recorded calls on CUDA devices, each once: the layers' passes
    (validated first, so that a layer out of scope fails before any compile), then the
    products."""
    layers = [call for call in recorded.layers if call.device.type == "cuda"]
    # (A layer called with and without its input requiring a gradient is two calls of one
    # plan: dicts keep each kernel once.)
    passes = {
        _LayerTask(plan, *launch): None
        for call, plan in _plans(layers)
        for launch in call.passes(backward)
    }
    products = {
        _ProductTask(params, _device_index(call.device)): None
        for call in recorded.products
        if call.device.type == "cuda"
        for params in call.products(backward)
    }
    return [*passes, *products]


def _plans(calls: Iterable[LayerCall]) -> list[tuple[LayerCall, LayerPlan]]:
    """Each call with its layer's LayerPlan."""
    return [
        (
            call,
            layer_plan(
                call.input_size,
                call.kernel_size,
                call.padding,
                call.dtype,
                call.has_bias,
                _device_index(call.device),
            ),
        )
        for call in calls
    ]


def _device_index(device: torch.device) -> int:
    return torch.cuda.current_device() if device.index is None else device.index


def _thread_count(threads: int | None, tasks: int) -> int:
    """The threads that prepare the tasks: one under autotuning (see precompile)."""
    if selection_mode() == "autotune":
        return 1
    count = min(_cpu_count(), MAX_THREADS) if threads is None else threads
    return max(1, min(count, tasks))


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _longest_first(task: _Task) -> int:
    """The rank of task in the order the pool starts them (wgrad's first)."""
    return 0 if getattr(task, "pass_name", "").startswith("wgrad") else 1


def _prepare_all(tasks: Sequence[_Task], threads: int, progress: bool) -> None:
    """Run every task's prepare in `threads` threads, NVRTC's compiles in as many worker
    processes; raise the first error (noting its task) once the tasks already running have
    ended, the ones not started cancelled."""
    from tqdm.auto import tqdm

    with (
        spio.jit.compile_in_workers(threads),
        tqdm(total=len(tasks), desc="spio precompile", unit="kernel", disable=not progress) as bar,
    ):
        pool = ThreadPoolExecutor(threads, thread_name_prefix="spio-precompile")
        futures: dict[Future[None], _Task] = {
            pool.submit(task.prepare): task for task in sorted(tasks, key=_longest_first)
        }
        try:
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_EXCEPTION)
                for future in done:
                    error = future.exception()
                    if error is not None:
                        error.add_note(f"(while spio.torch.precompile prepared {futures[future]})")
                        raise error
                    bar.update()
        finally:
            # On an error or Ctrl-C: what has not started never will; a compile under way
            # runs to its end (NVRTC cannot be stopped), a second or so.
            pool.shutdown(wait=True, cancel_futures=True)


def _checked_arguments(
    model: Any, inputs: tuple[Any, ...], backward: Any, threads: Any, progress: Any
) -> list[tuple[Any, ...]]:
    """Each input as the tuple of model's positional arguments, after checking every
    argument of precompile."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    if not inputs:
        raise ValueError(
            "precompile needs at least one example input, such as "
            "torch.empty(256, 3, 224, 224, device='cuda') for a batch of 256 images"
        )
    for index, example in enumerate(inputs):
        if not isinstance(example, torch.Tensor | tuple):
            raise TypeError(
                f"inputs[{index}] must be a tensor or a tuple of the model's positional "
                f"arguments, got {type(example).__name__}"
            )
    for name, flag in (("backward", backward), ("progress", progress)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be True or False, got {flag!r}")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)):
        raise TypeError(f"threads must be a positive int or None, got {threads!r}")
    if threads is not None and threads < 1:
        raise ValueError(f"threads must be a positive int or None, got {threads}")
    return [example if isinstance(example, tuple) else (example,) for example in inputs]
