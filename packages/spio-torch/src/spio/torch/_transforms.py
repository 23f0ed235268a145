"""The refusal of torch.func transforms, which neither path of Spio's operators supports."""

from __future__ import annotations

import torch


def refuse_torch_func(entry: str) -> None:
    """Raise NotImplementedError naming `entry` when called under a torch.func transform.

    Neither the operators nor the eager path have the rules torch.func needs (an
    autograd.Function's setup_context and vmap); without this, torch's own error speaks of a
    generated Function. Tracing under torch.compile runs inside functorch's interpreters too,
    and is not a transform.
    """
    functorch = torch._C._functorch.peek_interpreter_stack() is not None
    if functorch and not torch.compiler.is_compiling():
        raise NotImplementedError(
            f"{entry} does not support torch.func transforms (grad, vmap, jvp, jacrev, ...); "
            "use torch.autograd (loss.backward() or torch.autograd.grad)"
        )
