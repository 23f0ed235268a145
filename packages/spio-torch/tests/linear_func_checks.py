"""spio.functional.linear and matmul under torch.func transforms against fp32 torch under the
same transforms, on a device (the CPU tests and the GPU tests run them alike)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from conv2d_func_checks import batching_rules_used

import spio.functional as spio_f

IN_FEATURES, OUT_FEATURES = 24, 16
DTYPE = torch.float16
#: fp16 rounding of values of the reference's scale, over fp32 sums of up to 64 products.
RELATIVE = 2 * 2.0**-11 + 64 * 2.0**-22 + 2.0**-10


def values(device: str, *shape: int) -> torch.Tensor:
    """Uniform in [-1, 1), rounded to fp16, on device."""
    return (torch.rand(*shape) * 2 - 1).to(DTYPE).to(device)


def close(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    """got (fp16) equals want (fp32) to fp16's rounding at want's scale."""
    assert got.shape == want.shape, what
    tolerance = RELATIVE * (want.abs().max().item() + 1)
    torch.testing.assert_close(got.float(), want.float(), atol=tolerance, rtol=0, msg=what)


def reference_linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor:
    return torch.nn.functional.linear(x.float(), w.float(), None if b is None else b.float())


def check_linear_grad_and_vmap(device: str) -> None:
    """grad in all three arguments; vmap over inputs, over weights and biases (an ensemble),
    over both; per-sample gradients (vmap of grad over single rows)."""
    x, w = values(device, 5, IN_FEATURES), values(device, OUT_FEATURES, IN_FEATURES)
    b = values(device, OUT_FEATURES)
    target = values(device, 5, OUT_FEATURES)

    def loss(linear: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
        return lambda x, w, b: (linear(x, w, b).float() * target.float()).sum()

    got = torch.func.grad(loss(spio_f.linear), argnums=(0, 1, 2))(x, w, b)
    want = torch.func.grad(loss(reference_linear), argnums=(0, 1, 2))(x.float(), w.float(), b)
    for name, g, expected in zip(("input", "weight", "bias"), got, want, strict=True):
        close(g, expected, f"{name} gradient")

    xs, ws, bs = (
        values(device, 3, 5, IN_FEATURES),
        values(device, 3, *w.shape),
        values(device, 3, 16),
    )
    with batching_rules_used():
        batches: dict[str, tuple[torch.Tensor, list[tuple[Any, ...]]]] = {
            "inputs": (
                torch.vmap(lambda x: spio_f.linear(x, w, b))(xs),
                [(x, w, b) for x in xs],
            ),
            "weights and biases": (
                torch.vmap(lambda w, b: spio_f.linear(x, w, b))(ws, bs),
                [(x, w, b) for w, b in zip(ws, bs, strict=True)],
            ),
            "inputs and weights": (
                torch.vmap(lambda x, w: spio_f.linear(x, w, None))(xs, ws),
                [(x, w, None) for x, w in zip(xs, ws, strict=True)],
            ),
        }
    for name, (result, calls) in batches.items():
        close(result, torch.stack([reference_linear(*call) for call in calls]), name)

    def one(w: torch.Tensor, b: torch.Tensor, x: torch.Tensor, t: torch.Tensor) -> Any:
        return (spio_f.linear(x[None], w, b).float() * t.float()).sum()

    with batching_rules_used():
        per_row = torch.vmap(torch.func.grad(one, argnums=(0, 1)), in_dims=(None, None, 0, 0))(
            w, b, x, target
        )
    for i in range(len(x)):
        expected_w = torch.outer(target[i].float(), x[i].float())
        close(per_row[0][i], expected_w, f"row {i}'s weight gradient")
        close(per_row[1][i], target[i].float(), f"row {i}'s bias gradient")


def check_matmul_higher_order(device: str) -> None:
    """jvp, jacfwd and jacrev of matmul, and its hessian (products all the way down)."""
    a, b = values(device, 4, 8), values(device, 8, 8)
    ta, tb = values(device, 4, 8), values(device, 8, 8)
    _, got = torch.func.jvp(spio_f.matmul, (a, b), (ta, tb))
    close(got, ta.float() @ b.float() + a.float() @ tb.float(), "jvp")

    def product(a: torch.Tensor) -> torch.Tensor:
        return spio_f.matmul(a, b)

    want = torch.func.jacrev(lambda a: a @ b.float())(a.float())
    close(torch.func.jacfwd(product)(a), want, "jacfwd")
    close(torch.func.jacrev(product)(a), want, "jacrev")

    def squares(a: torch.Tensor) -> torch.Tensor:
        return (spio_f.matmul(a, b).float() ** 2).sum()

    # The second derivative of sum((a b)^2) in a[i, j] and a[k, l] is 2 (b b^T)[j, l] where
    # i = k (each row on its own), else 0.
    hessian = torch.func.hessian(squares)(a)
    block = 2 * b.float() @ b.float().t()
    want_hessian = torch.einsum("ik,jl->ijkl", torch.eye(4, device=device), block)
    close(hessian, want_hessian, "hessian")
