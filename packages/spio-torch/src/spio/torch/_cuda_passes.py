"""The three passes on CUDA, shared by the operators and the eager path (_eager), and what
they resolve once per layer.

A call's host cost is the product's as much as the kernels' time is on small layers, so
everything that depends only on the layer is looked up once, in a LayerPlan: the validated
params (the forward's, and the gradients' without bias), the device, the arrays' sizes, and
each pass's loaded kernels (spio-kernels' `fprop_launch`, `dgrad_launch`, `wgrad_launch`)
with the config spio-perfmodel's `choose_config` picks (its shipped latency model for the
GPU where one fits, else the kernels' heuristic), on the pass's first call. The tensors go
to the kernels as they are (see _layout): a launch reads data pointers only.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import torch
from spio.kernels.conv2d_gw8 import Conv2dGw8Params, dgrad_launch, fprop_launch, wgrad_launch
from spio.kernels.conv2d_gw8.wgrad import atomic_config_on
from spio.perfmodel import choose_config, selection_mode

from ._checks import DTYPES, GROUP_WIDTH, check_conv2d_gw8_layer
from ._determinism import wgrad_is_deterministic
from ._layout import bias32, weight_to_torch


def layer_params(
    input_size: Sequence[int],
    kernel_size: Sequence[int],
    padding: Sequence[int],
    dtype: torch.dtype,
    has_bias: bool = False,
) -> Conv2dGw8Params:
    """The validated Conv2dGw8Params of a call (built once per distinct layer: validating
    costs the host more than a launch). The layer is checked in the arguments' terms first
    (check_conv2d_gw8_layer); an empty batch has no params (the operators answer it)."""
    key = (tuple(input_size), tuple(kernel_size), tuple(padding), dtype, has_bias)
    if torch.compiler.is_compiling():
        # Dynamo traces the validation itself (once per compiled graph); through the cache it
        # would only warn that it bypasses it.
        return _layer.__wrapped__(*key)
    return _layer(*key)


@functools.lru_cache(maxsize=4096)
def _layer(
    input_size: tuple[int, ...],
    kernel_size: tuple[int, ...],
    padding: tuple[int, ...],
    dtype: torch.dtype,
    has_bias: bool,
) -> Conv2dGw8Params:
    if dtype not in DTYPES:  # only a direct call's: the operators check the dtype first
        raise TypeError(f"the tensors must be float16 or bfloat16, got {dtype}")
    check_conv2d_gw8_layer(input_size, kernel_size, padding)
    n, c, h, w = input_size
    r, s = kernel_size
    return Conv2dGw8Params(
        n=n,
        c=c,
        h=h,
        w=w,
        r=r,
        s=s,
        padding=(padding[0], padding[1], padding[2], padding[3]),
        dtype=DTYPES[dtype],  # type: ignore[arg-type]
        has_bias=has_bias,
    )


def _nhwc_strides(size: Sequence[int]) -> tuple[int, int, int, int]:
    """The strides of an N x C x H x W tensor (or C x 8 x R x S weight) in channels_last
    memory."""
    _, c, h, w = size
    return (h * w * c, 1, w * c, c)


class LayerPlan:
    """A layer's passes on one CUDA device: its params (`params`, the forward's;
    `grad_params`, as the gradient passes take them, without bias), its arrays' sizes and
    channels_last strides, and each pass's loaded kernels."""

    __slots__ = ("_launches", "device", "grad_params", "params", "sizes")

    def __init__(self, params: Conv2dGw8Params, grad_params: Conv2dGw8Params, device: int):
        self.params = params
        self.grad_params = grad_params
        self.device = device
        # (size, strides) of the output, the input (grad_input) and the weight (grad_weight):
        # torch.empty_strided allocates with them faster than torch.empty with a memory
        # format does.
        n, c = params.n, params.c
        sizes = {
            "output": (n, c, params.p, params.q),
            "input": (n, c, params.h, params.w),
            "weight": (c, GROUP_WIDTH, params.r, params.s),
        }
        self.sizes = {name: (size, _nhwc_strides(size)) for name, size in sizes.items()}
        self._launches: dict[str, Any] = {}

    def empty(
        self, name: str, like: torch.Tensor, dtype: torch.dtype | None = None
    ) -> torch.Tensor:
        """A new tensor of the layer's `output`, `input` or `weight` size on like's device,
        in channels_last memory (NHWC; for the weight Spio's C x R x S x 8), of like's dtype
        unless dtype is given."""
        size, strides = self.sizes[name]
        return torch.empty_strided(size, strides, dtype=dtype or like.dtype, device=like.device)

    def launch(self, pass_name: str, atomic_sums: bool = False, rounded: bool = False) -> Any:
        """pass_name's loaded kernels (a ConvLaunch or WgradLaunch) with choose_config's
        config, built at the pass's first call (so SPIO_CONFIG_SELECTION is read then: the
        environment costs the host about a microsecond a read). "wgrad_bias": the wgrad
        kernels that write the layer's bias gradient too, with the config chosen for its
        wgrad (the bias's sums ride on the same walk). atomic_sums (wgrad only): with the
        blocks' sums added atomically where that pays (atomic_config_on, which also asks
        whether the gradient is `rounded` to the activations' dtype), for gradients that
        need not be the same bits on every run."""
        key = f"{pass_name}:atomic:{rounded}" if atomic_sums else pass_name
        launch = self._launches.get(key)
        if launch is None:
            if pass_name in ("wgrad", "wgrad_bias"):
                params = self.params if pass_name == "wgrad_bias" else self.grad_params
                config = self.config("wgrad")
                if atomic_sums:
                    reduced = rounded or params.has_bias
                    config = atomic_config_on(params, config, self.device, reduced)
                launch = _LAUNCHES["wgrad"](params, config, self.device)
            else:
                params = self.params if pass_name == "fprop" else self.grad_params
                launch = _LAUNCHES[pass_name](params, self.config(pass_name), self.device)
            self._launches[key] = launch
        return launch

    def config(self, pass_name: str) -> Any:
        """choose_config's config for pass_name (memoised there)."""
        params = self.params if pass_name == "fprop" else self.grad_params
        _check_not_capturing_a_tuning(pass_name, params)
        return choose_config(pass_name, params, self.device).config


_LAUNCHES = {"fprop": fprop_launch, "dgrad": dgrad_launch, "wgrad": wgrad_launch}


def _check_not_capturing_a_tuning(pass_name: str, params: Conv2dGw8Params) -> None:
    """Raise RuntimeError where autotuning would start inside CUDA-graph capture: it
    synchronizes the device and times launches, which capture forbids (and a failed call
    would invalidate the capture)."""
    if selection_mode() == "autotune" and torch.cuda.is_current_stream_capturing():
        raise RuntimeError(
            f"SPIO_CONFIG_SELECTION=autotune times {pass_name} configs for {params} on the "
            "device at the layer's first call, which CUDA-graph capture does not allow: run "
            "the model once before capturing it (as with torch.backends.cudnn.benchmark)"
        )


def layer_plan(
    input_size: Sequence[int],
    kernel_size: Sequence[int],
    padding: Sequence[int],
    dtype: torch.dtype,
    has_bias: bool,
    device: int,
) -> LayerPlan:
    """The LayerPlan of a call on CUDA device `device` (validated, built once per layer)."""
    return _plan(tuple(input_size), tuple(kernel_size), tuple(padding), dtype, has_bias, device)


@functools.lru_cache(maxsize=4096)
def _plan(
    input_size: tuple[int, ...],
    kernel_size: tuple[int, ...],
    padding: tuple[int, ...],
    dtype: torch.dtype,
    has_bias: bool,
    device: int,
) -> LayerPlan:
    params = layer_params(input_size, kernel_size, padding, dtype, has_bias)
    grad_params = layer_params(input_size, kernel_size, padding, dtype, False)
    return LayerPlan(params, grad_params, device)


def fprop_cuda(
    input: torch.Tensor,
    weight_spio: torch.Tensor,
    bias: torch.Tensor | None,
    plan: LayerPlan,
) -> torch.Tensor:
    """The forward pass on CUDA; returns N x C x P x Q (channels_last). input from
    _layout.channels_last, weight_spio from _layout.spio_weight: the kernels read their
    memory as it is."""
    output = plan.empty("output", input)
    bias = None if bias is None else bias32(bias)
    plan.launch("fprop")(output, input, weight_spio, bias)
    return output


def dgrad_cuda(
    grad_output: torch.Tensor, weight_spio: torch.Tensor, plan: LayerPlan
) -> torch.Tensor:
    """The input gradient on CUDA, N x C x H x W (channels_last); grad_output from
    _layout.channels_last."""
    grad_input = plan.empty("input", grad_output)
    plan.launch("dgrad")(grad_input, grad_output, weight_spio)
    return grad_input


def wgrad_cuda(
    input: torch.Tensor,
    grad_output: torch.Tensor,
    plan: LayerPlan,
    channels_last_weight: bool = False,
    grad_bias: torch.Tensor | None = None,
) -> torch.Tensor:
    """The weight gradient on CUDA, C x 8 x R x S in the input's dtype; channels_last memory
    where channels_last_weight (the weight's own layout, _layout.is_spio_layout), else
    contiguous. input and grad_output from _layout.channels_last. grad_bias (a layer with a
    bias only): an f32 tensor of C values that takes the bias gradient from the same
    kernels, which add grad_output up as they read it.

    In channels_last memory the kernels' reduction writes the gradient in the input's dtype
    itself, each f32 sum rounded once (the bits a cast of the f32 sums gives, without the
    f32 tensor or the cast's kernel); a contiguous gradient is the f32 sums cast and
    transposed in one copy. The same bits on every run unless set_wgrad_deterministic(False)
    lets the kernels add their sums atomically (_determinism)."""
    launch = plan.launch(
        "wgrad" if grad_bias is None else "wgrad_bias",
        not wgrad_is_deterministic(),
        channels_last_weight,
    )
    if channels_last_weight:
        grad = plan.empty("weight", input)
        launch(grad, input, grad_output, rounded=True, grad_bias=grad_bias)
        return grad
    grad32 = plan.empty("weight", input, torch.float32)
    launch(grad32, input, grad_output, grad_bias=grad_bias)
    return weight_to_torch(grad32, input.dtype, channels_last_weight)
