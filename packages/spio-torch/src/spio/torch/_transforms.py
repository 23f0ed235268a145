"""Whether a torch.func transform is running: the functional entries then call their
operators through Functions that torch.func can transform (_conv2d_gw8_func, _matmul_func)."""

from __future__ import annotations

import torch


def under_torch_func() -> bool:
    """Whether a torch.func transform (grad, vmap, jvp, ...) is active. Tracing under
    torch.compile runs inside functorch's interpreters too, and is not a transform."""
    active = torch._C._functorch.peek_interpreter_stack() is not None
    return active and not torch.compiler.is_compiling()
