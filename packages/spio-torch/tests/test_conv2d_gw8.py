"""spio.functional.conv2d_gw8 on CPU (PyTorch's fp32 path): results, gradients, operator
registration (fake tensors, autograd, torch.compile) and argument checks."""

from __future__ import annotations

import types
from typing import Any

import pytest
import torch
from conv2d_cases import CASES, Case

import spio.functional as spio_f


def run_case(case: Case, device: str) -> None:
    """conv2d_gw8 forward and backward on device against fp32 conv2d."""
    x, weight, bias = case.make(device)
    y = spio_f.conv2d_gw8(x, weight, bias, padding=case.padding)
    reference = case.reference(x, weight, bias)
    assert y.dtype == case.dtype
    assert y.shape == reference.shape
    assert y.is_contiguous(memory_format=torch.channels_last)
    scale = reference.abs().max().item() + 1
    torch.testing.assert_close(y.float(), reference, atol=case.tolerance() * scale, rtol=0)

    grad = torch.randn_like(reference).to(case.dtype)
    y.backward(grad)
    x32, w32 = (t.detach().float().requires_grad_() for t in (x, weight))
    b32 = bias.detach().clone().requires_grad_() if bias is not None else None
    case.reference(x32, w32, b32).backward(grad.float())
    for name, got, want in (("input", x.grad, x32.grad), ("weight", weight.grad, w32.grad)):
        assert got is not None
        assert want is not None
        assert got.dtype == case.dtype, name
        tolerance = case.tolerance() * (want.abs().max().item() + 1)
        torch.testing.assert_close(got.float(), want, atol=tolerance, rtol=0, msg=name)
    if bias is not None:
        assert b32 is not None
        torch.testing.assert_close(bias.grad, b32.grad, atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_matches_fp32_conv2d_forward_and_backward_on_cpu(case: Case) -> None:
    run_case(case, "cpu")


def _penalty(
    conv: Any, tensors: tuple[torch.Tensor, ...], leaves: tuple[torch.Tensor, ...]
) -> torch.Tensor:
    """A gradient penalty: the mean squared gradients of sum(y^2) / 2 in leaves, as a graph."""
    loss = conv(*tensors).float().square().sum() / 2
    grads = torch.autograd.grad(loss, leaves, create_graph=True)
    total: torch.Tensor = sum(g.float().square().mean() for g in grads)  # type: ignore[assignment]
    return total


def run_gradient_penalty(case: Case, device: str) -> None:
    """The gradients of a gradient penalty (autograd's create_graph: every pass's own
    derivatives) on device against fp32 conv2d's."""
    x, weight, bias = case.make(device)
    tensors = (x, weight, bias)
    leaves = (x, weight) if bias is None else (x, weight, bias)

    def spio(x: torch.Tensor, weight: torch.Tensor, bias: Any) -> torch.Tensor:
        return spio_f.conv2d_gw8(x, weight, bias, padding=case.padding)

    got = torch.autograd.grad(_penalty(spio, tensors, leaves), leaves)
    exact = tuple(t.detach().float().requires_grad_() for t in leaves)
    want = torch.autograd.grad(_penalty(case.reference, (*exact, None)[:3], exact), exact)
    for name, g, w in zip(("input", "weight", "bias"), got, want, strict=False):
        assert g.dtype == (torch.float32 if name == "bias" else case.dtype), name
        tolerance = case.tolerance() * (w.abs().max().item() + 1)
        torch.testing.assert_close(g.float(), w, atol=tolerance, rtol=0, msg=name)


def run_third_derivative(device: str) -> None:
    """d/dx <d/dx <d/dx sum(y^3), v>, v> through autograd (each gradient a graph) against
    fp32 conv2d's."""
    case = CASES[1]
    x, weight, _ = case.make(device)
    direction = torch.randn(x.shape, generator=torch.Generator().manual_seed(1)).to(device)

    def third(conv: Any, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        cubes = conv(x, weight, None).float().pow(3).sum()
        (first,) = torch.autograd.grad(cubes, x, create_graph=True)
        (second,) = torch.autograd.grad((first.float() * direction).sum(), x, create_graph=True)
        (result,) = torch.autograd.grad((second.float() * direction).sum(), x)
        return result

    def spio(x: torch.Tensor, weight: torch.Tensor, bias: Any) -> torch.Tensor:
        return spio_f.conv2d_gw8(x, weight, bias, padding=case.padding)

    got = third(spio, x, weight)
    want = third(case.reference, x.detach().float().requires_grad_(), weight.detach().float())
    tolerance = case.tolerance() * (want.abs().max().item() + 1)
    torch.testing.assert_close(got.float(), want, atol=tolerance, rtol=0)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradient_penalty_matches_fp32_conv2d_on_cpu(case: Case) -> None:
    run_gradient_penalty(case, "cpu")


def test_third_derivative_matches_fp32_conv2d_on_cpu() -> None:
    run_third_derivative("cpu")


def check_operators(device: str) -> None:
    """torch.library.opcheck of the four operators on device (schema, fake implementation
    against the real one, autograd registration, dispatch)."""
    case = CASES[0]
    x, weight, bias = (t.detach() for t in case.make(device))  # type: ignore[union-attr]
    padding = list(case.padding)
    ops = torch.ops.spio
    torch.library.opcheck(
        ops.conv2d_gw8.default, (x.requires_grad_(), weight.requires_grad_(), bias, padding)
    )
    grad_y = torch.randn(2, 16, 9, 7).to(case.dtype).to(device)
    grad_y = grad_y.contiguous(memory_format=torch.channels_last)
    torch.library.opcheck(
        ops.conv2d_gw8_input_grad.default, (grad_y, weight.detach(), list(x.shape), padding)
    )
    torch.library.opcheck(ops.conv2d_gw8_weight_grad.default, (x.detach(), grad_y, [3, 3], padding))
    torch.library.opcheck(
        ops.conv2d_gw8_weight_bias_grad.default, (x.detach(), grad_y, [3, 3], padding)
    )


def test_operators_pass_torch_library_opcheck() -> None:
    check_operators("cpu")


def test_compiles_with_torch_compile_without_graph_breaks() -> None:
    case = CASES[1]
    x, weight, _ = case.make("cpu")

    def step(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        return spio_f.conv2d_gw8(x, weight, padding=case.padding).float().square().sum()

    compiled = torch.compile(step, backend="aot_eager", fullgraph=True)
    loss = compiled(x, weight)
    loss.backward()
    expected = step(x.detach(), weight.detach())
    torch.testing.assert_close(loss, expected)
    assert x.grad is not None
    assert weight.grad is not None


def test_other_memory_layouts_and_padding_forms() -> None:
    x = torch.randn(1, 16, 6, 6).half()  # NCHW-contiguous: copied into channels_last
    weight = torch.randn(16, 8, 3, 3).half()
    same = spio_f.conv2d_gw8(x, weight, padding="same")
    assert same.shape == (1, 16, 6, 6)
    torch.testing.assert_close(same, spio_f.conv2d_gw8(x, weight, padding=1))
    torch.testing.assert_close(same, spio_f.conv2d_gw8(x, weight, padding=(1, 1)))
    assert spio_f.conv2d_gw8(x, weight, padding="valid").shape == (1, 16, 4, 4)
    even = spio_f.conv2d_gw8(x, torch.randn(16, 8, 2, 4).half(), padding="same")
    assert even.shape == (1, 16, 6, 6)


@pytest.mark.parametrize(
    ("arguments", "error", "match"),
    [
        ({"input": torch.randn(2, 16, 5)}, ValueError, "input must be 4-D"),
        ({"input": torch.randn(1, 16, 5, 5)}, TypeError, "input must be float16 or bfloat16"),
        ({"input": torch.randn(1, 12, 5, 5).half()}, ValueError, "multiple of 8 channels.*got 12"),
        ({"weight": torch.randn(16, 4, 3, 3).half()}, ValueError, r"weight must be 16 x 8 x R x S"),
        ({"weight": torch.randn(16, 8, 3, 3).bfloat16()}, TypeError, "input's dtype"),
        ({"bias": torch.randn(8)}, ValueError, r"bias must have shape \(16,\)"),
        ({"bias": torch.ones(16, dtype=torch.int32)}, TypeError, "bias must be a floating"),
        ({"padding": 3}, ValueError, "padding top must be 0 to 2, got 3"),
        ({"padding": "full"}, ValueError, "padding must be 'valid', 'same'"),
        ({"padding": (1, 2, 3)}, TypeError, "padding must be an int, a pair"),
        ({"weight": torch.randn(16, 8, 8, 3).half()}, ValueError, "r must be 1 to 7, got 8"),
        ({"input": torch.randn(1, 16, 2, 2).half(), "padding": 0}, ValueError, "output size"),
        ({"weight": [[1.0]]}, TypeError, "weight must be a torch.Tensor, got list"),
    ],
)
def test_bad_arguments_are_named(arguments: dict[str, object], error: type, match: str) -> None:
    call: dict[str, object] = {
        "input": torch.randn(1, 16, 5, 5).half(),
        "weight": torch.randn(16, 8, 3, 3).half(),
        "bias": None,
        "padding": 1,
    }
    call.update(arguments)
    with pytest.raises(error, match=match):
        spio_f.conv2d_gw8(**call)  # type: ignore[arg-type]


def test_the_operators_called_directly_check_the_dtype() -> None:
    x = torch.randn(1, 16, 5, 5)
    weight = torch.randn(16, 8, 3, 3)
    with pytest.raises(TypeError, match=r"float16 or bfloat16, got torch\.float32"):
        torch.ops.spio.conv2d_gw8(x, weight, None, [1, 1, 1, 1])


def test_layer_params_are_validated_once_per_layer() -> None:
    from spio.torch._cuda_passes import layer_params

    first = layer_params(torch.Size((2, 16, 8, 8)), [3, 3], [1, 1, 1, 1], torch.float16)
    assert layer_params((2, 16, 8, 8), (3, 3), (1, 1, 1, 1), torch.float16) is first
    with pytest.raises(ValueError, match="padding"):
        layer_params((2, 16, 8, 8), (3, 3), (3, 1, 1, 1), torch.float16)
    with pytest.raises(TypeError, match=r"float16 or bfloat16, got torch\.float32"):
        layer_params((2, 16, 8, 8), (3, 3), (1, 1, 1, 1), torch.float32)


def test_a_channels_last_weight_is_read_in_place() -> None:
    from spio.torch._layout import is_spio_layout, spio_weight

    weight = torch.randn(16, 8, 3, 3, dtype=torch.float16)
    copied = spio_weight(weight)
    assert not is_spio_layout(weight)
    assert copied.data_ptr() != weight.data_ptr()
    # Its memory holds Spio's C x R x S x 8 order, whatever the shape says.
    memory = copied.as_strided((copied.numel(),), (1,))
    assert torch.equal(memory, weight.permute(0, 2, 3, 1).flatten())
    laid_out = weight.contiguous(memory_format=torch.channels_last)
    assert is_spio_layout(laid_out)
    in_place = spio_weight(laid_out)
    assert in_place is laid_out
    assert torch.equal(in_place, copied)


@pytest.mark.parametrize("channels_last", [False, True])
def test_the_weight_gradient_comes_back_in_the_layout_asked_for(channels_last: bool) -> None:
    from spio.torch._layout import weight_to_torch

    grad_spio = torch.randn(16, 3, 5, 8)  # Spio's C x R x S x 8, f32, as the kernels write it
    grad32 = grad_spio.permute(0, 3, 1, 2)  # its C x 8 x R x S view: channels_last memory
    grad = weight_to_torch(grad32, torch.bfloat16, channels_last)
    assert grad.shape == (16, 8, 3, 5)
    assert grad.dtype == torch.bfloat16
    memory_format = torch.channels_last if channels_last else torch.contiguous_format
    assert grad.is_contiguous(memory_format=memory_format)
    assert torch.equal(grad, grad32.to(torch.bfloat16))


def test_a_layer_plan_is_built_once_per_layer_and_device() -> None:
    from spio.torch._cuda_passes import layer_plan

    first = layer_plan(torch.Size((2, 16, 8, 8)), [3, 3], [1, 1, 1, 1], torch.float16, False, 0)
    assert layer_plan((2, 16, 8, 8), (3, 3), (1, 1, 1, 1), torch.float16, False, 0) is first
    other = layer_plan((2, 16, 8, 8), (3, 3), (1, 1, 1, 1), torch.float16, False, 1)
    assert other is not first
    assert other.device == 1
    with_bias = layer_plan((2, 16, 8, 8), (3, 3), (1, 1, 1, 1), torch.float16, True, 0)
    assert with_bias.params.has_bias
    assert not with_bias.grad_params.has_bias


def test_a_layer_plan_allocates_in_the_kernels_memory_order() -> None:
    from spio.torch._cuda_passes import layer_plan

    plan = layer_plan((2, 16, 9, 7), (3, 5), (0, 1, 2, 1), torch.bfloat16, False, 0)
    like = torch.empty(1, dtype=torch.bfloat16)
    sizes = {"output": (2, 16, 8, 6), "input": (2, 16, 9, 7), "weight": (16, 8, 3, 5)}
    for name, size in sizes.items():
        tensor = plan.empty(name, like)
        assert tensor.shape == size
        assert tensor.dtype == torch.bfloat16
        assert tensor.is_contiguous(memory_format=torch.channels_last)
    assert plan.empty("weight", like, torch.float32).dtype == torch.float32


def test_a_layer_plan_chooses_and_loads_each_pass_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from spio.torch import _cuda_passes

    plan = _cuda_passes.LayerPlan(
        _cuda_passes.layer_params((2, 16, 8, 8), (3, 3), (1, 1, 1, 1), torch.float16, True),
        _cuda_passes.layer_params((2, 16, 8, 8), (3, 3), (1, 1, 1, 1), torch.float16, False),
        device=0,
    )
    chosen: list[tuple[str, bool]] = []

    def choose(pass_name: str, params: Any, device: int) -> Any:
        chosen.append((pass_name, params.has_bias))
        return types.SimpleNamespace(config=f"{pass_name} config")

    monkeypatch.setattr(_cuda_passes, "choose_config", choose)
    launches = {
        name: (lambda p, c, d, name=name: (name, c, d)) for name in ("fprop", "dgrad", "wgrad")
    }
    monkeypatch.setattr(_cuda_passes, "_LAUNCHES", launches)
    assert plan.launch("fprop") == ("fprop", "fprop config", 0)
    assert plan.launch("wgrad") == ("wgrad", "wgrad config", 0)
    assert plan.launch("fprop") == ("fprop", "fprop config", 0)
    assert chosen == [("fprop", True), ("wgrad", False)]  # the gradients' params have no bias
    # Atomic sums: the same chosen config, placed by atomic_config_on, cached apart.
    monkeypatch.setattr(
        _cuda_passes, "atomic_config_on", lambda p, c, d, reduced: f"{c} + atomic {reduced}"
    )
    assert plan.launch("wgrad", atomic_sums=True) == ("wgrad", "wgrad config + atomic False", 0)
    rounded = plan.launch("wgrad", atomic_sums=True, rounded=True)
    assert rounded == ("wgrad", "wgrad config + atomic True", 0)
    assert plan.launch("wgrad") == ("wgrad", "wgrad config", 0)
    assert chosen == [("fprop", True), ("wgrad", False), ("wgrad", False), ("wgrad", False)]
