"""Batching rules of the spio::conv2d_gw8 operators: torch.vmap runs a batch of calls as one
call of the kernels.

A grouped convolution's groups are independent of each other, so B layers of C channels are
one layer of B x C channels: activations B x N x C x H x W become N x (B C) x H x W and
weights B x C x 8 x R x S become (B C) x 8 x R x S. That is the rule wherever the calls'
weights (or biases) differ, and for the weight gradient, whose sums over N must stay apart
call by call: per-sample gradients, `vmap(grad(loss))` over single images, are one weight
gradient pass of B x C channels at N = 1. Where only the activations are batched, the calls
share their weight and the batch joins N instead: one call of B x N images.

The rules are registered with the operators on torch versions that have torch.library's
register_vmap (on older ones vmap runs the operators themselves call by call), and
_conv2d_gw8_func's Functions take them as their vmap rules under torch.func, on every torch version.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch

from ._batching import leading
from ._conv2d_gw8 import (
    conv2d_gw8_input_grad_op,
    conv2d_gw8_op,
    conv2d_gw8_weight_bias_grad_op,
    conv2d_gw8_weight_grad_op,
)


def _channels_joined(activations: torch.Tensor) -> torch.Tensor:
    """B x N x C x H x W activations as N x (B C) x H x W in channels_last memory, the layout
    the kernels read (one copy, none where the batch already lies that way)."""
    b, n, c, h, w = activations.shape
    nhwbc = activations.permute(1, 3, 4, 0, 2).reshape(n, h, w, b * c)
    return nhwbc.permute(0, 3, 1, 2)


def _weights_joined(weight: torch.Tensor | None, dim: int | None, size: int) -> Any:
    """B x C x ... weights (or biases) as (B C) x ...; None stays None."""
    if weight is None:
        return None
    return leading(weight, dim, size).flatten(0, 1)


def conv2d_gw8_rule(
    call: Callable[..., Any],
    info: Any,
    in_dims: tuple[Any, ...],
    input: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    padding: list[int],
) -> tuple[torch.Tensor, int]:
    """The forward's rule: more images where the calls share the weight and bias, else more
    channels."""
    size = info.batch_size
    input_dim, weight_dim, bias_dim, _ = in_dims
    if weight_dim is None and bias_dim is None:
        images = leading(input, input_dim, size)
        output = call(images.flatten(0, 1), weight, bias, padding)
        return output.unflatten(0, (size, images.shape[1])), 0
    output = call(
        _channels_joined(leading(input, input_dim, size)),
        _weights_joined(weight, weight_dim, size),
        _weights_joined(bias, bias_dim, size),
        padding,
    )
    return output.unflatten(1, (size, -1)), 1


def input_grad_rule(
    call: Callable[..., Any],
    info: Any,
    in_dims: tuple[Any, ...],
    grad_output: torch.Tensor,
    weight: torch.Tensor,
    input_size: list[int],
    padding: list[int],
) -> tuple[torch.Tensor, int]:
    """The input gradient's rule: more images where the calls share the weight, else more
    channels."""
    size = info.batch_size
    grad_dim, weight_dim, _, _ = in_dims
    n, c, h, w = input_size
    if weight_dim is None:
        grads = leading(grad_output, grad_dim, size).flatten(0, 1)
        grad_input = call(grads, weight, [size * n, c, h, w], padding)
        return grad_input.unflatten(0, (size, n)), 0
    grad_input = call(
        _channels_joined(leading(grad_output, grad_dim, size)),
        _weights_joined(weight, weight_dim, size),
        [n, size * c, h, w],
        padding,
    )
    return grad_input.unflatten(1, (size, c)), 1


def weight_grad_rule(
    call: Callable[..., Any],
    info: Any,
    in_dims: tuple[Any, ...],
    input: torch.Tensor,
    grad_output: torch.Tensor,
    kernel_size: list[int],
    padding: list[int],
) -> Any:
    """The weight gradient's rule, and the weight and bias gradients' (a pair of results,
    each batch's B x C rows apart)."""
    size = info.batch_size
    input_dim, grad_dim, _, _ = in_dims
    result = call(
        _channels_joined(leading(input, input_dim, size)),
        _channels_joined(leading(grad_output, grad_dim, size)),
        kernel_size,
        padding,
    )
    if isinstance(result, tuple):
        return tuple(grad.unflatten(0, (size, -1)) for grad in result), (0,) * len(result)
    return result.unflatten(0, (size, -1)), 0


#: Each operator's rule (the rules take the call that runs a batch's one call first: the
#: operator itself, or under torch.func a Function of it, _conv2d_gw8_func).
RULES: dict[Any, Callable[..., Any]] = {
    conv2d_gw8_op: conv2d_gw8_rule,
    conv2d_gw8_input_grad_op: input_grad_rule,
    conv2d_gw8_weight_grad_op: weight_grad_rule,
    conv2d_gw8_weight_bias_grad_op: weight_grad_rule,
}


def register() -> bool:
    """Register the rules (once; torch.library refuses a second registration). Returns
    whether this torch has register_vmap."""
    if not hasattr(conv2d_gw8_op, "register_vmap"):
        return False
    for op, rule in RULES.items():
        op.register_vmap(functools.partial(rule, op))
    return True


HAS_BATCHING_RULES = register()
