"""Whether a torch.func transform or a forward-AD level is active: the functional entries then
call their operators through Functions that torch.func can transform and whose jvp rules carry
tangents (_conv2d_gw8_func, _matmul_func)."""

from __future__ import annotations

from typing import Any

import torch
from torch.autograd import forward_ad


def under_torch_func() -> bool:
    """Whether a torch.func transform (grad, vmap, jvp, ...) is active. Tracing under
    torch.compile runs inside functorch's interpreters too, and is not a transform."""
    active = torch._C._functorch.peek_interpreter_stack() is not None
    return active and not torch.compiler.is_compiling()


def under_forward_ad() -> bool:
    """Whether a torch.autograd.forward_ad level is open, so that an argument may be a dual
    tensor. The operators' generated autograd has no forward-mode rule and the eager path
    skips autograd where nothing requires grad: either would drop the tangent without a
    word. (A module global, read in tens of nanoseconds: this runs on every call.)"""
    return forward_ad._current_level >= 0


def refuse_tangents(operator: str, entry: str, *tensors: Any) -> None:
    """NotImplementedError where a forward-AD level is open and one of tensors carries a
    tangent, which `torch.ops.spio.<operator>` would drop; `entry` names the call that
    carries it. (Inside the Functions' forward, forward AD is off: their own calls of the
    operators see no tangents.)"""
    if not under_forward_ad() or not torch._C._is_fwd_grad_enabled():
        return
    if any(t is not None and forward_ad.unpack_dual(t).tangent is not None for t in tensors):
        raise NotImplementedError(
            f"torch.ops.spio.{operator} has no forward-mode derivative of its own and would "
            f"drop the tangent of a dual tensor (torch.autograd.forward_ad): call {entry}, "
            "whose jvp rule carries it, or use torch.func.jvp"
        )
