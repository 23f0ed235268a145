"""Conv2dGw8 and convert: nn.Conv2d's grouped 8-channel case run by Spio (CPU path)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import spio.functional as spio_f
from spio.torch import Conv2dGw8, convert, ineligible_because


def test_module_is_an_nn_conv2d_and_runs_the_operator() -> None:
    module = Conv2dGw8(16, 3, padding=1, dtype=torch.float16)
    assert isinstance(module, nn.Conv2d)
    assert module.groups == 2
    x = torch.randn(2, 16, 6, 5).half()
    expected = spio_f.conv2d_gw8(x, module.weight, module.bias, padding=1)
    torch.testing.assert_close(module(x), expected, atol=0, rtol=0)
    assert set(module.state_dict()) == {"weight", "bias"}


def test_convert_swaps_eligible_convs_and_shares_their_parameters() -> None:
    model = nn.Sequential(
        nn.Conv2d(16, 16, 3, padding=1, groups=2),  # converted
        nn.ReLU(),
        nn.Sequential(nn.Conv2d(16, 16, 5, padding="same", groups=2, bias=False)),  # converted
        nn.Conv2d(16, 32, 1),  # out != in
        nn.Conv2d(32, 32, 3, stride=2, groups=4),  # stride
    ).half()
    weight = model[0].weight
    x = torch.randn(1, 16, 8, 8).half()
    expected = model(x)
    names = convert(model)
    assert names == ["0", "2.0"]
    assert isinstance(model[0], Conv2dGw8)
    assert isinstance(model[2][0], Conv2dGw8)
    assert type(model[3]) is nn.Conv2d
    assert type(model[4]) is nn.Conv2d
    assert model[0].weight is weight  # an optimizer built before still holds it
    assert weight.is_contiguous(memory_format=torch.channels_last)  # laid out for Spio
    assert model[2][0].bias is None
    torch.testing.assert_close(model(x), expected, atol=1e-2, rtol=1e-2)


def test_the_weight_is_kept_in_channels_last_memory() -> None:
    # C x 8 x R x S in channels_last memory is C x R x S x 8: what the kernels read in place.
    module = Conv2dGw8(16, 3, padding=1)
    assert module.weight.is_contiguous(memory_format=torch.channels_last)
    assert not module.weight.is_contiguous()
    plain = nn.Conv2d(16, 16, 3, padding=1, groups=2)
    module.load_state_dict(plain.state_dict())
    assert module.weight.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(module.weight, plain.weight)
    module.half()
    assert module.weight.dtype == torch.float16
    assert module.weight.is_contiguous(memory_format=torch.channels_last)
    optimizer = torch.optim.AdamW(module.parameters())
    x = torch.randn(2, 16, 6, 6).half()
    module(x).float().sum().backward()
    optimizer.step()
    assert module.weight.is_contiguous(memory_format=torch.channels_last)


def test_checkpoints_load_either_way() -> None:
    plain = nn.Conv2d(16, 16, 3, padding=1, groups=2)
    spio = Conv2dGw8(16, 3, padding=1)
    spio.load_state_dict(plain.state_dict())
    assert torch.equal(spio.weight, plain.weight)
    other = nn.Conv2d(16, 16, 3, padding=1, groups=2)
    other.load_state_dict(spio.state_dict())
    assert torch.equal(other.weight, plain.weight)


def test_autocast_casts_input_and_weight() -> None:
    module = Conv2dGw8(16, 3, padding=1)  # fp32 parameters, as under mixed precision
    x = torch.randn(1, 16, 5, 5)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = module(x)
    assert y.dtype == torch.bfloat16
    expected = nn.functional.conv2d(x, module.weight, module.bias, padding=1, groups=2)
    torch.testing.assert_close(y.float(), expected, atol=0.1, rtol=0.05)


@pytest.mark.parametrize(
    ("conv", "reason"),
    [
        (nn.Conv2d(16, 16, 3, groups=4), "groups = 4 for 16 channels"),
        (nn.Conv2d(16, 16, 3, dilation=2, groups=2), "dilation (2, 2)"),
        (nn.Conv2d(16, 16, 3, padding=1, groups=2, padding_mode="reflect"), "padding_mode"),
        (nn.Conv2d(16, 16, 9, groups=2), "kernel 9 x 9"),
        (nn.Conv2d(16, 16, 3, padding=3, groups=2), "padding (3, 3) for a 3 x 3 kernel"),
        (nn.Linear(4, 4), "a Linear, not an nn.Conv2d"),
    ],
)
def test_ineligible_convs_say_why(conv: nn.Module, reason: str) -> None:
    found = ineligible_because(conv)
    assert found is not None
    assert reason in found
    if isinstance(conv, nn.Conv2d) and type(conv) is nn.Conv2d:
        with pytest.raises(ValueError, match="cannot become a Conv2dGw8"):
            Conv2dGw8.from_conv2d(conv)


def test_constructor_checks() -> None:
    with pytest.raises(ValueError, match="multiple of 8, got 12"):
        Conv2dGw8(12, 3)
    with pytest.raises(ValueError, match="kernel 8 x 8"):
        Conv2dGw8(16, 8)
