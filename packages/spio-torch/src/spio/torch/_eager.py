"""The eager path of spio.functional.conv2d_gw8 on CUDA: the same passes as the operators,
called without the operator machinery.

A call through torch.library's Python operators (spio::conv2d_gw8 and its gradients) costs
the host about 50 us before any work: the dispatcher, the autograd wrapper, the redispatch
and the guard against tracing each run Python. In eager mode nothing needs them, so plain
CUDA tensors outside any tracer take a torch.autograd.Function straight to the CUDA passes
(_cuda_passes.fprop_cuda, dgrad_cuda, wgrad_cuda), or no Function at all where no gradient
is wanted. Everything else (torch.compile, torch.export, fake or meta tensors, dispatch
modes, tensor subclasses, CPU) goes through the operators, which tracers understand.

The forward pass saves Spio's layout of the weight for the input gradient, so a training
step converts the weight once instead of twice, and not at all where the weight is kept in
channels_last memory (Spio's layout; `Conv2dGw8` modules keep theirs so): the kernels read
it in place, and the weight gradient comes back in the same layout. A backward that builds
a graph (create_graph=True: gradient penalties, Hessian-vector products) runs the passes as
Functions whose derivatives are the passes again, to any order (_eager_grads).
"""

from __future__ import annotations

from typing import Any

import torch

from ._conv2d_gw8_grads import forward_gradients
from ._cuda_passes import LayerPlan, dgrad_cuda, fprop_cuda, wgrad_cuda
from ._layout import bias_buffer, bias_gradient, channels_last, is_spio_layout, spio_weight

#: The tensor types the eager path takes as they are; subclasses go through the operators.
_PLAIN = (torch.Tensor, torch.nn.Parameter)


def runs_eagerly(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> bool:
    """Whether a call can skip the operators: plain CUDA tensors, nothing tracing."""
    if type(input) not in _PLAIN or type(weight) not in _PLAIN or not input.is_cuda:
        return False
    if bias is not None and type(bias) not in _PLAIN:
        return False
    if torch.compiler.is_compiling() or torch.jit.is_tracing():
        return False
    # A dispatch mode (fake tensors, functionalization, a user's TorchDispatchMode) must
    # see the operators.
    return torch._C._len_torch_dispatch_stack() == 0


def conv2d_gw8_eager(
    input: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    plan: LayerPlan,
) -> torch.Tensor:
    """spio::conv2d_gw8's result and gradients, without the operators (see runs_eagerly)."""
    wants_grad = torch.is_grad_enabled() and (
        input.requires_grad or weight.requires_grad or (bias is not None and bias.requires_grad)
    )
    if not wants_grad:
        return fprop_cuda(channels_last(input), spio_weight(weight), bias, plan)
    # The input laid out outside the Function, so that the one the Function saves is
    # connected to autograd's graph, for a backward that builds one (create_graph).
    output: torch.Tensor = _Conv2dGw8.apply(channels_last(input), weight, bias, plan)
    return output


class _Conv2dGw8(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any,
        input: torch.Tensor,
        weight: torch.Tensor,
        bias: torch.Tensor | None,
        plan: LayerPlan,
    ) -> torch.Tensor:
        # input is in channels_last memory (conv2d_gw8_eager). The layer's weight is saved
        # beside Spio's layout of it (the same memory where it is in that layout already,
        # else a few KB) for a backward that builds a graph (create_graph).
        weight_spio = spio_weight(weight)
        ctx.save_for_backward(input, weight_spio, weight)
        ctx.plan = plan
        ctx.weight_channels_last = is_spio_layout(weight)
        ctx.bias_dtype = None if bias is None else bias.dtype
        return fprop_cuda(input, weight_spio, bias, plan)

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> tuple[Any, ...]:
        input, weight_spio, layer_weight = ctx.saved_tensors
        plan = ctx.plan
        if torch.is_grad_enabled():
            # A backward that builds a graph (create_graph=True, for gradients of
            # gradients): through the eager passes as Functions, whose derivatives are
            # passes again. (Imported here: they call this module's conv2d_gw8_eager.)
            from ._eager_grads import EAGER_PASSES

            padding = list(plan.params.padding)
            grads = forward_gradients(
                EAGER_PASSES,
                input,
                layer_weight,
                ctx.bias_dtype,
                padding,
                grad_output,
                ctx.needs_input_grad,
            )
            return (*grads, None)
        # Both passes read it as NHWC: lay it out once (sum().backward() hands in an
        # expanded scalar, for one).
        if grad_output.dtype != input.dtype:
            grad_output = grad_output.to(input.dtype)
        grad_output = channels_last(grad_output)
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = dgrad_cuda(grad_output, weight_spio, plan)
        wants_bias = ctx.bias_dtype is not None and ctx.needs_input_grad[2]
        if ctx.needs_input_grad[1]:
            # The bias gradient comes from the weight gradient's kernels, with no pass over
            # grad_output of its own.
            grad_bias = bias_buffer(grad_output) if wants_bias else None
            grad_weight = wgrad_cuda(input, grad_output, plan, ctx.weight_channels_last, grad_bias)
            if grad_bias is not None:
                grad_bias = grad_bias.to(ctx.bias_dtype)
        elif wants_bias:
            grad_bias = bias_gradient(grad_output, ctx.bias_dtype)
        return grad_input, grad_weight, grad_bias, None
