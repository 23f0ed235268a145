"""spio.torch.precompile: recording a model's layers on fake tensors, and preparing their
passes in threads (here with LayerPlan.launch replaced: loading kernels needs a GPU; the GPU
tier runs it whole, test_precompile_gpu.py)."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import torch
from torch import nn

import spio.jit
import spio.torch
from spio.kernels.matmul import MatmulParams
from spio.perfmodel import set_selection_mode
from spio.torch import _cuda_passes, _precompile, convert, set_wgrad_deterministic
from spio.torch._precompile_calls import LayerCall, ProductCall, Recorded, record_calls


def _model() -> nn.Module:
    """A stem-less block: a 3 x 3 conv with a bias (its input needs no gradient), batch norm,
    and a 5 x 5 conv without one; converted, fp16."""
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(64, 64, 3, padding=1, groups=8),
        nn.BatchNorm2d(64),
        nn.ReLU(),
        nn.Conv2d(64, 64, 5, padding=2, groups=8, bias=False),
    )
    convert(model)
    return model.half()


def _batch(n: int) -> torch.Tensor:
    return torch.empty(n, 64, 12, 10, dtype=torch.float16)


def _call(**fields: Any) -> LayerCall:
    """A recorded call of the first layer of _model on cuda:0 with fields replaced."""
    base = LayerCall(
        input_size=(4, 64, 12, 10),
        kernel_size=(3, 3),
        padding=(1, 1, 1, 1),
        dtype=torch.float16,
        has_bias=True,
        device=torch.device("cuda", 0),
        input_grad=True,
        weight_grad=True,
        bias_grad=True,
        weight_channels_last=True,
    )
    return dataclasses.replace(base, **fields)


def test_each_layer_is_recorded_once_with_the_gradients_it_will_need() -> None:
    model = _model()
    model[3].weight.requires_grad_(False)  # a frozen layer: no weight gradient
    calls = record_calls(model, [(_batch(4),), (_batch(4),), (_batch(2),)], backward=True).layers
    first = _call(device=torch.device("cpu"), input_grad=False)
    second = dataclasses.replace(
        first,
        kernel_size=(5, 5),
        padding=(2, 2, 2, 2),
        has_bias=False,
        input_grad=True,
        weight_grad=False,
        bias_grad=False,
    )
    smaller = [dataclasses.replace(call, input_size=(2, 64, 12, 10)) for call in (first, second)]
    assert calls == [first, second, *smaller]


def test_recording_leaves_the_model_as_it_was() -> None:
    model = _model()
    state = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    pointers = {name: tensor.data_ptr() for name, tensor in model.state_dict().items()}
    record_calls(model, [(_batch(4),)], backward=True)
    # Batch norm in training mode would add to its count of batches and running statistics.
    after = model.state_dict()
    for name, tensor in state.items():
        assert torch.equal(after[name], tensor), name
        assert after[name].data_ptr() == pointers[name], name
    assert all(parameter.grad is None for parameter in model.parameters())


def test_without_the_backward_the_forward_runs_without_gradients() -> None:
    calls = record_calls(_model(), [(_batch(4),)], backward=False).layers
    assert [call.input_grad for call in calls] == [False, False]
    assert all(call.passes(backward=False) == [("fprop", False, False)] for call in calls)


@pytest.fixture
def nondeterministic_wgrad() -> Iterator[None]:
    set_wgrad_deterministic(False)
    yield
    set_wgrad_deterministic(True)


_FPROP = ("fprop", False, False)
_DGRAD = ("dgrad", False, False)


@pytest.mark.parametrize(
    ("fields", "passes"),
    [
        ({}, [_FPROP, _DGRAD, ("wgrad_bias", False, True)]),
        ({"bias_grad": False}, [_FPROP, _DGRAD, ("wgrad", False, True)]),
        ({"input_grad": False, "weight_grad": False}, [_FPROP]),
        (
            {"input_grad": False, "weight_channels_last": False},
            [_FPROP, ("wgrad_bias", False, False)],
        ),
    ],
)
def test_the_passes_are_those_the_backward_launches(
    fields: dict[str, Any], passes: list[tuple[str, bool, bool]]
) -> None:
    assert _call(**fields).passes(backward=True) == passes


def test_atomic_weight_gradients_are_prepared_where_the_backward_takes_them(
    nondeterministic_wgrad: None,
) -> None:
    assert _call().passes(backward=True)[-1] == ("wgrad_bias", True, True)
    assert _call(weight_channels_last=False).passes(backward=True)[-1] == (
        "wgrad_bias",
        True,
        False,
    )


class _Launches:
    """LayerPlan.launch, LayerPlan.config, product_launch and default_config_on stand-ins:
    record each kernel prepared (a pass's plan params, name, atomic_sums and rounded; a
    product's params and "mm"), with its thread, taking `seconds`; raise `error` for the
    pass `failing`."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.failing = ""
        self.error: Exception | None = None
        self.prepared: list[tuple[Any, ...]] = []
        self.threads: set[str] = set()
        self.lock = threading.Lock()

    def launch(
        self, plan: Any, pass_name: str, atomic_sums: bool = False, rounded: bool = False
    ) -> None:
        self._prepare((plan.params, pass_name, atomic_sums, rounded))

    def product(self, params: MatmulParams, device: int) -> None:
        self._prepare((params, "mm"))

    def _prepare(self, kernel: tuple[Any, ...]) -> None:
        time.sleep(self.seconds)
        if kernel[1] == self.failing and self.error is not None:
            raise self.error
        with self.lock:
            self.prepared.append(kernel)
            self.threads.add(threading.current_thread().name)


def _on_cuda(recorded: Recorded) -> Recorded:
    cuda = torch.device("cuda", 0)
    return Recorded(
        [dataclasses.replace(call, device=cuda) for call in recorded.layers],
        [dataclasses.replace(call, device=cuda) for call in recorded.products],
    )


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> _Launches:
    """Recorded calls on cuda:0 (a CUDA model's, on this machine without a GPU) and the
    launch stand-ins."""
    recorded = _precompile.record_calls
    stand_in = _Launches()
    monkeypatch.setattr(_precompile, "record_calls", lambda *args: _on_cuda(recorded(*args)))
    # A function, so that the plan the launch is asked of comes in as its first argument.
    monkeypatch.setattr(_cuda_passes.LayerPlan, "launch", lambda *args: stand_in.launch(*args))
    monkeypatch.setattr(_cuda_passes.LayerPlan, "config", lambda plan, name: f"config of {name}")
    monkeypatch.setattr(_precompile, "product_launch", stand_in.product)
    monkeypatch.setattr(_precompile, "default_config_on", lambda params, device: "mm config")
    return stand_in


def _params(call: LayerCall) -> Any:
    return _cuda_passes.layer_params(
        call.input_size, call.kernel_size, call.padding, call.dtype, call.has_bias
    )


def test_every_pass_of_every_layer_is_prepared_side_by_side(launches: _Launches) -> None:
    launches.seconds = 0.05
    model = _model()
    result = spio.torch.precompile(model, _batch(4), (_batch(2),), threads=3)
    layers = [call for n in (4, 2) for call in record_calls(model, [(_batch(n),)], True).layers]
    expected = [
        (_params(call), *launch)
        for call in layers
        for launch in dataclasses.replace(call, device=torch.device("cuda", 0)).passes(True)
    ]
    assert sorted(launches.prepared, key=repr) == sorted(expected, key=repr)
    assert len(launches.threads) > 1
    assert all(name.startswith("spio-precompile") for name in launches.threads)
    assert [(p.params, p.pass_name) for p in result.passes] == [e[:2] for e in expected]
    assert result.passes[1].config == "config of wgrad"  # wgrad_bias runs wgrad's config
    assert result.layers == 4
    assert result.threads == 3
    assert result.products == 0
    assert str(result).startswith(
        "precompile: 10 kernels' passes (4 convolution layers, 0 matrix products) ready in "
    )


def test_inference_prepares_the_forward_passes_only(launches: _Launches) -> None:
    result = spio.torch.precompile(_model(), _batch(4), backward=False)
    assert [p.pass_name for p in result.passes] == ["fprop", "fprop"]


def test_autotuning_prepares_one_pass_at_a_time(launches: _Launches) -> None:
    set_selection_mode("autotune")
    try:
        result = spio.torch.precompile(_model(), _batch(4), threads=8)
    finally:
        set_selection_mode(None)
    assert result.threads == 1
    assert len(launches.threads) == 1


def test_a_pass_that_fails_is_named_and_the_rest_not_started(launches: _Launches) -> None:
    launches.seconds = 0.05
    launches.failing = "dgrad"
    launches.error = ValueError("no kernel")
    with pytest.raises(ValueError, match="no kernel") as caught:
        spio.torch.precompile(_model(), _batch(4), _batch(2), threads=1)
    assert caught.value.__notes__ == [
        "(while spio.torch.precompile prepared dgrad of "
        "Conv2dGw8Params(n=4, c=64, h=12, w=10, r=5, s=5, padding=(2, 2, 2, 2), "
        "dtype='float16', has_bias=False) on cuda:0)"
    ]
    # One thread, 50 ms a pass, the wgrad passes first (their launchers' chains of compiles
    # are the longest): the second layer's dgrad failed, the pass queued next may have
    # started before the rest were cancelled; the batch of 2's other passes never did.
    prepared = [(kernel[0].n, kernel[1]) for kernel in launches.prepared]
    assert prepared[:6] == [
        (4, "wgrad_bias"), (4, "wgrad"), (2, "wgrad_bias"), (2, "wgrad"), (4, "fprop"), (4, "fprop")
    ]  # fmt: skip
    assert prepared[6:] in ([], [(2, "fprop")])


def test_the_compiles_run_in_as_many_worker_processes(
    launches: _Launches, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = []
    real = spio.jit.compile_in_workers

    @contextlib.contextmanager
    def recorded(workers: int | None = None) -> Iterator[None]:
        blocks.append(workers)
        with real(workers):
            yield

    monkeypatch.setattr(spio.jit, "compile_in_workers", recorded)
    result = spio.torch.precompile(_model(), _batch(4), threads=3)
    assert blocks == [3]
    assert result.threads == 3


def test_a_model_on_the_cpu_has_nothing_to_prepare() -> None:
    result = spio.torch.precompile(_model(), _batch(4))
    assert result.passes == ()
    assert str(result) == "precompile: no Spio operator ran on a CUDA device"


class _ReadsValues(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum().item() > 0:
            return x
        return -x


def test_a_forward_pass_that_reads_values_is_told_why() -> None:
    with pytest.raises(RuntimeError, match="fake tensors, which have shapes but no values"):
        spio.torch.precompile(_ReadsValues(), _batch(1))


def _product(m: int, n: int, k: int, b_layout: str, a_layout: str, bias: bool) -> MatmulParams:
    return MatmulParams(m, n, k, "float16", b_layout, a_layout, bias)  # type: ignore[arg-type]


def test_a_linear_layer_records_its_product_and_prepares_its_gradients() -> None:
    # x @ w.t() + bias: x 12 x 32 (rows x in), w 24 x 32 (out x in). Its gradients:
    # grad_x = grad @ w (w read as it is, K x N) and grad_w = x.t() @ grad.
    model = nn.Sequential(spio.torch.Linear(32, 24, dtype=torch.float16))
    x = torch.empty(12, 32, dtype=torch.float16, requires_grad=True)
    (call,) = record_calls(model, [(x,)], backward=True).products
    assert call == ProductCall(
        a_shape=(12, 32),
        a_stride=(32, 1),
        b_shape=(32, 24),
        b_stride=(1, 32),
        dtype=torch.float16,
        has_bias=True,
        device=torch.device("cpu"),
        a_grad=True,
        b_grad=True,
    )
    assert call.products(backward=True) == [
        _product(12, 24, 32, "nk", "mk", True),
        _product(12, 32, 24, "kn", "mk", False),
        _product(32, 24, 12, "kn", "km", False),
    ]
    assert call.products(backward=False) == [_product(12, 24, 32, "nk", "mk", True)]
    frozen = dataclasses.replace(call, a_grad=False, b_grad=False)
    assert frozen.products(backward=True) == [_product(12, 24, 32, "nk", "mk", True)]


def test_products_of_an_empty_batch_run_no_kernel() -> None:
    call = ProductCall((0, 32), (32, 1), (32, 24), (1, 32), torch.float16, False,
                       torch.device("cpu"), True, True)  # fmt: skip
    # Each has a size of 0 (grad_w's sums run over 0 rows): the products make their zeros
    # without a kernel.
    assert call.products(backward=True) == []


def test_products_are_prepared_beside_the_layers(launches: _Launches) -> None:
    model = nn.Sequential(*_model(), nn.Flatten(), spio.torch.Linear(64 * 12 * 10, 16))
    model.half()
    result = spio.torch.precompile(model, _batch(4), threads=2)
    mm = [kernel for kernel in launches.prepared if kernel[1] == "mm"]
    assert len(mm) == 3
    assert result.products == 3
    assert [p.config for p in result.passes if p.pass_name == "mm"] == ["mm config"] * 3


@pytest.mark.parametrize(
    ("model", "inputs", "options", "error", "message"),
    [
        (lambda x: x, (_batch(1),), {}, TypeError, "model must be an nn.Module, got function"),
        (nn.ReLU(), (), {}, ValueError, "at least one example input"),
        (nn.ReLU(), ([1, 2],), {}, TypeError, r"inputs\[0\] must be a tensor or a tuple"),
        (nn.ReLU(), (_batch(1),), {"backward": 1}, TypeError, "backward must be True or False"),
        (nn.ReLU(), (_batch(1),), {"progress": "yes"}, TypeError, "progress must be True or False"),
        (nn.ReLU(), (_batch(1),), {"threads": 0}, ValueError, "threads must be a positive int"),
        (nn.ReLU(), (_batch(1),), {"threads": True}, TypeError, "threads must be a positive int"),
    ],
)
def test_arguments_out_of_range_are_refused(
    model: Any, inputs: tuple[Any, ...], options: dict[str, Any], error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        spio.torch.precompile(model, *inputs, **options)


def test_precompile_is_public_and_lazy() -> None:
    assert {"precompile", "Precompiled", "PrecompiledPass"} <= set(spio.torch.__all__)
    assert spio.torch.precompile is _precompile.precompile


def test_under_autocast_the_layers_are_recorded_in_its_dtype() -> None:
    # An fp32 model trained under autocast runs its convolutions in the region's dtype.
    model = _model().float()
    x = torch.empty(4, 64, 12, 10)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        calls = record_calls(model, [(x,)], backward=True).layers
    assert [call.dtype for call in calls] == [torch.bfloat16, torch.bfloat16]
