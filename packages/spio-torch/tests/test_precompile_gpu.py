"""spio.torch.precompile on CUDA: after it, a training step at the precompiled shapes
compiles nothing (the results and gradients themselves are test_conv2d_gw8_gpu.py's)."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

import spio.jit
import spio.torch

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]


def test_a_precompiled_training_step_compiles_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    torch.manual_seed(0)
    # Sizes no other test takes, so that no kernel of theirs is loaded already.
    reference = nn.Sequential(
        nn.Conv2d(32, 32, 3, padding=1, groups=4),
        nn.ReLU(),
        nn.Conv2d(32, 32, 5, padding=2, groups=4, bias=False),
        nn.Flatten(),
        nn.Linear(32 * 13 * 11, 16),
    ).cuda()
    model = copy.deepcopy(reference).half()
    assert len(spio.torch.convert(model)) == 2
    model[4] = spio.torch.Linear.from_linear(model[4])
    batches = [torch.randn(n, 32, 13, 11, device="cuda", dtype=torch.float16) for n in (3, 2)]

    result = spio.torch.precompile(model, *batches, threads=4)

    # Two layers at two batch sizes: fprop and wgrad_bias of the first (its input needs no
    # gradient), fprop, dgrad and wgrad of the second; the linear layer's product and its two
    # gradients' at each.
    assert result.layers == 4
    assert [p.pass_name for p in result.passes[:5]] == [
        "fprop", "wgrad_bias", "fprop", "dgrad", "wgrad",
    ]  # fmt: skip
    assert result.products == 6

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a kernel was compiled after precompile")

    monkeypatch.setattr(spio.jit, "compile", refuse)
    for x in batches:
        model.zero_grad()
        output = model(x)
        torch.testing.assert_close(output.float(), reference(x.float()), rtol=1e-2, atol=1e-2)
        output.float().square().sum().backward()
        for name, parameter in model.named_parameters():
            assert parameter.grad is not None, name
            assert torch.isfinite(parameter.grad).all(), name
