"""What spio.torch.precompile prepares: the calls of Spio's operators a model makes, recorded
on fake tensors, and the kernels each call's forward and backward passes run.

The model runs through torch.func.functional_call on fake copies of its parameters and
buffers, under torch's FakeTensorMode (shapes, dtypes, devices and strides; no values, no
memory, nothing launched): a module's in-place updates (batch norm adds to its count of
batches for real where it holds a real tensor) then change only the copies. A dispatch mode
under it sees each call of spio::conv2d_gw8, spio::mm and spio::addmm with its operands:
under a dispatch mode the entries take the operators, not their eager paths.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import torch
from spio.kernels.matmul import MatmulParams
from torch._subclasses.fake_tensor import (
    DataDependentOutputException,
    DynamicOutputShapeException,
    FakeTensorMode,
    UnsupportedFakeTensorException,
)
from torch.utils._python_dispatch import TorchDispatchMode

from . import _conv2d_gw8  # noqa: F401  (defines the operators the recorder looks for)
from ._determinism import wgrad_is_deterministic
from ._layout import is_spio_layout
from ._matmul import product_params

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


@dataclass(frozen=True)
class ProductCall:
    """One recorded call of Spio's matrix product a @ b (+ bias): the operands' geometry,
    and which of them require gradients."""

    a_shape: tuple[int, ...]
    a_stride: tuple[int, ...]
    b_shape: tuple[int, ...]
    b_stride: tuple[int, ...]
    dtype: torch.dtype
    has_bias: bool
    device: torch.device
    a_grad: bool
    b_grad: bool

    @classmethod
    def of(cls, a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None = None) -> ProductCall:
        """The call spio::mm(a, b) or spio::addmm(bias, a, b) makes."""
        return cls(
            a_shape=tuple(a.shape),
            a_stride=tuple(a.stride()),
            b_shape=tuple(b.shape),
            b_stride=tuple(b.stride()),
            dtype=a.dtype,
            has_bias=bias is not None,
            device=a.device,
            a_grad=a.requires_grad,
            b_grad=b.requires_grad,
        )

    def products(self, backward: bool) -> list[MatmulParams]:
        """The MatmulParams of the products a step runs: a @ b; with the backward,
        grad @ b.t() where a requires a gradient and a.t() @ grad where b does, grad dense
        (_matmul._mm_gradients). Products with a size of 0 run no kernel and are left out."""
        rows, cols = self.a_shape[0], self.b_shape[1]
        grad_shape, grad_stride = (rows, cols), (cols, 1)
        products = [
            product_params(
                self.a_shape, self.a_stride, self.b_shape, self.b_stride, self.dtype, self.has_bias
            )
        ]
        if backward and self.a_grad:
            b_t = (self.b_shape[::-1], self.b_stride[::-1])
            products.append(product_params(grad_shape, grad_stride, *b_t, self.dtype, False))
        if backward and self.b_grad:
            a_t = (self.a_shape[::-1], self.a_stride[::-1])
            products.append(product_params(*a_t, grad_shape, grad_stride, self.dtype, False))
        return [params for params in products if params is not None]


@dataclass
class Recorded:
    """The distinct calls of Spio's operators a model made, each kind in the order of its
    first call."""

    layers: list[LayerCall] = field(default_factory=list)
    products: list[ProductCall] = field(default_factory=list)


class _Recorder(TorchDispatchMode):
    """Records each call of Spio's convolution and matrix product under it, once each."""

    def __init__(self) -> None:
        super().__init__()
        self.layers: dict[LayerCall, None] = {}
        self.products: dict[ProductCall, None] = {}

    def __torch_dispatch__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: Mapping[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        if func is torch.ops.spio.conv2d_gw8.default:
            self.layers.setdefault(LayerCall.of(*args, **kwargs), None)
        elif func is torch.ops.spio.mm.default:
            self.products.setdefault(ProductCall.of(*args, **kwargs), None)
        elif func is torch.ops.spio.addmm.default:
            bias, a, b = args
            self.products.setdefault(ProductCall.of(a, b, bias), None)
        return func(*args, **kwargs)


def record_calls(
    model: torch.nn.Module, inputs: Sequence[tuple[Any, ...]], backward: bool
) -> Recorded:
    """The distinct calls of Spio's operators that model makes on each input's arguments,
    in order, run on fake copies of its parameters and buffers (see the module doc), with
    gradients enabled where backward (the tensors that require gradients in training do
    here too), else disabled."""
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
    return Recorded(list(recorder.layers), list(recorder.products))
