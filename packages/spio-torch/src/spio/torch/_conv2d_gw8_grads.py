"""The derivatives of the convolution's three passes, each written with the passes again: so
gradients of gradients, to any order, run on Spio's kernels.

y = conv(x, w) + b is linear in each of x, w and b, and so are its gradients: the input
gradient dgrad(dy, w) in dy and w, the weight gradient wgrad(x, dy) in x and dy. The adjoint
of each is one of the other passes. For a cotangent g of dgrad(dy, w):
<g, dgrad(dy, w)> = <conv(g, w), dy> = <w, wgrad(g, dy)>, so its gradients are conv(g, w)
(in dy) and wgrad(g, dy) (in w). For a cotangent g of wgrad(x, dy):
<g, wgrad(x, dy)> = <conv(x, g), dy> = <x, dgrad(dy, g)>, so they are dgrad(dy, g) (in x) and
conv(x, g) (in dy). The tangents (forward mode) are the pass applied to each argument's
tangent in turn, the others held.

The formulas take the passes as a `Passes`: the operators (_conv2d_gw8, for autograd and
tracers), the torch.func Functions of them (_conv2d_gw8_func) or the eager path's passes
(_eager_grads). Cotangents and tangents are
cast to the activations' dtype, the one the kernels take: a second derivative is rounded to
it once more than the first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import torch

from ._layout import bias_gradient


class Passes(NamedTuple):
    """The convolution's passes, as the operators take their arguments."""

    #: (input, weight, bias, padding) -> output
    forward: Callable[..., Any]
    #: (grad_output, weight, input_size, padding) -> grad_input
    input_grad: Callable[..., Any]
    #: (input, grad_output, kernel_size, padding) -> grad_weight
    weight_grad: Callable[..., Any]
    #: (input, grad_output, kernel_size, padding) -> (grad_weight, f32 grad_bias)
    weight_bias_grad: Callable[..., Any]


def _kernel_size(weight: torch.Tensor) -> list[int]:
    return [weight.shape[2], weight.shape[3]]


def _sum(terms: list[torch.Tensor]) -> torch.Tensor | None:
    """The terms' sum; None for no terms."""
    return None if not terms else terms[0] if len(terms) == 1 else terms[0] + terms[1]


def _bias_map(bias_values: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """C values over every image, row and column of like (N x C x P x Q), in like's dtype."""
    return bias_values.to(like.dtype)[:, None, None].expand(like.shape)


def forward_gradients(
    passes: Passes,
    input: torch.Tensor,
    weight: torch.Tensor,
    bias_dtype: torch.dtype | None,
    padding: list[int],
    grad_output: torch.Tensor,
    needs: Sequence[bool],
) -> tuple[Any, Any, Any]:
    """The gradients of conv(input, weight) + bias in (input, weight, bias) for needs; the
    bias's from the weight gradient's pass where both are wanted (one read of grad_output)."""
    grad_output = grad_output.to(input.dtype)
    grad_input = grad_weight = grad_bias = None
    if needs[0]:
        grad_input = passes.input_grad(grad_output, weight, list(input.shape), padding)
    wants_bias = bias_dtype is not None and needs[2]
    kernel_size = _kernel_size(weight)
    if needs[1] and wants_bias:
        grad_weight, grad_bias = passes.weight_bias_grad(input, grad_output, kernel_size, padding)
        grad_bias = grad_bias.to(bias_dtype)
    elif needs[1]:
        grad_weight = passes.weight_grad(input, grad_output, kernel_size, padding)
    elif wants_bias:
        grad_bias = bias_gradient(grad_output, bias_dtype)
    return grad_input, grad_weight, grad_bias


def _bilinear_tangent(
    apply: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    first: torch.Tensor,
    second: torch.Tensor,
    tangents: Sequence[Any],
) -> torch.Tensor | None:
    """The tangent of apply(first, second), a pass linear in each: apply(d first, second) +
    apply(first, d second), each tangent in its argument's dtype; None where neither moves."""
    first_tangent, second_tangent = tangents
    terms = []
    if first_tangent is not None:
        terms.append(apply(first_tangent.to(first.dtype), second))
    if second_tangent is not None:
        terms.append(apply(first, second_tangent.to(second.dtype)))
    return _sum(terms)


def forward_gradients_of(passes: Passes, ctx: Any, grad_output: torch.Tensor) -> tuple[Any, ...]:
    """forward_gradients for the operator's or a Function's ctx ((input, weight) saved,
    bias_dtype, padding, needs_input_grad), with None for the padding argument."""
    input, weight = ctx.saved_tensors
    grads = forward_gradients(
        passes, input, weight, ctx.bias_dtype, ctx.padding, grad_output, ctx.needs_input_grad
    )
    return (*grads, None)


def forward_tangent(
    passes: Passes,
    input: torch.Tensor,
    weight: torch.Tensor,
    padding: list[int],
    output_shape: Sequence[int],
    tangents: Sequence[Any],
) -> torch.Tensor:
    """The tangent of conv(input, weight) + bias: conv(dx, w) + conv(x, dw) + db."""
    tangent = _bilinear_tangent(
        lambda x, w: passes.forward(x, w, None, padding), input, weight, tangents[:2]
    )
    if tangent is None:
        # Only the bias moves.
        tangent = input.new_zeros(output_shape)
    if tangents[2] is not None:
        tangent = tangent + _bias_map(tangents[2], tangent)
    return tangent


def input_grad_gradients(passes: Passes, ctx: Any, grad: torch.Tensor) -> tuple[Any, Any]:
    """The gradients of dgrad(grad_output, weight) in (grad_output, weight), for a cotangent
    grad of its result: conv(grad, weight) and wgrad(grad, grad_output). ctx is the
    operator's or Function's: (grad_output, weight) saved, padding, needs_input_grad."""
    grad_output, weight = ctx.saved_tensors
    needs = ctx.needs_input_grad
    grad = grad.to(grad_output.dtype)
    in_grad_output = passes.forward(grad, weight, None, ctx.padding) if needs[0] else None
    in_weight = None
    if needs[1]:
        in_weight = passes.weight_grad(grad, grad_output, _kernel_size(weight), ctx.padding)
    return in_grad_output, in_weight


def input_grad_tangent(
    passes: Passes,
    grad_output: torch.Tensor,
    weight: torch.Tensor,
    input_size: list[int],
    padding: list[int],
    tangents: Sequence[Any],
) -> torch.Tensor:
    """The tangent of dgrad(grad_output, weight): dgrad(d grad_output, w) + dgrad(dy, dw)."""
    tangent = _bilinear_tangent(
        lambda dy, w: passes.input_grad(dy, w, input_size, padding), grad_output, weight, tangents
    )
    return grad_output.new_zeros(input_size) if tangent is None else tangent


def weight_grad_gradients(
    passes: Passes,
    ctx: Any,
    grad_weight_grad: torch.Tensor | None,
    grad_bias_grad: torch.Tensor | None = None,
) -> tuple[Any, Any]:
    """The gradients of wgrad(input, grad_output) (and of the bias gradient, grad_output's
    sum, where grad_bias_grad is given) in (input, grad_output): dgrad(grad_output, g) and
    conv(input, g) (+ the bias gradient's cotangent on every pixel) for a cotangent g of the
    weight gradient. ctx is the operator's or Function's: (input, grad_output) saved,
    padding, needs_input_grad."""
    input, grad_output = ctx.saved_tensors
    needs, padding = ctx.needs_input_grad, ctx.padding
    g = None if grad_weight_grad is None else grad_weight_grad.to(input.dtype)
    in_input = in_grad_output = None
    if needs[0] and g is not None:
        in_input = passes.input_grad(grad_output, g, list(input.shape), padding)
    if needs[1]:
        terms = [] if g is None else [passes.forward(input, g, None, padding)]
        if grad_bias_grad is not None:
            terms.append(_bias_map(grad_bias_grad, grad_output))
        in_grad_output = _sum(terms)
    return in_input, in_grad_output


def weight_grad_tangent(
    passes: Passes,
    input: torch.Tensor,
    grad_output: torch.Tensor,
    kernel_size: list[int],
    padding: list[int],
    tangents: Sequence[Any],
) -> torch.Tensor:
    """The tangent of wgrad(input, grad_output): wgrad(dx, dy) + wgrad(x, d dy)."""
    tangent = _bilinear_tangent(
        lambda x, dy: passes.weight_grad(x, dy, kernel_size, padding), input, grad_output, tangents
    )
    return input.new_zeros((input.shape[1], 8, *kernel_size)) if tangent is None else tangent
