"""spio.functional.linear and matmul on CPU (PyTorch's fp32 path): results, gradients, the
operator's registration (fake tensors, autograd, torch.compile), the operand layouts the
kernels are handed, and argument checks."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from devices import DEVICES
from torch.autograd import forward_ad
from torch.utils.flop_counter import FlopCounterMode

import spio.functional as spio_f
from spio.torch._matmul import _layout


def depth_tolerance(dtype: torch.dtype, depth: int) -> float:
    """A 16-bit result's error bound relative to its scale: the final rounding plus fp32
    accumulation of `depth` products."""
    eps = 2.0**-8 if dtype == torch.bfloat16 else 2.0**-11
    return 2 * eps + depth * 2.0**-22


def check_linear(
    device: str, batch: tuple[int, ...], features: tuple[int, int], dtype: torch.dtype, bias: bool
) -> None:
    """linear forward and its three gradients on device against fp32 torch."""
    in_features, out_features = features
    gen = torch.Generator().manual_seed(sum(batch) + in_features)

    def make(*shape: int) -> torch.Tensor:
        values = torch.rand(*shape, generator=gen) * 2 - 1
        return values.to(dtype).to(device).requires_grad_()

    x = make(*batch, in_features)
    w = make(out_features, in_features)
    b = make(out_features) if bias else None
    y = spio_f.linear(x, w, b)
    x32, w32 = (t.detach().float().requires_grad_() for t in (x, w))
    b32 = b.detach().float().requires_grad_() if b is not None else None
    reference = torch.nn.functional.linear(x32, w32, b32)
    assert y.dtype == dtype
    assert y.shape == reference.shape
    scale = reference.abs().max().item() + 1
    tolerance = depth_tolerance(dtype, in_features) * scale
    torch.testing.assert_close(y.float(), reference, atol=tolerance, rtol=0)

    grad = (torch.rand(reference.shape, generator=gen) * 2 - 1).to(dtype).to(device)
    y.backward(grad)
    reference.backward(grad.float())
    rows = max(1, int(torch.tensor(batch).prod()))
    for name, got, want, depth in (
        ("input", x.grad, x32.grad, out_features),
        ("weight", w.grad, w32.grad, rows),
    ):
        assert got is not None
        assert want is not None
        assert got.dtype == dtype, name
        bound = depth_tolerance(dtype, depth) * (want.abs().max().item() + 1)
        torch.testing.assert_close(got.float(), want, atol=bound, rtol=0, msg=name)
    if b is not None:
        assert b.grad is not None
        assert b32 is not None
        bound = depth_tolerance(dtype, rows) * (b32.grad.abs().max().item() + 1)
        torch.testing.assert_close(b.grad.float(), b32.grad, atol=bound, rtol=0)


#: (leading dimensions, (in_features, out_features), dtype, bias): one row, rows not a
#: multiple of 8, several leading dimensions, both dtypes.
LINEAR_CASES = [
    ((1,), (16, 8), torch.float16, False),
    ((13,), (24, 40), torch.bfloat16, True),
    ((2, 3, 5), (64, 16), torch.float16, True),
    ((96,), (128, 72), torch.bfloat16, False),
]


@pytest.mark.parametrize(("batch", "features", "dtype", "bias"), LINEAR_CASES, ids=str)
def test_linear_matches_fp32_forward_and_backward_on_cpu(
    batch: tuple[int, ...], features: tuple[int, int], dtype: torch.dtype, bias: bool
) -> None:
    check_linear("cpu", batch, features, dtype, bias)


def check_matmul_views(device: str) -> None:
    """matmul of every combination of plain and transposed operands, and its gradients."""
    gen = torch.Generator().manual_seed(7)
    m, k, n = 24, 40, 16
    for a_transposed in (False, True):
        for b_transposed in (False, True):
            a_store = torch.rand((k, m) if a_transposed else (m, k), generator=gen) - 0.5
            b_store = torch.rand((n, k) if b_transposed else (k, n), generator=gen) - 0.5
            a_store = a_store.half().to(device).requires_grad_()
            b_store = b_store.half().to(device).requires_grad_()
            a = a_store.t() if a_transposed else a_store
            b = b_store.t() if b_transposed else b_store
            c = spio_f.matmul(a, b)
            reference = a.detach().float() @ b.detach().float()
            case = f"a.t(): {a_transposed}, b.t(): {b_transposed}"
            bound = depth_tolerance(torch.float16, k) * (reference.abs().max().item() + 1)
            torch.testing.assert_close(c.float(), reference, atol=bound, rtol=0, msg=case)
            c.float().sum().backward()  # an expanded gradient: zero strides
            ones = torch.ones(m, n, device=device)
            grads = (
                (a_store.grad, (ones @ b.detach().float().t())),
                (b_store.grad, (a.detach().float().t() @ ones)),
            )
            for got, want_view in grads:
                assert got is not None
                want = want_view.t() if got.shape != want_view.shape else want_view
                bound = 1e-2 * (want.abs().max().item() + 1)
                torch.testing.assert_close(got.float(), want, atol=bound, rtol=0, msg=case)


def test_matmul_takes_transposed_views_on_cpu() -> None:
    check_matmul_views("cpu")


def test_operand_layouts_name_what_the_kernels_read() -> None:
    """A transposed view is handed over as the matrix it views, in the other layout; other
    strides, odd row lengths and misaligned starts are copied."""
    x = torch.zeros(16, 24, dtype=torch.float16)
    assert _layout(x, "mk", "km")[1] == "mk"
    matrix, layout = _layout(x.t(), "mk", "km")
    assert layout == "km"
    assert matrix.data_ptr() == x.data_ptr()
    assert tuple(matrix.shape) == (16, 24)
    # x[:, :8] has rows 24 apart: neither layout's dense rows.
    copied, layout = _layout(x[:, :8], "kn", "nk")
    assert layout == "kn"
    assert copied.is_contiguous()
    # A transposed view whose rows (its columns) are not whole 16-byte vectors: copied.
    assert _layout(torch.zeros(8, 12, dtype=torch.float16).t(), "mk", "km")[1] == "mk"
    # One element in: off a 16-byte boundary.
    shifted = torch.zeros(16 * 8 + 1, dtype=torch.float16)[1:].view(16, 8)
    copied, layout = _layout(shifted, "mk", "km")
    assert copied.data_ptr() != shifted.data_ptr()


def test_operator_passes_torch_library_opcheck() -> None:
    a = torch.randn(12, 16).half().requires_grad_()
    b = torch.randn(16, 8).half().requires_grad_()
    torch.library.opcheck(torch.ops.spio.mm.default, (a, b))
    torch.library.opcheck(torch.ops.spio.mm.default, (a.detach(), b.detach().t().t()))
    bias = torch.randn(8).half().requires_grad_()
    torch.library.opcheck(torch.ops.spio.addmm.default, (bias, a, b))
    torch.library.opcheck(torch.ops.spio.addmm.default, (bias.detach(), a, b.detach()))


def test_compiles_with_torch_compile_without_graph_breaks() -> None:
    x = torch.randn(6, 32).half().requires_grad_()
    w = torch.randn(16, 32).half().requires_grad_()
    b = torch.randn(16).half().requires_grad_()

    def step(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return (spio_f.linear(x, w).float().square() + spio_f.linear(x, w, b).float()).sum()

    compiled = torch.compile(step, backend="aot_eager", fullgraph=True)
    loss = compiled(x, w, b)
    loss.backward()
    torch.testing.assert_close(loss, step(x.detach(), w.detach(), b.detach()))
    assert x.grad is not None
    assert w.grad is not None
    torch.testing.assert_close(b.grad, torch.full_like(b, 6))


def test_no_in_features_give_the_bias_on_every_row_as_torch_does() -> None:
    """A regression test: reshaping 0 in_features into rows of -1 was ambiguous."""
    x = torch.randn(2, 5, 0).half().requires_grad_()
    w = torch.randn(24, 0).half().requires_grad_()
    b = torch.randn(24).half().requires_grad_()
    y = spio_f.linear(x, w, b)
    want = torch.nn.functional.linear(x.float(), w.float(), b.float())
    assert y.shape == want.shape == (2, 5, 24)
    assert torch.equal(y, want.half())
    y.float().sum().backward()
    assert x.grad is not None
    assert x.grad.shape == x.shape
    assert w.grad is not None
    assert w.grad.shape == w.shape
    torch.testing.assert_close(b.grad, torch.full_like(b, 10))


def test_empty_batches_give_empty_outputs_and_zero_weight_gradients() -> None:
    x = torch.zeros(0, 16, dtype=torch.float16, requires_grad=True)
    w = torch.randn(8, 16).half().requires_grad_()
    y = spio_f.linear(x, w)
    assert tuple(y.shape) == (0, 8)
    y.sum().backward()
    assert w.grad is not None
    assert torch.equal(w.grad, torch.zeros_like(w))
    b = torch.randn(8).half().requires_grad_()
    y = spio_f.linear(x, w, b)
    assert tuple(y.shape) == (0, 8)
    y.sum().backward()
    assert torch.equal(b.grad, torch.zeros_like(b))


_H = torch.float16


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: spio_f.linear([1.0], torch.zeros(8, 8, dtype=_H)), TypeError, "input must be a"),
        (
            lambda: spio_f.linear(torch.zeros(2, 8), torch.zeros(8, 8)),
            TypeError,
            "input must be float16 or bfloat16 .* got torch.float32",
        ),
        (
            lambda: spio_f.linear(torch.zeros(2, 8, dtype=_H), torch.zeros(8, 8).bfloat16()),
            TypeError,
            "weight must have input's dtype torch.float16, got torch.bfloat16",
        ),
        (
            lambda: spio_f.linear(torch.zeros(2, 16, dtype=_H), torch.zeros(8, 8, dtype=_H)),
            ValueError,
            r"input's last dimension must be weight's in_features 8, got input shape \(2, 16\)",
        ),
        (
            lambda: spio_f.linear(torch.zeros(2, 12, dtype=_H), torch.zeros(8, 12, dtype=_H)),
            ValueError,
            r"in_features \(weight \(8, 12\)\) must be a multiple of 8 .* got 12",
        ),
        (
            lambda: spio_f.linear(torch.zeros(2, 8, dtype=_H), torch.zeros(12, 8, dtype=_H)),
            ValueError,
            r"out_features \(weight \(12, 8\)\) must be a multiple of 8 .* got 12",
        ),
        (
            lambda: spio_f.linear(
                torch.zeros(2, 8, dtype=_H), torch.zeros(8, 8, dtype=_H), torch.zeros(4, dtype=_H)
            ),
            ValueError,
            r"bias must have shape \(8,\), got \(4,\)",
        ),
        (
            lambda: spio_f.linear(
                torch.zeros(2, 8, dtype=_H), torch.zeros(8, 8, dtype=_H), torch.zeros(8)
            ),
            TypeError,
            r"bias must have input's dtype torch\.float16, got torch\.float32",
        ),
        (
            lambda: spio_f.linear(
                torch.zeros(2, 8, dtype=_H), torch.zeros(8, 8, dtype=_H), torch.zeros(1, 8)
            ),
            ValueError,
            r"bias must have shape \(8,\), got \(1, 8\)",
        ),
        (
            lambda: spio_f.matmul(torch.zeros(16, 12, dtype=_H), torch.zeros(12, 8, dtype=_H)),
            ValueError,
            r"K \(a's columns, b's rows; a \(16, 12\)\) must be a multiple of 8",
        ),
        (
            lambda: spio_f.matmul(torch.zeros(2, 8, dtype=_H), torch.zeros(16, 8, dtype=_H)),
            ValueError,
            r"a's columns must match b's rows: a is \(2, 8\), b is \(16, 8\)",
        ),
        (
            lambda: spio_f.matmul(torch.zeros(2, 8, 8, dtype=_H), torch.zeros(8, 8, dtype=_H)),
            ValueError,
            r"a must be 2-D, got shape \(2, 8, 8\)",
        ),
        (
            lambda: spio_f.matmul(torch.zeros(2, 8, dtype=_H), torch.zeros(8, 12, dtype=_H)),
            ValueError,
            r"N \(b's columns; b \(8, 12\)\) must be a multiple of 8",
        ),
    ],
)
def test_bad_arguments_are_named(call: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        call()


def test_eager_products_plan_each_geometry_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """mm_cuda's host path (the launch faked, so it runs on CPU tensors): a geometry's launch
    is made once and given the operands' addresses; the same geometry off its alignment, or
    with a strided bias, goes through the copies."""
    from spio.torch import _matmul

    made: list[Any] = []
    launched: list[tuple[Any, ...]] = []

    def fake_launch(params: Any, device: int) -> Any:
        made.append(params)
        return lambda c, a, b, bias=None: launched.append((params, a, b, bias))

    monkeypatch.setattr(_matmul, "product_launch", fake_launch)
    monkeypatch.setattr(_matmul, "_PLANS", {})
    storage = torch.zeros(16 * 32 + 8, dtype=torch.float16)
    x, shifted = storage[:512].view(16, 32), storage[1:513].view(16, 32)
    w = torch.zeros(24, 32, dtype=torch.float16)
    for _ in range(3):
        assert tuple(_matmul.mm_cuda(x, w.t()).shape) == (16, 24)
    assert [(p.a_layout, p.b_layout, p.bias) for p in made] == [("mk", "nk", False)]
    assert [call[1:3] for call in launched] == [(x.data_ptr(), w.data_ptr())] * 3
    _matmul.mm_cuda(shifted, w.t())
    assert len(made) == 2
    copied = launched[-1][1]
    assert isinstance(copied, torch.Tensor)
    assert copied.data_ptr() != shifted.data_ptr()
    bias = torch.zeros(48, dtype=torch.float16)
    _matmul.mm_cuda(x, w.t(), bias[::2])  # a strided bias is copied
    assert made[-1].bias
    assert launched[-1][3].stride() == (1,)


def test_an_a_of_any_k_is_copied_into_the_layout_of_whole_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A strided A whose K is not a multiple of 8 (a weight gradient's grad.t() @ input of
    13 rows, say) is copied as K x M, the layout whose rows are whole vectors, so the CUDA
    path takes every product the operators' check lets through (launch faked, CPU tensors)."""
    from spio.torch import _matmul

    made: list[Any] = []
    launched: list[tuple[Any, ...]] = []

    def fake_launch(params: Any, device: int) -> Any:
        made.append(params)
        return lambda c, a, b, bias=None: launched.append((a, b))

    monkeypatch.setattr(_matmul, "product_launch", fake_launch)
    monkeypatch.setattr(_matmul, "_PLANS", {})
    a = torch.randn(16, 26).half()[:, ::2]  # 16 x 13, strided
    b = torch.randn(13, 8).half()
    assert tuple(_matmul.mm_cuda(a, b).shape) == (16, 8)
    assert [(p.m, p.k, p.a_layout, p.b_layout) for p in made] == [(16, 13, "km", "kn")]
    a_matrix = launched[0][0]
    assert a_matrix.is_contiguous()
    assert torch.equal(a_matrix, a.t())


def test_a_dynamic_batch_compiles_once_whatever_its_divisibility_by_8() -> None:
    """Regression: spio::mm's fake implementation checked K % 8 on the weight gradient's
    product, whose K is the batch's rows, so a dynamic batch guarded on it and recompiled
    when its divisibility by 8 changed."""
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    weight = torch.randn(16, 8, dtype=torch.float16, requires_grad=True)
    compiled = torch.compile(lambda x: spio_f.linear(x, weight), backend="aot_eager", dynamic=True)
    for rows in (16, 24, 5, 13, 32, 7):
        x = torch.randn(rows, 8, dtype=torch.float16, requires_grad=True)
        compiled(x).float().sum().backward()
    # One graph for the dynamic batch, and at most one more for torch's 0/1 sizes and the
    # first call's static trace.
    assert counters["stats"]["unique_graphs"] <= 2
    torch._dynamo.reset()


# ---- forward-mode AD, tracers, autocast, FLOP counts ------------------------------------


@pytest.mark.parametrize("requires_grad", [False, True], ids=["no grad", "requires grad"])
@pytest.mark.parametrize("device", DEVICES)
def test_forward_ad_carries_the_products_tangent(device: str, requires_grad: bool) -> None:
    # The tangent was dropped (None) where no argument required grad.
    gen = torch.Generator().manual_seed(0)

    def make(*shape: int) -> torch.Tensor:
        return (torch.rand(*shape, generator=gen) * 2 - 1).to(torch.bfloat16).to(device)

    x, weight, bias = make(3, 5, 16), make(8, 16), make(8)
    dx, dweight, dbias = make(3, 5, 16), make(8, 16), make(8)
    with forward_ad.dual_level():
        duals = [
            forward_ad.make_dual(t.requires_grad_(requires_grad), d)
            for t, d in ((x, dx), (weight, dweight), (bias, dbias))
        ]
        linear_tangent = forward_ad.unpack_dual(spio_f.linear(*duals)).tangent
        matmul_tangent = forward_ad.unpack_dual(spio_f.matmul(duals[0][0], duals[1].t())).tangent
    x32, w32 = x.float(), weight.float()
    want = dx.float() @ w32.t() + x32 @ dweight.float().t() + dbias.float()
    assert linear_tangent is not None
    assert matmul_tangent is not None
    torch.testing.assert_close(linear_tangent.float(), want, atol=0.05, rtol=0.02)
    want_product = (want - dbias.float())[0]
    torch.testing.assert_close(matmul_tangent.float(), want_product, atol=0.05, rtol=0.02)


def test_an_operator_called_on_a_dual_tensor_refuses_instead_of_dropping_the_tangent() -> None:
    a = torch.randn(4, 16).half()
    b = torch.randn(16, 8).half()
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(a, torch.randn_like(a))
        with pytest.raises(NotImplementedError, match=r"torch\.ops\.spio\.mm has no forward-mode"):
            torch.ops.spio.mm(dual, b)
        with pytest.raises(NotImplementedError, match=r"spio\.functional\.linear"):
            torch.ops.spio.addmm(torch.zeros(8).half(), dual, b)


def test_fx_symbolic_trace_records_linear_and_matmul_as_one_call_each() -> None:
    class Layer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = torch.nn.Parameter(torch.randn(8, 16).half())

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return spio_f.matmul(spio_f.linear(x, self.weight), self.weight)

    layer = Layer()
    traced = torch.fx.symbolic_trace(layer)
    calls = [node.target for node in traced.graph.nodes if node.op == "call_function"]
    assert calls == [spio_f.linear, spio_f.matmul]
    x = torch.randn(4, 16).half()
    assert torch.equal(traced(x), layer(x))


def test_linear_and_matmul_run_under_autocast_as_torchs() -> None:
    x, weight, bias = torch.randn(3, 16), torch.randn(8, 16), torch.randn(8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = spio_f.linear(x, weight, bias)
        product = spio_f.matmul(x, weight.t())
        by_operator = torch.ops.spio.addmm(bias, x, weight.t())
    want = torch.nn.functional.linear(x, weight, bias)
    for got in (y, by_operator):
        assert got.dtype == torch.bfloat16
        torch.testing.assert_close(got.float(), want, atol=0.1, rtol=0.02)
    assert product.dtype == torch.bfloat16


def test_flop_counter_counts_every_product() -> None:
    x = torch.randn(4, 16).half().requires_grad_()
    weight = torch.randn(8, 16).half().requires_grad_()
    with FlopCounterMode(display=False) as counter:
        spio_f.linear(x, weight).float().sum().backward()
    # The forward product and the two gradients', each 2 x 4 x 16 x 8, as torch counts mm.
    assert counter.get_total_flops() == 3 * 2 * 4 * 16 * 8
