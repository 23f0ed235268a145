"""spio.torch.Linear: nn.Linear on Spio's matmul (CPU path): results and gradients, shared
parameters, checkpoints both ways, autocast, and the features it refuses."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from spio.torch import Linear


def test_matches_nn_linear_and_shares_its_parameters() -> None:
    torch.manual_seed(0)
    layer = nn.Linear(32, 16).to(torch.bfloat16)
    spio_layer = Linear.from_linear(layer)
    assert spio_layer.weight is layer.weight
    assert spio_layer.bias is layer.bias
    x = torch.randn(5, 7, 32, dtype=torch.bfloat16, requires_grad=True)
    y = spio_layer(x)
    expected = nn.functional.linear(x.float(), layer.weight.float(), layer.bias.float())
    torch.testing.assert_close(y.float(), expected, atol=0.05, rtol=0.02)
    y.float().sum().backward()
    assert layer.weight.grad is not None  # the shared Parameter took the gradient
    assert x.grad is not None
    assert x.grad.shape == x.shape


def test_checkpoints_load_both_ways() -> None:
    layer = nn.Linear(24, 8, dtype=torch.float16)
    spio_layer = Linear(24, 8, dtype=torch.float16)
    spio_layer.load_state_dict(layer.state_dict())
    assert torch.equal(spio_layer.weight, layer.weight)
    layer.load_state_dict(Linear(24, 8, dtype=torch.float16).state_dict())


def test_autocast_casts_the_input_and_the_parameters() -> None:
    layer = Linear(16, 8)  # float32 parameters, as a mixed-precision model keeps them
    x = torch.randn(4, 16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = layer(x)
    assert y.dtype == torch.bfloat16
    expected = nn.functional.linear(x, layer.weight, layer.bias)
    torch.testing.assert_close(y.float(), expected, atol=0.05, rtol=0.02)
    with pytest.raises(TypeError, match="input must be float16 or bfloat16"):
        layer(x)  # without autocast: out of the kernels' scope


@pytest.mark.parametrize(
    ("features", "match"),
    [
        ((12, 8), "in_features must be a multiple of 8, got 12"),
        ((8, 0), "out_features must be a positive multiple of 8, got 0"),
        ((8, True), "out_features must be a positive multiple of 8, got True"),
    ],
)
def test_refuses_features_the_kernels_cannot_take(features: tuple[int, int], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Linear(*features)
    with pytest.raises(ValueError, match=r"this nn\.Linear cannot become a spio Linear"):
        Linear.from_linear(nn.Linear(12, 8))


def test_from_linear_takes_only_an_nn_linear() -> None:
    with pytest.raises(ValueError, match=r"from_linear takes an nn\.Linear, got a Linear"):
        Linear.from_linear(Linear(8, 8))


def test_a_layer_on_the_meta_device_runs_its_forward_for_shapes() -> None:
    # torch.is_autocast_enabled("meta") raised in the forward pass.
    layer = Linear(16, 8, device="meta", dtype=torch.float16)
    assert layer(torch.empty(3, 16, device="meta", dtype=torch.float16)).shape == (3, 8)


def test_fx_symbolic_trace_records_the_layer_as_one_call() -> None:
    import spio.functional as spio_f

    model = nn.Sequential(Linear(16, 8, dtype=torch.float16))
    traced = torch.fx.symbolic_trace(model)
    calls = [node.target for node in traced.graph.nodes if node.op == "call_function"]
    assert calls == [spio_f.linear]
    x = torch.randn(3, 16, dtype=torch.float16)
    assert torch.equal(traced(x), model(x))
