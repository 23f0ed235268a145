"""spio.torch.precompile: a model's kernels compiled side by side before its first step.

Each of a model's Spio convolutions compiles its kernels with NVRTC at its first call at a
shape: on the 2-core development machine 0.4-0.8 s a kernel, and a layer's three passes
take a few kernels each (the chosen config's, and the heuristic's, whose registers the
choice reads), one layer after another. So a cold first step of a network of a dozen layer
shapes waits tens of seconds, once per shape, machine and kernel version (spio-jit's disk
cache keeps the kernels).

precompile runs the model's forward pass on fake tensors (torch's FakeTensorMode: shapes,
dtypes, devices and strides, no values, no GPU memory, nothing launched), records the layers
Spio's convolution is called on, and prepares every pass a training step will run on them
in a pool of threads: the config choose_config picks, its kernels compiled and
loaded (the layer's `_cuda_passes.LayerPlan`, which the calls then find ready). NVRTC
releases the GIL, so the compiles run side by side on the host's cores.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from itertools import chain
from typing import Any

import torch
from spio.kernels.conv2d_gw8 import Conv2dGw8Params
from spio.perfmodel import selection_mode
from torch._subclasses.fake_tensor import (
    DataDependentOutputException,
    DynamicOutputShapeException,
    FakeTensorMode,
    UnsupportedFakeTensorException,
)
from torch.utils._python_dispatch import TorchDispatchMode

from . import _conv2d_gw8  # noqa: F401  (defines spio::conv2d_gw8, which _Recorder looks for)
from ._cuda_passes import LayerPlan, layer_plan
from ._determinism import wgrad_is_deterministic
from ._layout import is_spio_layout

#: The most threads precompile starts by default: each NVRTC compile holds about 130 MB
#: of host memory while it runs.
MAX_THREADS = 16

#: What a forward pass can do on real tensors only: read a value, or make a shape that
#: depends on one.
_NEEDS_VALUES = (
    DataDependentOutputException,
    DynamicOutputShapeException,
    UnsupportedFakeTensorException,
)


@dataclass(frozen=True)
class LayerCall:
    """One recorded call of Spio's convolution: the layer (as layer_plan takes it) and what
    its backward pass will compute, from which tensors require gradients."""

    input_size: tuple[int, ...]
    kernel_size: tuple[int, ...]
    padding: tuple[int, ...]
    dtype: torch.dtype
    has_bias: bool
    device: torch.device
    input_grad: bool
    weight_grad: bool
    bias_grad: bool
    #: Whether the weight is in Spio's layout (channels_last memory), where the weight
    #: gradient is rounded to the weight's dtype in the kernels.
    weight_channels_last: bool

    @classmethod
    def of(
        cls,
        input: torch.Tensor,
        weight: torch.Tensor,
        bias: torch.Tensor | None,
        padding: list[int],
    ) -> LayerCall:
        """The call spio::conv2d_gw8(input, weight, bias, padding) makes."""
        return cls(
            input_size=tuple(input.shape),
            kernel_size=tuple(weight.shape[2:]),
            padding=tuple(padding),
            dtype=input.dtype,
            has_bias=bias is not None,
            device=input.device,
            input_grad=input.requires_grad,
            weight_grad=weight.requires_grad,
            bias_grad=bias is not None and bias.requires_grad,
            weight_channels_last=is_spio_layout(weight),
        )

    def passes(self, backward: bool) -> list[tuple[str, bool, bool]]:
        """The LayerPlan.launch arguments (pass, atomic_sums, rounded) of the passes a step
        runs on this layer: fprop; with the backward, dgrad where the input requires a
        gradient and wgrad (with the bias's sums where the bias requires one too) where the
        weight does, as _eager's backward launches them."""
        passes = [("fprop", False, False)]
        if not backward:
            return passes
        if self.input_grad:
            passes.append(("dgrad", False, False))
        if self.weight_grad:
            name = "wgrad_bias" if self.bias_grad else "wgrad"
            passes.append((name, not wgrad_is_deterministic(), self.weight_channels_last))
        return passes


class _Recorder(TorchDispatchMode):
    """Records each call of spio::conv2d_gw8 under it, once per distinct LayerCall."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[LayerCall, None] = {}

    def __torch_dispatch__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: Mapping[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        if func is torch.ops.spio.conv2d_gw8.default:
            self.calls.setdefault(LayerCall.of(*args, **kwargs), None)
        return func(*args, **kwargs)


def record_calls(
    model: torch.nn.Module, inputs: Sequence[tuple[Any, ...]], backward: bool
) -> list[LayerCall]:
    """The distinct calls of Spio's convolution that model makes on each input's arguments,
    in order. The model runs on fake copies of its parameters and buffers
    (torch.func.functional_call), so that nothing of its own changes (batch norm's count of
    batches included, which torch would add to for real), with gradients enabled where
    backward (the tensors that require gradients in training do here too), else disabled."""
    recorder = _Recorder()
    grad_mode = torch.enable_grad() if backward else torch.no_grad()
    try:
        with FakeTensorMode(allow_non_fake_inputs=True) as mode:
            state = {
                name: mode.from_tensor(tensor)
                for name, tensor in chain(model.named_parameters(), model.named_buffers())
            }
            for args in inputs:
                fake_args = tuple(
                    mode.from_tensor(arg) if isinstance(arg, torch.Tensor) else arg for arg in args
                )
                with recorder, grad_mode:
                    torch.func.functional_call(model, state, fake_args)
    except _NEEDS_VALUES as error:
        raise RuntimeError(
            "precompile runs the model on fake tensors, which have shapes but no values, and "
            f"its forward pass needed a value ({type(error).__name__}: {error}); precompile "
            "prepares models whose forward pass does not read its tensors' values"
        ) from error
    return list(recorder.calls)


@dataclass(frozen=True)
class PrecompiledPass:
    """A pass precompile prepared: `pass_name` ("fprop", "dgrad", "wgrad", or "wgrad_bias":
    the weight and bias gradients from one walk) of the layer `params` on cuda:`device`,
    with `config`, the config choose_config picked."""

    params: Conv2dGw8Params
    pass_name: str
    device: int
    config: Any


@dataclass(frozen=True)
class Precompiled:
    """What precompile prepared: each pass of each distinct layer, in the order the layers
    were first called, how long it took and in how many threads."""

    passes: tuple[PrecompiledPass, ...]
    seconds: float
    threads: int

    @property
    def layers(self) -> int:
        """The number of distinct layers (shape, filter, padding, dtype, bias, device)."""
        return len({(p.params, p.device) for p in self.passes if p.pass_name == "fprop"})

    def __str__(self) -> str:
        if not self.passes:
            return "precompile: no Spio convolution ran on a CUDA device"
        return (
            f"precompile: {len(self.passes)} passes of {self.layers} layers ready in "
            f"{self.seconds:.1f} s ({self.threads} threads)"
        )


def precompile(
    model: torch.nn.Module,
    *inputs: torch.Tensor | tuple[Any, ...],
    backward: bool = True,
    threads: int | None = None,
    progress: bool = False,
) -> Precompiled:
    """Compile and load, side by side, the kernels of every Spio convolution that model
    calls on a CUDA device for each of inputs, and of their gradients; return what was
    prepared.

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
    eager model (not a torch.compile'd one). Calls at those shapes then find their kernels
    loaded, so their first step compiles nothing (nor does a later process: the kernels
    stay in spio-jit's disk cache).

    Args:
        model: the model (an nn.Module) whose Spio convolutions to prepare.
        inputs: one example call each: a tensor, model(tensor), or a tuple of model's
            positional arguments, model(*arguments).
        backward: also prepare the gradients' passes (dgrad where a layer's input requires a
            gradient, wgrad where its weight does), as a training step runs them; False for
            inference (the model then runs under torch.no_grad()).
        threads: how many passes are prepared at once; None: the CPUs this process may use,
            at most MAX_THREADS. With SPIO_CONFIG_SELECTION=autotune one at a time, whatever
            threads says: each tuning times its candidates on the device (and compiles them
            side by side itself).
        progress: show a progress bar (tqdm) of the passes prepared.

    Raises:
        TypeError, ValueError: an argument out of range (named in the message).
        RuntimeError: the model's forward pass needed a tensor's value (fake tensors have
            none), or precompile was called while a CUDA graph is being captured.
        Whatever preparing a pass raised (a spio.jit.CompileError, say), with a note naming
            the layer and the pass.
    """
    calls_args = _checked_arguments(model, inputs, backward, threads, progress)
    if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
        raise RuntimeError(
            "precompile compiles and loads kernels, which CUDA-graph capture does not allow: "
            "call it before capturing"
        )
    start = time.perf_counter()
    calls = record_calls(model, calls_args, backward)
    tasks = [
        _Task(plan, *launch)
        for call, plan in _plans(call for call in calls if call.device.type == "cuda")
        for launch in call.passes(backward)
    ]
    count = _thread_count(threads, len(tasks))
    _prepare_all(tasks, count, progress)
    passes = tuple(
        PrecompiledPass(task.plan.params, task.pass_name, task.plan.device, task.config())
        for task in tasks
    )
    return Precompiled(passes, time.perf_counter() - start, count)


@dataclass(frozen=True)
class _Task:
    """One pass of one layer to prepare: LayerPlan.launch's arguments."""

    plan: LayerPlan
    pass_name: str
    atomic_sums: bool
    rounded: bool

    def prepare(self) -> None:
        self.plan.launch(self.pass_name, self.atomic_sums, self.rounded)

    def config(self) -> Any:
        """The config choose_config picked for the pass (wgrad's for "wgrad_bias")."""
        return self.plan.config("wgrad" if self.pass_name == "wgrad_bias" else self.pass_name)

    def __str__(self) -> str:
        return f"{self.pass_name} of {self.plan.params} on cuda:{self.plan.device}"


def _plans(calls: Iterable[LayerCall]) -> list[tuple[LayerCall, LayerPlan]]:
    """Each call with its layer's LayerPlan (validated here, so that a layer out of scope
    fails before any compile)."""
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


def _prepare_all(tasks: list[_Task], threads: int, progress: bool) -> None:
    """Run every task's prepare in `threads` threads; raise the first error (noting its
    task) once the tasks already running have ended, the ones not started cancelled."""
    from tqdm.auto import tqdm

    with tqdm(total=len(tasks), desc="spio precompile", unit="pass", disable=not progress) as bar:
        pool = ThreadPoolExecutor(threads, thread_name_prefix="spio-precompile")
        futures: dict[Future[None], _Task] = {pool.submit(task.prepare): task for task in tasks}
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
