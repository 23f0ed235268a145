"""spio.functional.conv2d_gw8 on CPU (PyTorch's fp32 path): results, gradients, operator
registration (fake tensors, autograd, torch.compile) and argument checks."""

from __future__ import annotations

import types
import warnings
from typing import Any

import numpy as np
import pytest
import torch
from conv2d_cases import CASES, Case
from devices import DEVICES
from torch.autograd import forward_ad
from torch.utils.flop_counter import FlopCounterMode

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
        (
            {"input": torch.randn(1, 16, 5, 5, 1).half()},
            ValueError,
            r"input must be 4-D \(N x C x H x W\), or 3-D \(C x H x W\) for one image",
        ),
        ({"input": torch.randn(1, 16, 5, 5)}, TypeError, "input must be float16 or bfloat16"),
        ({"input": torch.randn(1, 12, 5, 5).half()}, ValueError, "multiple of 8 channels.*got 12"),
        ({"weight": torch.randn(16, 4, 3, 3).half()}, ValueError, r"weight must be 16 x 8 x R x S"),
        ({"weight": torch.randn(16, 8, 3, 3).bfloat16()}, TypeError, "input's dtype"),
        ({"bias": torch.randn(8)}, ValueError, r"bias must have shape \(16,\)"),
        ({"bias": torch.ones(16, dtype=torch.int32)}, TypeError, "bias must be a floating"),
        ({"padding": 3}, ValueError, r"padding top must be 0 to 2 \(below the kernel's height 3\)"),
        ({"padding": (0, -1)}, ValueError, "padding left must be 0 to 2 .*, got -1"),
        ({"padding": "full"}, ValueError, "padding must be 'valid', 'same'"),
        ({"padding": (1, 2, 3)}, TypeError, "padding must be an int, a pair"),
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


#: Layers the kernels do not take, in the arguments' terms (not Conv2dGw8Params' fields):
#: (input size, weight size, padding, message).
BAD_LAYERS = [
    (
        (1, 16, 5, 5),
        (16, 8, 8, 8),
        0,
        "weight's kernel size must be 1 to 7 in each dimension, got 8 x 8",
    ),
    ((1, 16, 5, 5), (16, 8, 8, 3), 0, "weight's kernel size must be 1 to 7 .* got 8 x 3"),
    ((2, 16, 0, 5), (16, 8, 3, 3), 1, "input's height and width must be at least 1, got 0 x 5"),
    (
        (2, 16, 2, 6),
        (16, 8, 3, 3),
        0,
        r"input of 2 x 6 with padding \(0, 0, 0, 0\) \(top, bottom, left, right\) and a 3 x 3 "
        r"kernel gives an empty output \(0 x 4\)",
    ),
]


@pytest.mark.parametrize(("input_size", "weight_size", "padding", "match"), BAD_LAYERS)
@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_layer_shape_errors_name_the_arguments(
    input_size: tuple[int, ...],
    weight_size: tuple[int, ...],
    padding: int,
    match: str,
    device: str,
) -> None:
    x = torch.randn(input_size, dtype=torch.float16, device=device)
    weight = torch.randn(weight_size, dtype=torch.float16, device=device)
    with pytest.raises(ValueError, match=match):
        spio_f.conv2d_gw8(x, weight, padding=padding)


@pytest.mark.parametrize(("input_size", "weight_size", "padding", "match"), BAD_LAYERS)
def test_the_eager_paths_layer_plan_gives_the_same_errors(
    input_size: tuple[int, ...], weight_size: tuple[int, ...], padding: int, match: str
) -> None:
    """The eager path checks the layer where it builds the layer's plan (once per layer)."""
    from spio.torch._cuda_passes import layer_plan

    sides = (padding,) * 4
    with pytest.raises(ValueError, match=match):
        layer_plan(input_size, weight_size[2:], sides, torch.float16, False, 0)


def test_layer_params_are_validated_once_per_layer() -> None:
    from spio.torch._cuda_passes import layer_params

    first = layer_params(torch.Size((2, 16, 8, 8)), [3, 3], [1, 1, 1, 1], torch.float16)
    assert layer_params((2, 16, 8, 8), (3, 3), (1, 1, 1, 1), torch.float16) is first
    with pytest.raises(ValueError, match="padding top must be 0 to 2"):
        layer_params((2, 16, 8, 8), (3, 3), (3, 1, 1, 1), torch.float16)
    with pytest.raises(TypeError, match=r"float16 or bfloat16, got torch\.float32"):
        layer_params((2, 16, 8, 8), (3, 3), (1, 1, 1, 1), torch.float32)


@pytest.mark.parametrize(
    "padding",
    [np.int64(1), (np.int64(1), 1), [np.int32(1)] * 4, torch.tensor(1), (1, 1)],
    ids=repr,
)
def test_padding_takes_integers_operator_index_takes(padding: object) -> None:
    x = torch.randn(1, 16, 5, 5).half()
    weight = torch.randn(16, 8, 3, 3).half()
    expected = spio_f.conv2d_gw8(x, weight, padding=1)
    assert torch.equal(spio_f.conv2d_gw8(x, weight, padding=padding), expected)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "padding",
    [np.array([1, 1]), np.array(1.0), True, (1, True), 1.0, (1.0, 1), None, (1, 2, 3)],
    ids=repr,
)
def test_padding_of_other_types_is_refused_by_name(padding: object) -> None:
    x = torch.randn(1, 16, 5, 5).half()
    weight = torch.randn(16, 8, 3, 3).half()
    with pytest.raises(TypeError, match=r"padding must be an int, a pair \(rows, columns\)"):
        spio_f.conv2d_gw8(x, weight, padding=padding)  # type: ignore[arg-type]


def _empty_batch(device: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    x = torch.randn(0, 16, 9, 7, dtype=torch.float16, device=device)
    x = x.contiguous(memory_format=torch.channels_last).requires_grad_()
    weight = torch.randn(16, 8, 3, 5, dtype=torch.float16, device=device).requires_grad_()
    bias = torch.randn(16, device=device).requires_grad_()
    return x, weight, bias


def test_an_empty_batch_gives_an_empty_output_and_zero_gradients_as_torch_does() -> None:
    x, weight, bias = _empty_batch("cpu")
    y = spio_f.conv2d_gw8(x, weight, bias, padding=(1, 2))
    want = torch.nn.functional.conv2d(x.float(), weight.float(), bias, padding=(1, 2), groups=2)
    assert y.shape == want.shape == (0, 16, 9, 7)
    assert y.dtype == torch.float16
    assert y.is_contiguous(memory_format=torch.channels_last)
    y.float().sum().backward()
    assert x.grad is not None
    assert x.grad.shape == x.shape
    assert weight.grad is not None
    assert torch.equal(weight.grad, torch.zeros_like(weight))
    assert bias.grad is not None
    assert torch.equal(bias.grad, torch.zeros_like(bias))
    fake = spio_f.conv2d_gw8(*(t.detach().to("meta") for t in (x, weight, bias)), padding=(1, 2))
    assert fake.shape == (0, 16, 9, 7)
    assert fake.is_contiguous(memory_format=torch.channels_last)


def test_an_empty_batch_skips_the_eager_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """On CUDA an empty batch goes to the operators (a layer plan needs N >= 1): with the
    eager path taken for every call, an empty batch on CPU still gets its empty output."""
    from spio.torch import _functional

    monkeypatch.setattr(_functional, "runs_eagerly", lambda *tensors: True)
    x, weight, bias = _empty_batch("cpu")
    assert spio_f.conv2d_gw8(x, weight, bias, padding=1).shape == (0, 16, 9, 5)


def test_the_cuda_implementations_answer_an_empty_batch_without_kernels() -> None:
    """The operators' CUDA implementations, called on CPU tensors: an empty batch returns
    before any plan or launch."""
    from spio.torch import _conv2d_gw8 as ops

    x, weight, _ = (t.detach() for t in _empty_batch("cpu"))
    padding = [1, 1, 2, 2]
    y = ops.conv2d_gw8_op_cuda(x, weight, None, padding)
    assert y.shape == (0, 16, 9, 7)
    assert y.is_contiguous(memory_format=torch.channels_last)
    grad_input = ops.conv2d_gw8_input_grad_op_cuda(y, weight, list(x.shape), padding)
    assert grad_input.shape == x.shape
    grad_weight = ops.conv2d_gw8_weight_grad_op_cuda(x, y, [3, 5], padding)
    assert torch.equal(grad_weight, torch.zeros_like(weight))
    grad_weight, grad_bias = ops.conv2d_gw8_weight_bias_grad_op_cuda(x, y, [3, 5], padding)
    assert torch.equal(grad_weight, torch.zeros_like(weight))
    assert torch.equal(grad_bias, torch.zeros(16))


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


# ---- forward-mode AD, tracers, autocast, FLOP counts, the weight gradient's layout ---------

#: The arguments of conv2d_gw8 a tangent may ride on.
MOVING = ("input", "weight", "bias")


@pytest.mark.parametrize("requires_grad", [False, True], ids=["no grad", "requires grad"])
@pytest.mark.parametrize("moving", ["input", "weight", "bias"])
@pytest.mark.parametrize("device", DEVICES)
def test_forward_ad_carries_the_convolutions_tangent(
    device: str, moving: str, requires_grad: bool
) -> None:
    # The tangent was dropped without a word (conv(x) + x gave x's tangent alone) where no
    # argument required grad, and torch's own error was raised where one did.
    case = CASES[0]
    x, weight, bias = (t.detach() for t in case.make(device))
    tensors = (x, weight, bias)
    tangents = {name: torch.randn_like(t) for name, t in zip(MOVING, tensors, strict=True)}
    with forward_ad.dual_level():
        arguments = {"input": x.requires_grad_(requires_grad), "weight": weight, "bias": bias}
        arguments[moving] = forward_ad.make_dual(arguments[moving], tangents[moving])
        y = spio_f.conv2d_gw8(*arguments.values(), padding=case.padding)
        tangent = forward_ad.unpack_dual(y).tangent
        exact = {name: t.float() for name, t in arguments.items()}
        want = forward_ad.unpack_dual(case.reference(*exact.values())).tangent
    assert tangent is not None
    assert want is not None
    scale = want.abs().max().item() + 1
    torch.testing.assert_close(tangent.float(), want, atol=case.tolerance() * scale, rtol=0)


def test_an_operator_called_on_a_dual_tensor_refuses_instead_of_dropping_the_tangent() -> None:
    x = torch.randn(1, 16, 5, 5).half()
    weight = torch.randn(16, 8, 3, 3).half()
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(x, torch.randn_like(x))
        with pytest.raises(NotImplementedError, match=r"call spio\.functional\.conv2d_gw8"):
            torch.ops.spio.conv2d_gw8(dual, weight, None, [1, 1, 1, 1])
        grad_output = forward_ad.make_dual(x, torch.randn_like(x))
        with pytest.raises(NotImplementedError, match="drop the tangent"):
            torch.ops.spio.conv2d_gw8_weight_grad(x, grad_output, [3, 3], [1, 1, 1, 1])


def test_fx_symbolic_trace_records_the_functional_as_one_call() -> None:
    # It raised "input must be a torch.Tensor, got Proxy".
    class Layer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = torch.nn.Parameter(torch.randn(16, 8, 3, 3).half())

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return spio_f.conv2d_gw8(x, self.weight, None, 1)

    layer = Layer()
    traced = torch.fx.symbolic_trace(layer)
    calls = [node.target for node in traced.graph.nodes if node.op == "call_function"]
    assert calls == [spio_f.conv2d_gw8]
    x = torch.randn(2, 16, 6, 6).half()
    assert torch.equal(traced(x), layer(x))


@pytest.mark.parametrize("device", DEVICES)
def test_the_functional_runs_under_autocast_as_torchs_conv2d(device: str) -> None:
    # It refused fp32 tensors under autocast, advising to run under autocast.
    x = torch.randn(2, 16, 6, 6, device=device)
    weight = torch.randn(16, 8, 3, 3, device=device)
    bias = torch.randn(16, device=device)
    for dtype in (torch.float16, torch.bfloat16):
        with torch.autocast(device, dtype=dtype):
            y = spio_f.conv2d_gw8(x, weight, bias, padding=1)
            want = torch.nn.functional.conv2d(x, weight, bias, padding=1, groups=2)
        assert y.dtype == want.dtype == dtype
        torch.testing.assert_close(y.float(), want.float(), atol=0.1, rtol=0.02)


def test_the_operator_has_autocasts_rule_for_the_regions_dtype() -> None:
    x = torch.randn(1, 16, 5, 5)
    weight = torch.randn(16, 8, 3, 3)
    bias = torch.randn(16)  # added in fp32: autocast leaves it
    for dtype in (torch.float16, torch.bfloat16):
        with torch.autocast("cpu", dtype=dtype):
            y = torch.ops.spio.conv2d_gw8(x, weight, bias, [1, 1, 1, 1])
        assert y.dtype == dtype
        expected = spio_f.conv2d_gw8(x.to(dtype), weight.to(dtype), bias, padding=1)
        assert torch.equal(y, expected)


def test_an_fp32_input_where_autocast_is_disabled_is_told_what_turns_it_off() -> None:
    # The hint said "run under torch.autocast" inside an autocast region.
    x = torch.randn(1, 16, 5, 5)
    weight = torch.randn(16, 8, 3, 3)
    disabled = r"not inside an autocast\(enabled=False\) region"
    with (
        torch.autocast("cpu", dtype=torch.bfloat16),
        torch.autocast("cpu", enabled=False),
        pytest.raises(TypeError, match=disabled),
    ):
        spio_f.conv2d_gw8(x, weight, padding=1)
    left = r"autocast is enabled for cpu but leaves torch\.float64"
    with torch.autocast("cpu", dtype=torch.bfloat16), pytest.raises(TypeError, match=left):
        spio_f.conv2d_gw8(x.double(), weight.double(), padding=1)


def test_one_image_is_taken_as_torchs_conv2d_takes_it() -> None:
    x = torch.randn(1, 16, 6, 5).half()
    weight = torch.randn(16, 8, 3, 3).half()
    y = spio_f.conv2d_gw8(x[0], weight, padding=1)
    assert y.shape == (16, 6, 5)
    assert torch.equal(y, spio_f.conv2d_gw8(x, weight, padding=1)[0])


def test_compiling_gives_no_warning_about_the_layer_checks_cache() -> None:
    # Dynamo warned about the lru_cache of the layer checks on every compile.
    weight = torch.randn(16, 8, 3, 3).half()

    def layer(x: torch.Tensor) -> torch.Tensor:
        return spio_f.conv2d_gw8(x, weight, padding=1)

    torch.compiler.reset()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.compile(layer, backend="aot_eager", fullgraph=True)(torch.randn(2, 16, 6, 6).half())
    assert not [w for w in caught if "lru_cache" in str(w.message)]


@pytest.mark.parametrize(
    ("images", "kernel", "padding"),
    [(8192, 3, 1), (8191, 7, 6)],
    ids=["the input", "the output alone"],
)
def test_a_layer_of_2_31_elements_or_more_is_refused(
    images: int, kernel: int, padding: int
) -> None:
    # 8192 x 64 x 64 x 64 is 2**31 elements. 8191 images are 2**18 fewer, but a 7 x 7 kernel
    # with 6 rows and columns of padding a side makes the output 70 x 70. (On the meta
    # device, so no memory is taken: the check runs before any pass.)
    x = torch.empty(images, 64, 64, 64, dtype=torch.float16, device="meta")
    weight = torch.empty(64, 8, kernel, kernel, dtype=torch.float16, device="meta")
    with pytest.raises(ValueError, match=r"too large: .*fewer than 2\*\*31 elements"):
        spio_f.conv2d_gw8(x, weight, padding=padding)


def test_flop_counter_counts_every_pass() -> None:
    # FlopCounterMode counted none of Spio's passes.
    case = CASES[0]
    x, weight, bias = case.make("cpu")
    with FlopCounterMode(display=False) as counter:
        y = spio_f.conv2d_gw8(x, weight, bias, padding=case.padding)
        y.float().sum().backward()
    n, c, p, q = y.shape
    one_pass = 2 * n * c * 8 * case.r * case.s * p * q  # torch's count of a convolution
    counts = counter.get_flop_counts()["Global"]
    assert counts[torch.ops.spio.conv2d_gw8] == one_pass
    assert counts[torch.ops.spio.conv2d_gw8_input_grad] == one_pass
    assert counts[torch.ops.spio.conv2d_gw8_weight_bias_grad] == one_pass
    with FlopCounterMode(display=False) as torch_counter:
        case.reference(x.detach(), weight.detach(), bias.detach())
    assert torch_counter.get_total_flops() == one_pass


@pytest.mark.parametrize("device", [*DEVICES, "meta"])
def test_the_weight_gradient_operators_return_the_layout_conv2dgw8_keeps_its_weight_in(
    device: str,
) -> None:
    # They returned contiguous gradients, which autograd copied into the channels_last
    # weight's layout on every compiled training step.
    case = CASES[0]
    x, _, _ = (t.detach() for t in case.make(device))
    grad_output = torch.randn(2, 16, 9, 7, device=device).half()
    grad_output = grad_output.contiguous(memory_format=torch.channels_last)
    padding = list(case.padding)
    grad_weight = torch.ops.spio.conv2d_gw8_weight_grad(x, grad_output, [3, 3], padding)
    with_bias, _ = torch.ops.spio.conv2d_gw8_weight_bias_grad(x, grad_output, [3, 3], padding)
    for grad in (grad_weight, with_bias):
        assert grad.shape == (16, 8, 3, 3)
        assert grad.is_contiguous(memory_format=torch.channels_last)
