"""choose_config: the shipped model where it fits the GPU and the kernels, else the heuristic.

No GPU here: the device's name comes from a stand-in for spio.jit.device_info, and the
heuristic (which compiles and loads the kernel to count its resident blocks) from a
stand-in that returns the spec's default.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest

import spio.jit
import spio.kernels.conv2d_gw8.sources_digest as digest_module
from spio.kernels.conv2d_gw8 import Conv2dGw8Params
from spio.perfmodel import PASSES, _select, choose_config, shipped_model

LAYER = Conv2dGw8Params.make(48, 128, 28, 28)


@pytest.fixture
def gpu(monkeypatch: pytest.MonkeyPatch) -> Iterator[SimpleNamespace]:
    device = SimpleNamespace(name="NVIDIA H200", sm_count=132)
    monkeypatch.setattr(spio.jit, "device_info", lambda index: device)
    heuristics = {name: (lambda p, d, name=name: PASSES[name].default_config(p, 132))
                  for name in PASSES}  # fmt: skip
    monkeypatch.setattr(_select, "_heuristics", lambda: heuristics)
    monkeypatch.delenv(_select.SELECTION_ENV, raising=False)
    _select._choose_shipped.cache_clear()
    yield device
    _select._choose_shipped.cache_clear()


@pytest.mark.parametrize("pass_name", sorted(PASSES))
def test_the_shipped_model_chooses_on_its_gpu(gpu: SimpleNamespace, pass_name: str) -> None:
    choice = choose_config(pass_name, LAYER)
    assert choice.source == "model"
    assert f"shipped {pass_name} model for NVIDIA H200" in choice.reason
    model = shipped_model(pass_name, "NVIDIA H200")
    assert model is not None
    assert choice.config == model.best_config(LAYER)
    assert choice.config in PASSES[pass_name].config_space(LAYER)


def test_another_gpu_gets_the_heuristic(gpu: SimpleNamespace) -> None:
    gpu.name = "NVIDIA A100-SXM4-80GB"
    choice = choose_config("wgrad", LAYER)
    assert (choice.source, choice.config) == (
        "heuristic",
        PASSES["wgrad"].default_config(LAYER, 132),
    )
    assert choice.reason == "no wgrad model ships for NVIDIA A100-SXM4-80GB"


def test_a_model_of_other_kernels_is_not_used(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(digest_module, "sources_digest", lambda: "feedfacecafe")
    choice = choose_config("fprop", LAYER)
    assert choice.source == "heuristic"
    assert "; these are feedfacecafe" in choice.reason


def test_the_environment_turns_the_models_off(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(_select.SELECTION_ENV, "heuristic")
    assert choose_config("dgrad", LAYER).source == "heuristic"
    monkeypatch.setenv(_select.SELECTION_ENV, "fastest")
    with pytest.raises(ValueError, match="SPIO_CONFIG_SELECTION must be one of model, heuristic"):
        choose_config("dgrad", LAYER)


def test_a_given_model_is_used_and_checked(gpu: SimpleNamespace) -> None:
    model = shipped_model("wgrad", "NVIDIA H200")
    assert model is not None
    assert choose_config("wgrad", LAYER, model=model).reason == "the given model (NVIDIA H200)"
    with pytest.raises(ValueError, match="model is a wgrad model; pass_name is 'fprop'"):
        choose_config("fprop", LAYER, model=model)
    with pytest.raises(ValueError, match="pass must be one of"):
        choose_config("forward", LAYER)
    with pytest.raises(TypeError, match="params must be a Conv2dGw8Params, got tuple"):
        choose_config("fprop", (1, 8, 4, 4))  # type: ignore[arg-type]
