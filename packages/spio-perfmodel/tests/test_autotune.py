"""Autotuning: the model's shortlist, timed (here by a stand-in for the GPU's timer), and the
fastest of it chosen; the whole-space ranking it shortlists from.

No GPU here: as in test_select, the device and the heuristic are stand-ins; the timing runs
on the GPU tier (test_autotune_gpu.py).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import spio.kernels.conv2d_gw8.sources_digest as digest_module
from spio.kernels.conv2d_gw8 import Conv2dGw8Params, placement
from spio.perfmodel import PASSES, _select, choose_config, shipped_model, tune_config
from spio.perfmodel._autotune import AUTOTUNE_CANDIDATES, PROXY_CANDIDATES, candidates
from spio.perfmodel._selection_mode import SELECTION_ENV
from spio.perfmodel._tunings import tunings_dir

LAYER = Conv2dGw8Params.make(48, 128, 28, 28)


def _timer(device: SimpleNamespace, fastest: Any) -> Any:
    """A stand-in for time_configs: `fastest` takes 5 us, every other config 10 us; the
    configs asked for are kept in device.timed."""

    def time_configs(
        pass_name: str, params: Conv2dGw8Params, configs: Sequence[Any], index: int = 0
    ) -> list[float]:
        device.timed.append(list(configs))
        return [5.0 if config == fastest else 10.0 for config in configs]

    return time_configs


def _autotuning(gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, fastest: Any) -> None:
    """choose_config in autotune mode, with a stand-in timer that times `fastest` fastest."""
    monkeypatch.setattr(_select, "time_configs", _timer(gpu, fastest))
    monkeypatch.setenv(SELECTION_ENV, "autotune")


@pytest.mark.parametrize("pass_name", sorted(PASSES))
def test_top_configs_rank_the_whole_space_as_best_config_does(pass_name: str) -> None:
    model = shipped_model(pass_name, "NVIDIA H200")
    assert model is not None
    top = model.top_configs(LAYER, 8)
    assert len(top) == len(set(top)) == 8
    assert top[0] == model.best_config(LAYER)
    predicted = model.predict_us(LAYER, top)
    assert np.all(np.diff(predicted) >= 0), predicted
    space = PASSES[pass_name].config_space(LAYER)
    assert set(top) <= set(space)
    # Nothing outside the eight is predicted faster than the eighth.
    others = [config for config in space if config not in top]
    assert min(model.predict_us(LAYER, others)) >= predicted[-1]


def test_top_configs_checks_its_count() -> None:
    model = shipped_model("fprop", "NVIDIA H200")
    assert model is not None
    for count in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="count must be an int >= 1"):
            model.top_configs(LAYER, count)  # type: ignore[arg-type]


def test_the_shortlist_is_the_measured_the_top_and_the_heuristic_without_repeats() -> None:
    model = shipped_model("wgrad", "NVIDIA H200")
    assert model is not None
    trained = next(iter(model.measured))
    heuristic = PASSES["wgrad"].default_config(trained, 132)
    shortlist = candidates(model, trained, heuristic, 3)
    assert shortlist[0] == model.measured[trained]
    assert heuristic in shortlist
    assert len(shortlist) == len(set(shortlist))
    assert set(model.top_configs(trained, 3)) <= set(shortlist)
    # A layer the model never timed: its top picks and the heuristic's.
    fresh = candidates(model, LAYER, PASSES["wgrad"].default_config(LAYER, 132))
    assert model.measured_config(LAYER) is None
    assert fresh[:AUTOTUNE_CANDIDATES] == model.top_configs(LAYER, AUTOTUNE_CANDIDATES)
    with pytest.raises(ValueError, match="count must be an int >= 1, got 0"):
        candidates(model, LAYER, heuristic, 0)


def test_a_layer_with_bias_shortlists_the_measurement_without() -> None:
    model = shipped_model("fprop", "NVIDIA H200")
    assert model is not None
    trained = next(iter(model.measured))
    with_bias = dataclasses.replace(trained, has_bias=True)
    heuristic = PASSES["fprop"].default_config(with_bias, 132)
    assert candidates(model, with_bias, heuristic)[0] == model.measured[trained]


@pytest.mark.parametrize("pass_name", sorted(PASSES))
def test_tuning_runs_the_fastest_timed_config(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, pass_name: str
) -> None:
    model = shipped_model(pass_name, "NVIDIA H200")
    assert model is not None
    third = model.top_configs(LAYER, 3)[2]
    monkeypatch.setattr(_select, "time_configs", _timer(gpu, third))
    choice = tune_config(pass_name, LAYER)
    assert (choice.config, choice.source) == (third, "autotune")
    assert gpu.timed == [candidates(model, LAYER, _select.heuristic_config(pass_name, LAYER))]
    assert choice.reason.startswith(f"fastest of {len(gpu.timed[0])} configs from the shipped")
    assert choice.reason.endswith("timed on the device: 5.00 us (the heuristic's 10.00 us)")


def test_a_wgrad_tuning_times_each_tiles_walks_and_keeps_the_fastest_as_timed(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = shipped_model("wgrad", "NVIDIA H200")
    assert model is not None

    def two_walks(params: Conv2dGw8Params, config: Any, device: int) -> list[Any]:
        return [config, dataclasses.replace(config, walk_n=1, segments=5)]

    def always_placed(name: str, params: Conv2dGw8Params, config: Any, device: int = 0) -> Any:
        return dataclasses.replace(config, walk_n=1, segments=7)

    monkeypatch.setattr(_select, "_walks", lambda: {"wgrad": two_walks})
    monkeypatch.setattr(placement, "placed_config_on", always_placed)
    tiles = candidates(model, LAYER, _select.heuristic_config("wgrad", LAYER))
    fastest = two_walks(LAYER, tiles[1], 0)[1]
    _autotuning(gpu, monkeypatch, fastest)
    choice = choose_config("wgrad", LAYER)
    # Every tile and its other walk, in that order, timed together once.
    assert gpu.timed == [[walk for tile in tiles for walk in two_walks(LAYER, tile, 0)]]
    # The walk timed fastest runs as it is: the launcher's placement rule does not override
    # a measurement.
    assert (choice.config, choice.source) == (fastest, "autotune")


def test_the_environment_tunes_once_per_layer_and_pass(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    heuristic = PASSES["dgrad"].default_config(LAYER, 132)
    _autotuning(gpu, monkeypatch, heuristic)
    first = choose_config("dgrad", LAYER)
    assert (first.config, first.source) == (heuristic, "autotune")
    assert choose_config("dgrad", LAYER) == first
    assert len(gpu.timed) == 1
    monkeypatch.setenv(SELECTION_ENV, "model")
    assert choose_config("dgrad", LAYER).source != "autotune"


def test_a_gpu_without_a_model_tunes_with_the_nearest_gpus_model(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    gpu.name, gpu.sm_count = "NVIDIA GeForce RTX 4090", 128
    monkeypatch.setattr(_select, "time_configs", _timer(gpu, None))
    choice = tune_config("fprop", LAYER)
    assert choice.source == "autotune"
    # Both shipped GPUs have 132 SMs: the first by name stands in.
    proxy = shipped_model("fprop", "NVIDIA H100 80GB HBM3")
    assert proxy is not None
    assert (
        "no fprop model ships for NVIDIA GeForce RTX 4090; the shipped fprop model for "
        "NVIDIA H100 80GB HBM3" in choice.reason
    )
    heuristic = PASSES["fprop"].default_config(LAYER, 132)
    assert gpu.timed == [candidates(proxy, LAYER, heuristic, PROXY_CANDIDATES)]
    assert len(gpu.timed[0]) >= PROXY_CANDIDATES


def test_kernels_no_model_timed_get_the_heuristic_untimed(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(digest_module, "sources_digest", lambda _pass_name: "feedfacecafe")
    monkeypatch.setattr(_select, "time_configs", _timer(gpu, None))
    choice = tune_config("wgrad", LAYER)
    assert choice.source == "heuristic"
    assert choice.reason.endswith("these are feedfacecafe: no shortlist to time")
    assert gpu.timed == []


def test_a_given_model_is_checked(gpu: SimpleNamespace) -> None:
    model = shipped_model("wgrad", "NVIDIA H200")
    assert model is not None
    with pytest.raises(ValueError, match="model is a wgrad model; pass_name is 'fprop'"):
        tune_config("fprop", LAYER, model=model)
    with pytest.raises(TypeError, match="params must be a Conv2dGw8Params, got tuple"):
        tune_config("fprop", (1, 8, 4, 4))  # type: ignore[arg-type]
    gpu.name = "NVIDIA GeForce RTX 4090"  # a proxy's shortlist is longer, but 0 is still 0
    for count in (0, 2.5, True):
        with pytest.raises(ValueError, match="count must be an int >= 1"):
            tune_config("fprop", LAYER, count=count)  # type: ignore[arg-type]


def _out_of_memory(*args: object) -> list[float]:
    raise MemoryError("timing fprop configs needs 99 bytes of memory on device 0: out of memory")


def test_no_memory_for_the_timing_runs_the_models_choice_untimed(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_select, "time_configs", _out_of_memory)
    choice = tune_config("fprop", LAYER)
    monkeypatch.delenv(SELECTION_ENV, raising=False)
    untimed = choose_config("fprop", LAYER)
    assert (choice.config, choice.source) == (untimed.config, untimed.source)
    assert choice.reason == f"{untimed.reason}; not timed: timing fprop configs needs 99 " + (
        "bytes of memory on device 0: out of memory"
    )


def test_no_memory_with_another_gpus_model_runs_the_heuristic(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    gpu.name = "NVIDIA GeForce RTX 4090"
    monkeypatch.setattr(_select, "time_configs", _out_of_memory)
    choice = tune_config("fprop", LAYER)
    assert (choice.config, choice.source) == (
        PASSES["fprop"].default_config(LAYER, 132),
        "heuristic",
    )
    assert choice.reason.endswith(
        "; not timed: timing fprop configs needs 99 bytes of memory on device 0: out of memory"
    )


def _tune_in_a_new_process(pass_name: str) -> Any:
    """choose_config in autotune mode as a new process would call it (nothing memoised)."""
    _select._choose_shipped.cache_clear()
    return choose_config(pass_name, LAYER)


def test_a_tuning_is_kept_for_the_next_process(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = shipped_model("wgrad", "NVIDIA H200")
    assert model is not None
    second = model.top_configs(LAYER, 2)[1]
    _autotuning(gpu, monkeypatch, second)
    first = _tune_in_a_new_process("wgrad")
    assert (first.config, first.source, len(gpu.timed)) == (second, "autotune", 1)
    files = list(tunings_dir().rglob("*.json"))  # type: ignore[union-attr]
    assert len(files) == 1
    again = _tune_in_a_new_process("wgrad")
    assert (again.config, again.source, len(gpu.timed)) == (second, "autotune", 1)
    assert again.reason == f"kept from an earlier tuning on NVIDIA H200 ({files[0]})"
    # Another layer, pass or kernels version is another entry.
    monkeypatch.setattr(digest_module, "sources_digest", lambda _pass_name: "feedfacecafe")
    _tune_in_a_new_process("wgrad")
    assert len(gpu.timed) == 1  # no model for these kernels: the heuristic, untimed


def test_a_damaged_tuning_is_timed_again(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    heuristic = PASSES["fprop"].default_config(LAYER, 132)
    _autotuning(gpu, monkeypatch, heuristic)
    _tune_in_a_new_process("fprop")
    [path] = list(tunings_dir().rglob("*.json"))  # type: ignore[union-attr]
    record = json.loads(path.read_text())
    for damage in ("{not json", json.dumps({**record, "config": {"block_q": -1}}), ""):
        path.write_text(damage)
        choice = _tune_in_a_new_process("fprop")
        assert (choice.config, choice.source) == (heuristic, "autotune")
        assert json.loads(path.read_text()) == record  # timed again and rewritten
    assert len(gpu.timed) == 4


def test_nothing_is_kept_with_the_cache_turned_off(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPIO_JIT_DISABLE_CACHE", "1")
    _autotuning(gpu, monkeypatch, None)
    _tune_in_a_new_process("dgrad")
    _tune_in_a_new_process("dgrad")
    assert len(gpu.timed) == 2
    assert tunings_dir() is None


def test_the_command_line_tunes_a_layer(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from spio.perfmodel._cli import main

    heuristic = _select.heuristic_config("wgrad", LAYER)
    monkeypatch.setattr(_select, "time_configs", _timer(gpu, heuristic))
    main(["tune", "48x128x28x28", "--pass", "wgrad", "--candidates", "2"])
    out = capsys.readouterr().out
    assert out.startswith(f"{heuristic} (autotune: fastest of ")
    assert len(gpu.timed) == 1
    assert set(shipped_model("wgrad", "NVIDIA H200").top_configs(LAYER, 2)) <= set(gpu.timed[0])  # type: ignore[union-attr]


def test_the_command_line_lists_and_forgets_kept_tunings(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from spio.perfmodel._cli import main

    _autotuning(gpu, monkeypatch, None)
    _tune_in_a_new_process("fprop")
    _tune_in_a_new_process("wgrad")
    main(["tunings"])
    assert capsys.readouterr().out == f"2 tunings kept in {tunings_dir()}\n"
    main(["tunings", "--forget"])
    assert capsys.readouterr().out == f"forgot 2 tunings in {tunings_dir()}\n"
    main(["tunings"])
    assert capsys.readouterr().out.startswith("0 tunings kept in ")
    _tune_in_a_new_process("fprop")
    assert len(gpu.timed) == 3  # forgotten: timed again
    monkeypatch.setenv("SPIO_JIT_DISABLE_CACHE", "1")
    main(["tunings"])
    assert "no tunings are kept" in capsys.readouterr().out


class CUDAError(Exception):
    """Named as cuda.core's error class, which lives in a private module of cuda.core."""


@pytest.mark.parametrize(
    ("error", "raised"),
    [
        (CUDAError("CUDA_ERROR_OUT_OF_MEMORY: out of memory"), MemoryError),
        (CUDAError("CUDA_ERROR_INVALID_VALUE: invalid argument"), CUDAError),
        (TypeError("allocate() got an unexpected keyword argument 'stream'"), TypeError),
    ],
)
def test_only_the_devices_lack_of_memory_lets_a_tuning_run_untimed(
    monkeypatch: pytest.MonkeyPatch, error: Exception, raised: type[Exception]
) -> None:
    """Regression (N9): any error while allocating the timing's buffers became a MemoryError,
    after which the tuning quietly ran its choice untimed; only the device's lack of room
    should."""
    import cuda.core

    from spio.kernels.conv2d_gw8 import FpropConfig
    from spio.perfmodel import _autotune

    class Device:
        def __init__(self, index: int) -> None:
            pass

        def set_current(self) -> None:
            pass

        def create_stream(self) -> SimpleNamespace:
            return SimpleNamespace(sync=lambda: None, close=lambda: None)

        def allocate(self, size: int, stream: object) -> None:
            raise error

    monkeypatch.setattr(cuda.core, "Device", Device)
    with pytest.raises(raised) as caught:
        _autotune._time_on("fprop", LAYER, [FpropConfig()], 0)
    if raised is MemoryError:
        assert "bytes of memory on device 0: CUDA_ERROR_OUT_OF_MEMORY" in str(caught.value)
    else:
        assert caught.value is error
