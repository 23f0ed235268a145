"""spio.functional.conv2d_gw8 under torch.func transforms against fp32 conv2d under the same
transforms, on a device (the CPU tests and the GPU tests run them alike)."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812

import spio.functional as spio_f
from spio.torch._conv2d_gw8_vmap import HAS_BATCHING_RULES

#: One layer: 16 channels, asymmetric padding, a 3 x 2 filter.
CHANNELS, HEIGHT, WIDTH, PADDING = 16, 7, 6, (1, 1, 0, 1)
KERNEL = (3, 2)
DTYPE = torch.float16
#: fp16 rounding of values of the reference's scale over 8 R S products (conv2d_cases).
RELATIVE = 4 * 2.0**-10 * (1 + (8 * KERNEL[0] * KERNEL[1]) ** 0.5)


def reference(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """conv2d in fp32 with the layer's padding."""
    top, bottom, left, right = PADDING
    padded = F.pad(x.float(), (left, right, top, bottom))
    b = None if bias is None else bias.float()
    return F.conv2d(padded, weight.float(), b, groups=x.shape[-3] // 8)


def spio(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    return spio_f.conv2d_gw8(x, weight, bias, padding=PADDING)


def tensors(device: str, *shape: int, scale: float = 1.0, dtype: torch.dtype = DTYPE) -> Any:
    """A random tensor of shape, rounded to dtype, on device."""
    return (torch.randn(*shape) * scale).to(dtype).to(device)


def weights(device: str, *batch: int) -> torch.Tensor:
    return tensors(device, *batch, CHANNELS, 8, *KERNEL, scale=1 / (KERNEL[0] * KERNEL[1]))


def inputs(device: str, *batch: int) -> torch.Tensor:
    return tensors(device, *batch, CHANNELS, HEIGHT, WIDTH)


def close(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    """got (low precision) equals want (fp32) to fp16's rounding at want's scale."""
    assert got.shape == want.shape, what
    tolerance = RELATIVE * (want.abs().max().item() + 1)
    torch.testing.assert_close(got.float(), want.float(), atol=tolerance, rtol=0, msg=what)


@contextlib.contextmanager
def batching_rules_used() -> Iterator[None]:
    """Fail where vmap falls back to running an operator call by call (torch warns of a
    performance drop then), on the torch versions that take Spio's rules (those of the
    convolution and of the matmul register alike)."""
    with warnings.catch_warnings():
        if HAS_BATCHING_RULES:
            warnings.filterwarnings("error", message=".*have not yet implemented the batching rule")
        yield


def check_grad(device: str) -> None:
    x, weight, bias = inputs(device, 2), weights(device), tensors(device, CHANNELS)
    target = inputs(device, 2)

    def loss(conv: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
        return lambda x, w, b: (conv(x, w, b).float() * target.float()).sum()

    got = torch.func.grad(loss(spio), argnums=(0, 1, 2))(x, weight, bias)
    want = torch.func.grad(loss(reference), argnums=(0, 1, 2))(x.float(), weight.float(), bias)
    for name, g, w in zip(("input", "weight", "bias"), got, want, strict=True):
        assert g.dtype == (bias.dtype if name == "bias" else DTYPE), name
        close(g, w, name)


def check_vmap(device: str) -> None:
    """Batches of inputs (any batch dimension), of weights and biases (an ensemble), of both,
    and nested."""
    xs, ws, bs = inputs(device, 3, 2), weights(device, 3), tensors(device, 3, CHANNELS)
    x, weight, bias = xs[0], ws[0], bs[0]
    with batching_rules_used():
        cases = {
            "inputs": (
                torch.vmap(lambda x: spio(x, weight, bias))(xs),
                [(x, weight, bias) for x in xs],
            ),
            "inputs, batch dimension 2": (
                torch.vmap(lambda x: spio(x, weight, None), in_dims=2, out_dims=2)(
                    xs.movedim(0, 2)
                ).movedim(2, 0),
                [(x, weight, None) for x in xs],
            ),
            "weights and biases": (
                torch.vmap(lambda w, b: spio(x, w, b))(ws, bs),
                [(x, w, b) for w, b in zip(ws, bs, strict=True)],
            ),
            "weights, no bias": (
                torch.vmap(lambda w: spio(x, w, None))(ws),
                [(x, w, None) for w in ws],
            ),
            "biases": (torch.vmap(lambda b: spio(x, weight, b))(bs), [(x, weight, b) for b in bs]),
            "inputs and weights": (
                torch.vmap(lambda x, w: spio(x, w, bias))(xs, ws),
                [(x, w, bias) for x, w in zip(xs, ws, strict=True)],
            ),
            "nested": (
                torch.vmap(torch.vmap(lambda x: spio(x, weight, bias)))(xs[:, None]).squeeze(1),
                [(x, weight, bias) for x in xs],
            ),
        }
    for name, (got, calls) in cases.items():
        close(got, torch.stack([reference(*call) for call in calls]), name)


def check_per_sample_gradients(device: str) -> None:
    """vmap(grad(loss)) over single images, with a bias and without: each image's weight,
    input (and bias) gradients, as one call of each gradient pass."""
    xs, targets = inputs(device, 4), inputs(device, 4)
    weight = weights(device)
    for bias in (tensors(device, CHANNELS), None):
        # Gradients in weight, input and (where there is one) bias.
        argnums = (0, 1, 3) if bias is not None else (0, 1)

        def loss(conv: Callable[..., torch.Tensor]) -> Callable[..., Any]:
            def one(w: torch.Tensor, x: torch.Tensor, t: torch.Tensor, b: Any) -> Any:
                return (conv(x[None], w, b).float() * t.float()).sum()

            return one

        with batching_rules_used():
            got = torch.vmap(
                torch.func.grad(loss(spio), argnums=argnums), in_dims=(None, 0, 0, None)
            )(weight, xs, targets, bias)
        for i in range(len(xs)):
            want = torch.func.grad(loss(reference), argnums=argnums)(
                weight.float(), xs[i].float(), targets[i], bias
            )
            for name, g, expected in zip(("weight", "input", "bias"), got, want, strict=False):
                close(g[i], expected, f"image {i}'s {name} gradient (bias: {bias is not None})")


def check_ensemble_gradients(device: str) -> None:
    """vmap(grad(loss)) over a batch of weights (model ensembling): each model's gradients."""
    x, ws, bs = inputs(device, 2), weights(device, 3), tensors(device, 3, CHANNELS)
    target = inputs(device, 2)

    def loss(conv: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
        return lambda w, b, x: (conv(x, w, b).float() * target.float()).sum()

    with batching_rules_used():
        got = torch.vmap(torch.func.grad(loss(spio), argnums=(0, 1, 2)), in_dims=(0, 0, None))(
            ws, bs, x
        )
    for i in range(len(ws)):
        want = torch.func.grad(loss(reference), argnums=(0, 1, 2))(ws[i].float(), bs[i], x.float())
        for name, g, w in zip(("weight", "bias", "input"), got, want, strict=True):
            close(g[i], w, f"model {i}'s {name} gradient")


def check_forward_mode(device: str) -> None:
    """jvp with every tangent, with the bias's alone, and jacfwd against jacrev."""
    x, weight, bias = inputs(device, 1), weights(device), tensors(device, CHANNELS)
    tangents = (inputs(device, 1), weights(device), tensors(device, CHANNELS))
    _, got = torch.func.jvp(spio, (x, weight, bias), tangents)
    _, want = torch.func.jvp(
        reference, (x.float(), weight.float(), bias), tuple(t.float() for t in tangents)
    )
    close(got, want, "jvp")
    _, got = torch.func.jvp(lambda b: spio(x, weight, b), (bias,), (tangents[2],))
    close(got, tangents[2][:, None, None].expand(want.shape), "the bias's jvp")
    small = inputs(device, 1)[:, :8, :3, :3]
    w8 = weights(device)[:8]

    def conv(x: torch.Tensor) -> torch.Tensor:
        return spio(x, w8, None)

    forward = torch.func.jacfwd(conv)(small)
    reverse = torch.func.jacrev(conv)(small)
    want = torch.func.jacrev(lambda x: reference(x, w8, None))(small.float())
    close(forward, want, "jacfwd")
    close(reverse, want, "jacrev")


def check_second_order(device: str) -> None:
    """Derivatives of derivatives: the Hessians in the input and in the weight (jacfwd of
    jacrev, so the gradient passes' forward-mode and batching rules run too), a gradient
    penalty's gradients (grad of grad, with a bias) and a third derivative."""
    x, weight, bias = inputs(device, 1)[:, :8, :4, :3], weights(device)[:8], tensors(device, 8)

    def squares(conv: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
        return lambda x, w, b: conv(x, w, b).float().square().sum()

    with batching_rules_used():
        got = torch.func.hessian(squares(spio), argnums=0)(x, weight, bias)
        want = torch.func.hessian(squares(reference), argnums=0)(x.float(), weight.float(), bias)
        close(got, want, "the Hessian in the input")
        # In the weight and the bias together: the weight and bias gradients' pass.
        in_weight_and_bias = (1, 2)
        got = torch.func.hessian(squares(spio), in_weight_and_bias)(x, weight, bias)
        want = torch.func.hessian(squares(reference), in_weight_and_bias)(
            x.float(), weight.float(), bias
        )
        for i, j in ((0, 0), (0, 1), (1, 0), (1, 1)):
            close(got[i][j], want[i][j], f"the Hessian's block {i}, {j} in (weight, bias)")

    def penalty(conv: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
        # The squared gradients of a loss in all three arguments (the bias's from the weight
        # gradient's pass).
        def of(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            loss = lambda x, w, b: conv(x, w, b).float().square().sum() / 2  # noqa: E731
            grads = torch.func.grad(loss, argnums=(0, 1, 2))(x, w, b)
            return sum(g.float().square().sum() for g in grads)  # type: ignore[return-value]

        return of

    got = torch.func.grad(penalty(spio), argnums=(0, 1, 2))(x, weight, bias)
    want = torch.func.grad(penalty(reference), argnums=(0, 1, 2))(x.float(), weight.float(), bias)
    for name, g, w in zip(("input", "weight", "bias"), got, want, strict=True):
        close(g, w, f"a gradient penalty's gradient in the {name}")

    direction = inputs(device, 1)[:, :8, :4, :3].float()

    def third(conv: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
        # d/dx of <d/dx <d/dx sum(y^3), v>, v>: every pass differentiated twice.
        cubes = lambda x: conv(x, weight.to(x.dtype), None).float().pow(3).sum()  # noqa: E731
        along = lambda x: (torch.func.grad(cubes)(x).float() * direction).sum()  # noqa: E731
        return torch.func.grad(lambda x: (torch.func.grad(along)(x).float() * direction).sum())

    close(third(spio)(x), third(reference)(x.float()), "a third derivative")


def check_module_ensemble(device: str) -> None:
    """Conv2dGw8 modules stacked with torch.func.stack_module_state and run by vmap over
    functional_call (model ensembling), against each module's fp32 conv2d."""
    import copy

    from spio.torch import Conv2dGw8

    # "same" pads the 3 x 2 filter as PADDING: (1, 1, 0, 1).
    models = [Conv2dGw8(CHANNELS, KERNEL, padding="same").to(DTYPE).to(device) for _ in range(3)]
    params, buffers = torch.func.stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")
    x = inputs(device, 2)

    def run(params: Any, buffers: Any, x: torch.Tensor) -> Any:
        return torch.func.functional_call(base, (params, buffers), (x,))

    with batching_rules_used():
        got = torch.vmap(run, in_dims=(0, 0, None))(params, buffers, x)
    want = torch.stack([reference(x, model.weight, model.bias) for model in models])
    close(got, want, "an ensemble of modules")
