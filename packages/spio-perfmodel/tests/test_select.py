"""choose_config: the shipped model where it fits the GPU and the kernels, else the heuristic.

No GPU here: the device's name comes from a stand-in for spio.jit.device_info, and the
heuristic (which compiles and loads the kernel to count its resident blocks) from a
stand-in that returns the spec's default.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

import spio.kernels.conv2d_gw8.sources_digest as digest_module
from spio.kernels.conv2d_gw8 import Conv2dGw8Params, WgradConfig, placement
from spio.perfmodel import (
    PASSES,
    ConfigChoice,
    GpuLimits,
    LatencyModel,
    _select,
    choose_config,
    shipped_model,
    tune_config,
)
from spio.perfmodel._selection_mode import SELECTION_ENV, selection_mode, set_selection_mode

LAYER = Conv2dGw8Params.make(48, 128, 28, 28)
#: The launcher's placement itself, which the gpu fixture stands in for (it compiles wgrad's).
PLACED_CONFIG_ON = placement.placed_config_on


@pytest.mark.parametrize("pass_name", sorted(PASSES))
def test_the_shipped_model_chooses_on_its_gpu(gpu: SimpleNamespace, pass_name: str) -> None:
    choice = choose_config(pass_name, LAYER)
    assert f"shipped {pass_name} model for NVIDIA H200" in choice.reason
    model = shipped_model(pass_name, "NVIDIA H200")
    assert model is not None
    if choice.source == "model":
        assert choice.config == model.best_config(LAYER)
    else:
        # Below the margin, or (wgrad: the heuristic's tile here is the eight-group TMA tile)
        # given way to a tile the model never timed as launched.
        assert (
            "faster than the heuristic's config (it needs 3%)" in choice.reason
            or "which the models undervalue" in choice.reason
        )
    assert choice.config in PASSES[pass_name].config_space(LAYER)


class _StubModel(LatencyModel):
    """A model whose pick, predictions and measurements the test sets (a LatencyModel, as
    choose_config requires, whose trees are never built)."""

    pass_name = "fprop"
    gpu = "Stub GPU"
    launch = "tile"
    limits = GpuLimits()

    def __init__(
        self,
        pick: object,
        heuristic_us: float,
        pick_us: float,
        measured: object = None,
        timed: tuple[object, ...] = (),
        pass_name: str = "fprop",
    ) -> None:
        self.pick, self.times = pick, {"heuristic": heuristic_us, "pick": pick_us}
        self.measured, self.timed = measured, timed
        self.pass_name = pass_name

    def measured_config(self, params: Conv2dGw8Params) -> object:
        return self.measured

    def was_timed(self, params: Conv2dGw8Params, config: object) -> bool:
        return config in self.timed

    def best_config_over(self, params: Conv2dGw8Params, baseline: object) -> tuple[object, float]:
        self.baseline = baseline
        if baseline == self.pick:
            return self.pick, float("inf")
        return self.pick, self.times["heuristic"] / self.times["pick"] - 1


def test_a_pick_needs_a_predicted_gain_of_3_percent(gpu: SimpleNamespace) -> None:
    heuristic = PASSES["fprop"].default_config(LAYER, 132)
    other = next(c for c in PASSES["fprop"].config_space(LAYER) if c != heuristic)
    faster = _StubModel(other, heuristic_us=10.4, pick_us=10.0)
    assert choose_config("fprop", LAYER, model=faster).config == other  # type: ignore[arg-type]
    barely = _StubModel(other, heuristic_us=10.2, pick_us=10.0)
    choice = choose_config("fprop", LAYER, model=barely)  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (heuristic, "heuristic")
    assert choice.reason == (
        "the given model (Stub GPU) predicts its pick only 2.0% faster than the heuristic's "
        "config (it needs 3%)"
    )
    same = _StubModel(heuristic, heuristic_us=10.0, pick_us=10.0)
    assert choose_config("fprop", LAYER, model=same).source == "model"  # type: ignore[arg-type]


def test_another_gpu_gets_the_heuristic(gpu: SimpleNamespace) -> None:
    gpu.name, gpu.arch = "NVIDIA A100-SXM4-80GB", "sm_80"
    choice = choose_config("wgrad", LAYER)
    assert (choice.source, choice.config) == (
        "heuristic",
        PASSES["wgrad"].default_config(LAYER, 132),
    )
    assert choice.reason == "no wgrad model ships for NVIDIA A100-SXM4-80GB"


def test_a_model_of_other_kernels_is_not_used(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(digest_module, "sources_digest", lambda _pass_name: "feedfacecafe")
    choice = choose_config("fprop", LAYER)
    assert choice.source == "heuristic"
    assert "; these are feedfacecafe" in choice.reason


def test_the_environment_turns_the_models_off(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SELECTION_ENV, "heuristic")
    assert choose_config("dgrad", LAYER).source == "heuristic"
    monkeypatch.setenv(SELECTION_ENV, "fastest")
    with pytest.raises(
        ValueError, match="SPIO_CONFIG_SELECTION must be one of model, heuristic, autotune"
    ):
        choose_config("dgrad", LAYER)


def test_set_selection_mode_wins_over_the_environment_until_given_none(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SELECTION_ENV, "fastest")  # not read while a mode is set
    set_selection_mode(" Heuristic ")
    assert selection_mode() == "heuristic"
    choice = choose_config("dgrad", LAYER)
    assert choice.source == "heuristic"
    assert choice.reason == "the selection mode is heuristic (set_selection_mode('heuristic'))"
    set_selection_mode(None)
    with pytest.raises(ValueError, match="SPIO_CONFIG_SELECTION must be one of"):
        selection_mode()
    monkeypatch.setenv(SELECTION_ENV, "heuristic")
    assert choose_config("fprop", LAYER).reason == (
        "the selection mode is heuristic (SPIO_CONFIG_SELECTION=heuristic)"
    )
    monkeypatch.delenv(SELECTION_ENV)
    assert choose_config("fprop", LAYER).source == "model"


def test_a_mode_given_to_choose_config_is_its_alone(gpu: SimpleNamespace) -> None:
    heuristic = choose_config("fprop", LAYER, mode="heuristic")
    assert heuristic.source == "heuristic"
    assert choose_config("fprop", LAYER).source == "model"  # the process's mode: unchanged
    assert choose_config("fprop", LAYER, mode="model") == choose_config("fprop", LAYER)
    with pytest.raises(ValueError, match="mode must be one of model, heuristic, autotune or None"):
        choose_config("fprop", LAYER, mode="fastest")


@pytest.mark.parametrize(
    ("mode", "error"),
    [("fastest", ValueError), ("", ValueError), (True, TypeError), (3, TypeError)],
)
def test_set_selection_mode_names_the_modes_it_allows(mode: object, error: type) -> None:
    allowed = "mode must be one of model, heuristic, autotune, or None for SPIO_CONFIG_SELECTION"
    with pytest.raises(error, match=f"{allowed}; got {mode!r}"):
        set_selection_mode(mode)  # type: ignore[arg-type]
    assert selection_mode() == "model"  # unchanged


def test_a_mode_given_to_choose_config_never_reads_the_environment(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: with SPIO_CONFIG_SELECTION=bogus, mode="heuristic" raised the variable's
    ValueError (the reason asked where the process's mode came from); with it unset, the
    reason said "(SPIO_CONFIG_SELECTION=model)"."""
    monkeypatch.setenv(SELECTION_ENV, "bogus")
    choice = choose_config("fprop", LAYER, mode="heuristic")
    assert choice.reason == "the selection mode is heuristic (choose_config(mode='heuristic'))"
    monkeypatch.delenv(SELECTION_ENV)
    assert choose_config("dgrad", LAYER, mode="heuristic").reason == (
        "the selection mode is heuristic (choose_config(mode='heuristic'))"
    )


def test_a_heuristic_choices_reason_names_where_the_mode_came_from_each_time(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: the reason was memoised with the choice, so the same layer's pass kept
    naming the first origin of the mode."""
    set_selection_mode("heuristic")
    reasons = [choose_config("fprop", LAYER).reason]
    set_selection_mode(None)
    monkeypatch.setenv(SELECTION_ENV, "heuristic")
    reasons.append(choose_config("fprop", LAYER).reason)
    reasons.append(choose_config("fprop", LAYER, mode="heuristic").reason)
    assert reasons == [
        "the selection mode is heuristic (set_selection_mode('heuristic'))",
        "the selection mode is heuristic (SPIO_CONFIG_SELECTION=heuristic)",
        "the selection mode is heuristic (choose_config(mode='heuristic'))",
    ]


def test_every_way_of_setting_the_mode_takes_it_in_any_case(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: choose_config refused mode="Heuristic", which set_selection_mode and
    SPIO_CONFIG_SELECTION take."""
    assert choose_config("fprop", LAYER, mode=" Heuristic ").source == "heuristic"
    set_selection_mode("HEURISTIC")
    assert choose_config("dgrad", LAYER).source == "heuristic"
    set_selection_mode(None)
    monkeypatch.setenv(SELECTION_ENV, "Heuristic")
    assert choose_config("wgrad", LAYER).source == "heuristic"
    with pytest.raises(TypeError, match=r"mode must be one of .* or None; got 3"):
        choose_config("fprop", LAYER, mode=3)  # type: ignore[arg-type]


@pytest.mark.parametrize(("model", "shown"), [("x.json", "'x.json'"), ({}, "dict")])
def test_a_model_that_is_no_latency_model_is_a_type_error(
    gpu: SimpleNamespace, model: object, shown: str
) -> None:
    """Regression: model="x.json" gave AttributeError "'str' object has no attribute
    'pass_name'"."""
    message = rf"model must be a LatencyModel or None \(LatencyModel.load\(path\) .* got {shown}"
    with pytest.raises(TypeError, match=message):
        choose_config("fprop", LAYER, model=model)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=message):
        tune_config("fprop", LAYER, model=model)  # type: ignore[arg-type]


def test_a_given_model_is_used_and_checked(gpu: SimpleNamespace) -> None:
    model = shipped_model("wgrad", "NVIDIA H200")
    assert model is not None
    assert choose_config("wgrad", LAYER, model=model).reason.startswith(
        "the given model (NVIDIA H200)"
    )
    with pytest.raises(ValueError, match="model is a wgrad model; pass_name is 'fprop'"):
        choose_config("fprop", LAYER, model=model)
    with pytest.raises(ValueError, match="pass must be one of"):
        choose_config("forward", LAYER)
    with pytest.raises(TypeError, match="params must be a Conv2dGw8Params, got tuple"):
        choose_config("fprop", (1, 8, 4, 4))  # type: ignore[arg-type]


def test_a_training_layer_gets_the_config_measured_fastest_on_it(gpu: SimpleNamespace) -> None:
    heuristic = PASSES["fprop"].default_config(LAYER, 132)
    space = [c for c in PASSES["fprop"].config_space(LAYER) if c != heuristic]
    timed = _StubModel(
        space[0], heuristic_us=10.0, pick_us=5.0, measured=space[1], timed=(space[1], heuristic)
    )
    choice = choose_config("fprop", LAYER, model=timed)  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (space[1], "measured")
    assert choice.reason == "the given model (Stub GPU): measured on this layer"


def test_a_measurement_without_the_heuristics_config_does_not_overrule_it(
    gpu: SimpleNamespace,
) -> None:
    # A campaign from before the heuristic's config was in the space: its fastest config
    # stands only as the model's pick would, against the heuristic's with the 3% margin.
    heuristic = PASSES["fprop"].default_config(LAYER, 132)
    space = [c for c in PASSES["fprop"].config_space(LAYER) if c != heuristic]
    close = _StubModel(
        space[0], heuristic_us=10.1, pick_us=10.0, measured=space[1], timed=(space[1],)
    )
    choice = choose_config("fprop", LAYER, model=close)  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (heuristic, "heuristic")
    assert choice.reason == (
        "the given model (Stub GPU) predicts its pick only 1.0% faster than the heuristic's "
        "config (it needs 3%); the layer's campaign never timed the heuristic's config"
    )
    faster = _StubModel(
        space[0], heuristic_us=12.0, pick_us=10.0, measured=space[1], timed=(space[1],)
    )
    choice = choose_config("fprop", LAYER, model=faster)  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (space[0], "model")
    assert choice.reason == (
        "the given model (Stub GPU); the layer's campaign never timed the heuristic's config"
    )


def test_a_measurement_of_the_heuristics_config_as_the_device_runs_it_counts(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # fprop's launcher shortens the default's walk to fill the last wave; a campaign times
    # that config, so its measurement is evidence against the heuristic as well.
    default = PASSES["fprop"].default_config(LAYER, 132)
    balanced = dataclasses.replace(default, block_p=default.block_p // 2)
    monkeypatch.setattr(_select, "_heuristics", lambda: {"fprop": lambda p, d: balanced})
    space = [c for c in PASSES["fprop"].config_space(LAYER) if c not in (default, balanced)]
    timed = _StubModel(
        space[0], heuristic_us=12.0, pick_us=10.0, measured=space[1], timed=(space[1], balanced)
    )
    choice = choose_config("fprop", LAYER, model=timed)  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (space[1], "measured")


def test_a_layer_with_bias_uses_the_measurement_without(gpu: SimpleNamespace) -> None:
    model = shipped_model("fprop", "NVIDIA H200")
    assert model is not None
    trained = next(iter(model.measured))
    with_bias = dataclasses.replace(trained, has_bias=True)
    choice = choose_config("fprop", with_bias, model=model)
    assert (choice.config, choice.source) == (model.measured[trained], "measured")


def test_a_wgrad_layer_with_bias_takes_the_choice_without_and_its_placement(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The bias gradient's sums ride on the weights' walk: the layer without its bias is the
    # one chosen for and placed (whose kernels the launch then compiles with the bias).
    asked = []
    monkeypatch.setattr(placement, "placed_config_on", lambda n, p, c, d=0: asked.append(p) or c)
    with_bias = dataclasses.replace(LAYER, has_bias=True)
    assert choose_config("wgrad", with_bias) == choose_config("wgrad", LAYER)
    assert asked
    assert all(not params.has_bias for params in asked)


def test_a_used_pick_compiles_no_heuristic_config(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The entries' heuristic compiles the default's kernel; a pick that is used needs none.
    calls: list[str] = []
    monkeypatch.setattr(_select, "_heuristics", lambda: {"fprop": lambda p, d: calls.append("x")})
    heuristic = PASSES["fprop"].default_config(LAYER, 132)
    other = next(c for c in PASSES["fprop"].config_space(LAYER) if c != heuristic)
    faster = _StubModel(other, heuristic_us=12.0, pick_us=10.0)
    assert choose_config("fprop", LAYER, model=faster).source == "model"  # type: ignore[arg-type]
    assert calls == []


def test_a_wgrad_choice_takes_its_placement_on_the_device(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The launcher's placement (segments where the waves would leave SMs idle) applies to
    whatever chose the tile; a placement that keeps the config keeps the choice as it is."""
    plain = choose_config("wgrad", LAYER)
    asked = []

    def segmented(name: str, params: Conv2dGw8Params, config: object, device: int = 0) -> object:
        if name != "wgrad":
            return config
        asked.append((params, config, device))
        return dataclasses.replace(config, walk_n=1, segments=5)  # type: ignore[type-var]

    monkeypatch.setattr(placement, "placed_config_on", segmented)
    placed = choose_config("wgrad", LAYER)
    assert asked == [(LAYER, plain.config, 0)]
    assert placed.config == dataclasses.replace(plain.config, walk_n=1, segments=5)
    assert placed.source == plain.source
    assert (
        placed.reason
        == f"{plain.reason}; on this GPU its tile walks 5 segments a strip (placed_config_on)"
    )
    assert choose_config("fprop", LAYER).config.__class__.__name__ == "FpropConfig"


def test_a_wgrad_placement_names_what_it_changed(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = choose_config("wgrad", LAYER)
    both = dataclasses.replace(plain.config, walk_n=1, segments=7, tma=True, producer=True)
    producer_only = dataclasses.replace(plain.config, tma=True, producer=True)
    padded = dataclasses.replace(plain.config, padded_slabs=True)
    lanes = dataclasses.replace(plain.config, lane_registers=True)
    discarded = dataclasses.replace(plain.config, discard_partials=True)
    for placed_config, what in (
        (both, "walks 7 segments a strip and loads its rows from producer warps"),
        (producer_only, "loads its rows from producer warps"),
        (padded, "pads its slabs of partial sums"),
        (lanes, "keeps its lanes' addresses in registers"),
        (discarded, "drops its partial sums from L2 once added up"),
    ):
        monkeypatch.setattr(
            placement, "placed_config_on", lambda n, p, c, d=0, placed=placed_config: placed
        )
        choice = choose_config("wgrad", LAYER)
        assert choice.config == placed_config
        assert choice.reason == f"{plain.reason}; on this GPU its tile {what} (placed_config_on)"


def test_the_h100s_stale_measurement_no_longer_decides(gpu: SimpleNamespace) -> None:
    # The shipped case (test_shipped: a campaign older than the heuristic's prefetch 6).
    gpu.name = "NVIDIA H100 80GB HBM3"
    layer = Conv2dGw8Params.make(128, 1024, 16, 16)
    choice = choose_config("fprop", layer)
    assert choice.source in ("model", "heuristic")
    assert choice.reason.endswith("; the layer's campaign never timed the heuristic's config")


#: A layer whose heuristic tile on a GPU with TMA takes TMA rows (wgrad_tma_tile.tma_tile).
TMA_LAYER = Conv2dGw8Params.make(32, 64, 64, 64)


def _wgrad_stub(pick: object, **fields: object) -> _StubModel:
    model = _StubModel(pick, heuristic_us=12.0, pick_us=10.0, **fields)  # type: ignore[arg-type]
    model.pass_name = "wgrad"
    return model


def _untimed_tiles(tma: bool) -> object:
    from spio.kernels.conv2d_gw8 import wgrad_heuristic

    heuristic = wgrad_heuristic.default_config(TMA_LAYER, 132)
    return next(
        c for c in PASSES["wgrad"].config_space(TMA_LAYER) if c.tma is tma and c != heuristic
    )


def test_a_wgrad_pick_without_tma_rows_does_not_replace_a_tma_heuristic(
    gpu: SimpleNamespace,
) -> None:
    from spio.kernels.conv2d_gw8 import wgrad

    tile = wgrad.default_tile_on(TMA_LAYER)
    assert tile.tma
    for model in (
        _wgrad_stub(_untimed_tiles(tma=False)),
        # The measured fastest too: its campaign timed no producer warps either.
        _wgrad_stub(
            _untimed_tiles(tma=True),
            measured=_untimed_tiles(tma=False),
            timed=(PASSES["wgrad"].default_config(TMA_LAYER, 132),),
        ),
    ):
        choice = choose_config("wgrad", TMA_LAYER, model=model)  # type: ignore[arg-type]
        assert (choice.config, choice.source) == (tile, "heuristic")
        assert choice.reason.endswith(
            "its tile has no TMA rows and the heuristic's has, which the models undervalue "
            "(they never timed producer warps)"
        )


def test_a_model_of_tiles_timed_as_launched_keeps_its_pick(gpu: SimpleNamespace) -> None:
    # Its rows saw the producer warps: nothing to make up for.
    pick = _untimed_tiles(tma=False)
    model = _wgrad_stub(pick)
    model.launch = "launcher"
    choice = choose_config("wgrad", TMA_LAYER, model=model)  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (pick, "model")


def test_a_model_of_launched_tiles_is_held_to_the_tile_the_heuristic_launches(
    gpu: SimpleNamespace,
) -> None:
    from spio.kernels.conv2d_gw8 import wgrad

    model = _wgrad_stub(_untimed_tiles(tma=True))
    choose_config("wgrad", TMA_LAYER, model=model)  # type: ignore[arg-type]
    assert model.baseline == PASSES["wgrad"].default_config(TMA_LAYER, 132)
    model.launch = "launcher"
    choose_config("wgrad", TMA_LAYER, model=model)  # type: ignore[arg-type]
    assert (
        model.baseline
        == wgrad.default_tile_on(TMA_LAYER)
        != PASSES["wgrad"].default_config(TMA_LAYER, 132)
    )


def test_a_wgrad_pick_with_tma_rows_stays(gpu: SimpleNamespace) -> None:
    pick = _untimed_tiles(tma=True)
    choice = choose_config("wgrad", TMA_LAYER, model=_wgrad_stub(pick))  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (pick, "model")


def test_without_tma_a_wgrad_pick_stays(gpu: SimpleNamespace) -> None:
    gpu.arch = "sm_80"
    pick = _untimed_tiles(tma=False)
    choice = choose_config("wgrad", TMA_LAYER, model=_wgrad_stub(pick))  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (pick, "model")


def test_a_wgrad_layer_with_short_chunks_takes_the_heuristics_short_walk(
    gpu: SimpleNamespace,
) -> None:
    from spio.kernels.conv2d_gw8 import wgrad_heuristic, wgrad_spec

    small = Conv2dGw8Params.make(1, 64, 16, 16, r=5, s=5, padding=2)
    assert wgrad_spec.has_short_chunks(small)
    short_walk = wgrad_heuristic.default_config(small, 132)
    assert short_walk.block_p < wgrad_spec.BLOCK_P_VALUES[0]
    # ... which the launcher runs as blocks of one filter row each.
    heuristic = wgrad_heuristic.split_walk_tile(small, short_walk, 132)
    assert heuristic.block_r == 1
    # A pick predicted much faster, and the shipped model: neither has timed short chunks.
    pick = next(c for c in wgrad_spec.config_space(small) if c != short_walk)
    for model in (_wgrad_stub(pick), None):
        choice = choose_config("wgrad", small, model=model)  # type: ignore[arg-type]
        assert (choice.config, choice.source) == (heuristic, "heuristic")
        assert "short row chunks, which no model has timed" in choice.reason


#: A layer whose fprop and dgrad row chunks leave the waves uneven on an H200, so that their
#: heuristic walks segments (spio-kernels' fprop_segments): 640 blocks of 16-row chunks.
SEGMENTS_LAYER = Conv2dGw8Params.make(80, 64, 64, 64)


@pytest.mark.parametrize("pass_name", ["fprop", "dgrad"])
def test_a_pick_in_row_chunks_does_not_replace_the_heuristics_segments(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, pass_name: str
) -> None:
    tile = PASSES[pass_name].default_config(SEGMENTS_LAYER, 132)
    walked = dataclasses.replace(tile, segments=264)
    heuristics = {**_select._heuristics(), pass_name: lambda params, device: walked}
    monkeypatch.setattr(_select, "_heuristics", lambda: heuristics)
    pick = next(c for c in PASSES[pass_name].config_space(SEGMENTS_LAYER) if c != tile)
    for model in (
        _StubModel(pick, heuristic_us=12.0, pick_us=10.0),
        # The measured fastest too: campaigns time row chunks only.
        _StubModel(pick, heuristic_us=12.0, pick_us=10.0, measured=pick, timed=(tile,)),
    ):
        model.pass_name = pass_name
        choice = choose_config(pass_name, SEGMENTS_LAYER, model=model)  # type: ignore[arg-type]
        assert (choice.config, choice.source) == (walked, "heuristic")
        assert choice.reason.endswith(
            "the heuristic walks 264 segments a strip here, which the models never timed"
        )


def test_a_pick_stays_where_the_heuristic_walks_row_chunks(gpu: SimpleNamespace) -> None:
    tile = PASSES["fprop"].default_config(SEGMENTS_LAYER, 132)
    pick = next(c for c in PASSES["fprop"].config_space(SEGMENTS_LAYER) if c != tile)
    model = _StubModel(pick, heuristic_us=12.0, pick_us=10.0)
    choice = choose_config("fprop", SEGMENTS_LAYER, model=model)  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (pick, "model")


@pytest.mark.parametrize("pass_name", ["fprop", "dgrad"])
def test_a_tuning_times_fprop_and_dgrad_configs_in_their_segments_too(
    monkeypatch: pytest.MonkeyPatch, pass_name: str
) -> None:
    from spio.kernels.conv2d_gw8 import fprop_segments

    asked = []

    def walks_on(name: str, params: Conv2dGw8Params, config: object, device: int) -> list[object]:
        asked.append((name, params, config, device))
        return [config, "segments"]

    monkeypatch.setattr(fprop_segments, "walks_on", walks_on)
    tile = PASSES[pass_name].default_config(SEGMENTS_LAYER, 132)
    assert _select._walks()[pass_name](SEGMENTS_LAYER, tile, 1) == [tile, "segments"]
    assert asked == [(pass_name, SEGMENTS_LAYER, tile, 1)]


def _choose_pick(
    pass_name: str, layer: Conv2dGw8Params, pick: object, **stub: object
) -> ConfigChoice:
    """choose_config with a model of pass_name picking pick, predicted 12 us for the
    heuristic's config and 10 for the pick (stub: _StubModel's measured and timed)."""
    model = _StubModel(pick, heuristic_us=12.0, pick_us=10.0, pass_name=pass_name, **stub)  # type: ignore[arg-type]
    return choose_config(pass_name, layer, model=model)  # type: ignore[arg-type]


#: A layer whose images are 48 wide: fprop's and dgrad's heuristic takes 16-column strips
#: (spio-kernels' fprop_spec.strip_columns), wgrad's on a GPU with TMA one 48-column strip
#: (wgrad_tma_tile._one_strip_tile).
STRIPS_LAYER = Conv2dGw8Params.make(128, 64, 48, 48)


@pytest.mark.parametrize("pass_name", ["fprop", "dgrad"])
def test_a_wider_pick_does_not_replace_the_heuristics_narrowed_strips(
    gpu: SimpleNamespace, pass_name: str
) -> None:
    heuristic = PASSES[pass_name].default_config(STRIPS_LAYER, 132)
    assert heuristic.block_q == 16
    space = PASSES[pass_name].config_space(STRIPS_LAYER)
    wide = next(c for c in space if c.block_q == 32)
    choice = _choose_pick(pass_name, STRIPS_LAYER, wide)
    assert (choice.config, choice.source) == (heuristic, "heuristic")
    assert choice.reason.endswith(
        "the heuristic's 16-column strips fit the image's 48 columns closer than the pick's 32"
    )
    # Measured fastest on the layer, against the heuristic's tile timed there too: kept.
    choice = _choose_pick(pass_name, STRIPS_LAYER, wide, measured=wide, timed=(heuristic,))
    assert (choice.config, choice.source) == (wide, "measured")
    # A pick of 16-column strips stays, and so does any pick where 32 columns fit the image.
    narrow = next(c for c in space if c.block_q == 16 and c != heuristic)
    choice = _choose_pick(pass_name, STRIPS_LAYER, narrow)
    assert (choice.config, choice.source) == (narrow, "model")
    wide_fits = next(c for c in PASSES[pass_name].config_space(LAYER) if c.block_q == 32)
    assert _choose_pick(pass_name, LAYER, wide_fits).config == wide_fits


def test_a_wgrad_pick_does_not_replace_the_heuristics_one_strip_tile(
    gpu: SimpleNamespace,
) -> None:
    from spio.kernels.conv2d_gw8 import wgrad

    tile = wgrad.default_tile_on(STRIPS_LAYER)
    assert (tile.block_q, tile.tma) == (48, True)
    pick = next(c for c in PASSES["wgrad"].config_space(STRIPS_LAYER) if c.tma and c.block_q == 32)
    choice = choose_config("wgrad", STRIPS_LAYER, model=_wgrad_stub(pick))  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (tile, "heuristic")
    assert choice.reason.endswith(
        "the heuristic's tile covers the image with one 48-column strip, which the models "
        "never timed"
    )
    # Without TMA the heuristic keeps 32-column strips (the rule is the TMA tiles'): the pick
    # stays.
    gpu.arch = "sm_80"
    choice = choose_config("wgrad", STRIPS_LAYER, model=_wgrad_stub(pick))  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (pick, "model")


#: A layer whose wgrad heuristic, on a GPU with TMA, walks its four-image blocks eight steps,
#: one wave of 128 blocks (wgrad_tma_tile._fewest_waves): outside the space's walks.
LONG_WALK_LAYER = Conv2dGw8Params.make(1024, 256, 14, 14)


def test_a_wgrad_pick_does_not_replace_the_heuristics_walk_into_one_wave(
    gpu: SimpleNamespace,
) -> None:
    from spio.kernels.conv2d_gw8 import wgrad

    tile = wgrad.default_tile_on(LONG_WALK_LAYER)
    assert (tile.walk_n, tile.tma) == (8, True)
    space = PASSES["wgrad"].config_space(LONG_WALK_LAYER)
    pick = next(c for c in space if c.tma and c.walk_n == 4)
    choice = choose_config("wgrad", LONG_WALK_LAYER, model=_wgrad_stub(pick))  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (tile, "heuristic")
    assert choice.reason.endswith(
        "the heuristic's tile walks 8 steps of images, which the models never timed"
    )
    # Without TMA the heuristic walks the space's steps (the rule is the TMA tiles'): the
    # pick stays.
    gpu.arch = "sm_80"
    choice = choose_config("wgrad", LONG_WALK_LAYER, model=_wgrad_stub(pick))  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (pick, "model")


#: A layer whose wgrad heuristic walks two steps of images because one step's partial sums
#: would be over a quarter of the pass's bytes (wgrad_heuristic.walks_heavy_partials).
HEAVY_WALK_LAYER = Conv2dGw8Params.make(96, 768, 8, 8)


def test_a_one_step_wgrad_pick_does_not_replace_the_heuristics_walk_over_heavy_partials(
    gpu: SimpleNamespace,
) -> None:
    from spio.kernels.conv2d_gw8 import wgrad

    tile = wgrad.default_tile_on(HEAVY_WALK_LAYER)
    assert (tile.walk_n, tile.tma) == (2, False)
    space = PASSES["wgrad"].config_space(HEAVY_WALK_LAYER)
    # The shipped H200 model's pick there: the tile, one step, one row ahead (11.10 us
    # against the walk's 9.45 on an H200).
    one_step = dataclasses.replace(tile, walk_n=1, prefetch=1)
    assert one_step in space
    choice = choose_config("wgrad", HEAVY_WALK_LAYER, model=_wgrad_stub(one_step))  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (tile, "heuristic")
    assert choice.reason.endswith(
        "the heuristic's tile walks 2 steps of images over heavy partial sums, which the "
        "models' one-step picks run slower than they predict"
    )
    # A pick that walks steps of its own stays.
    walked = next(c for c in space if c.walk_n == 2 and c != tile and not c.tma)
    choice = choose_config("wgrad", HEAVY_WALK_LAYER, model=_wgrad_stub(walked))  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (walked, "model")


def test_a_one_step_wgrad_pick_stays_where_the_partial_sums_are_light(
    gpu: SimpleNamespace,
) -> None:
    from spio.kernels.conv2d_gw8 import wgrad

    # 64x1024x16x16 walks two steps for partial sums of 14% of the bytes (_walked), under
    # the quarter that _unless_heavy_walk gives way for.
    layer = Conv2dGw8Params.make(64, 1024, 16, 16)
    tile = wgrad.default_tile_on(layer)
    assert tile.walk_n == 2
    pick = next(c for c in PASSES["wgrad"].config_space(layer) if c.walk_n == 1 and c.tma)
    choice = choose_config("wgrad", layer, model=_wgrad_stub(pick))  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (pick, "model")


#: A layer off the full line (12 groups) whose wgrad heuristic syncs four images on 48 rows
#: in chunks of 32, whole only as the launcher cuts them (two of 24).
EVEN_SYNC_LAYER = Conv2dGw8Params.make(48, 96, 48, 48)


def test_a_wgrad_pick_does_not_replace_a_tile_synced_on_chunks_cut_evenly(
    gpu: SimpleNamespace,
) -> None:
    from spio.kernels.conv2d_gw8 import wgrad

    tile = wgrad.default_tile_on(EVEN_SYNC_LAYER)
    assert (tile.block_n, tile.block_p, tile.image_sync) == (4, 32, True)
    # The shipped H200 model's pick there (18.09 us against the tile's 15.31 on an H200).
    pick = WgradConfig(32, 4, 2, 32, 2, 2, image_sync=True)
    assert pick in PASSES["wgrad"].config_space(EVEN_SYNC_LAYER)
    choice = choose_config("wgrad", EVEN_SYNC_LAYER, model=_wgrad_stub(pick))  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (tile, "heuristic")
    assert choice.reason.endswith(
        "the heuristic's tile syncs its images on 48 rows cut evenly from chunks of 32, "
        "which the models timed with a short last chunk"
    )
    # A model whose rows timed each tile as the launcher runs it saw the even cut.
    model = _wgrad_stub(pick)
    model.launch = "launcher"
    choice = choose_config("wgrad", EVEN_SYNC_LAYER, model=model)  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (pick, "model")


def test_a_wgrad_pick_stays_where_the_tile_syncs_on_whole_chunks(gpu: SimpleNamespace) -> None:
    from spio.kernels.conv2d_gw8 import wgrad

    # 512x96x24x24: one chunk of the four-image tile covers the rows.
    layer = Conv2dGw8Params.make(512, 96, 24, 24)
    tile = wgrad.default_tile_on(layer)
    assert (tile.block_n, tile.image_sync) == (4, True)
    pick = next(c for c in PASSES["wgrad"].config_space(layer) if c.block_n == 2 and not c.tma)
    choice = choose_config("wgrad", layer, model=_wgrad_stub(pick))  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (pick, "model")


#: A 1 x 1 layer off the full line (28 groups, which wgrad_pixel_groups leaves in fours) whose
#: wgrad heuristic walks its two-image tile of four groups in 16-row chunks (wgrad_pointwise).
POINTWISE_LAYER = Conv2dGw8Params.make(32, 224, 80, 80, r=1, s=1, padding=0)


def test_a_wgrad_pick_does_not_replace_the_pointwise_tile_in_short_chunks(
    gpu: SimpleNamespace,
) -> None:
    from spio.kernels.conv2d_gw8 import wgrad

    tile = wgrad.default_tile_on(POINTWISE_LAYER)
    assert (tile.block_n, tile.block_g, tile.block_p, tile.image_sync) == (2, 4, 16, True)
    # The shipped H200 model's pick on 4x672x112x112 (49.33 us against the tile's 40.55 on
    # an H200, before wgrad_pixel_groups).
    pick = WgradConfig(32, 4, 2, 8, 2, 2, 2, image_sync=True)
    assert pick in PASSES["wgrad"].config_space(POINTWISE_LAYER)
    choice = choose_config("wgrad", POINTWISE_LAYER, model=_wgrad_stub(pick))  # type: ignore[arg-type]
    assert (choice.config.block_p, choice.source) == (16, "heuristic")
    assert choice.reason.endswith(
        "the heuristic's 1 x 1 tile walks chunks of 16 rows, against which the models' picks "
        "ran up to 18% slower"
    )
    # On a layer of 8-group pixel lines the 1 x 1 tile keeps its chunks, and the pick stays.
    layer = Conv2dGw8Params.make(128, 128, 64, 64, r=1, s=1, padding=0)
    assert wgrad.default_tile_on(layer).block_p == 64
    choice = choose_config("wgrad", layer, model=_wgrad_stub(pick))  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (pick, "model")


#: A 1 x 1 layer of 84 groups, whose wgrad heuristic reads runs of 12 of them a block
#: (wgrad_pixel_groups), a width outside the config space.
PIXEL_GROUPS_LAYER = Conv2dGw8Params.make(4, 672, 112, 112, r=1, s=1, padding=0)


def test_a_wgrad_pick_does_not_replace_a_tile_of_untimed_groups(gpu: SimpleNamespace) -> None:
    from spio.kernels.conv2d_gw8 import wgrad, wgrad_spec

    tile = wgrad.default_tile_on(PIXEL_GROUPS_LAYER)
    assert (tile.block_g, tile.warp_g, tile.walk_n) == (12, 4, 2)
    assert tile.block_g not in wgrad_spec.BLOCK_G_VALUES
    pick = WgradConfig(32, 4, 2, 8, 2, 2, 2, image_sync=True)
    choice = choose_config("wgrad", PIXEL_GROUPS_LAYER, model=_wgrad_stub(pick))  # type: ignore[arg-type]
    assert (choice.config.block_g, choice.source) == (12, "heuristic")
    assert choice.reason.endswith(
        "the heuristic's tile takes 12 groups a block, which the models never timed"
    )


#: A 1 x 1 layer of 60 groups, whose fprop and dgrad tiles take runs of 20 groups a block
#: (fprop_pixel_groups), a width outside the config space.
FPROP_PIXEL_GROUPS_LAYER = Conv2dGw8Params.make(256, 480, 28, 28, r=1, s=1, padding=0)


@pytest.mark.parametrize("pass_name", ["fprop", "dgrad"])
def test_an_fprop_pick_does_not_replace_a_tile_of_untimed_groups(
    gpu: SimpleNamespace, pass_name: str
) -> None:
    from spio.kernels.conv2d_gw8 import fprop_spec

    heuristic = PASSES[pass_name].default_config(FPROP_PIXEL_GROUPS_LAYER, 132)
    assert heuristic.block_g == 20
    assert heuristic.block_g not in fprop_spec.BLOCK_G_VALUES
    pick = next(
        c
        for c in PASSES[pass_name].config_space(FPROP_PIXEL_GROUPS_LAYER)
        if c.block_g == 4 and c.block_q == 32
    )
    choice = _choose_pick(pass_name, FPROP_PIXEL_GROUPS_LAYER, pick)
    assert (choice.config.block_g, choice.source) == (20, "heuristic")
    assert choice.reason.endswith(
        "the heuristic's tile takes 20 groups a block, which the models never timed"
    )
    # Where the heuristic keeps a width of the space, the pick stays.
    layer = Conv2dGw8Params.make(256, 512, 28, 28, r=1, s=1, padding=0)
    assert PASSES[pass_name].default_config(layer, 132).block_g == 8
    pick = next(c for c in PASSES[pass_name].config_space(layer) if c.block_g == 4)
    assert _choose_pick(pass_name, layer, pick).config == pick


def test_an_fprop_pick_runs_its_rows_in_even_chunks(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A model scores tiles; the launcher walks a 16-row tile's 56 rows in chunks of 14
    # (fprop's placement compiles nothing).
    monkeypatch.setattr(placement, "placed_config_on", PLACED_CONFIG_ON)
    layer = Conv2dGw8Params.make(64, 64, 56, 56)
    heuristic = PASSES["fprop"].default_config(layer, 132)
    pick = next(
        c for c in PASSES["fprop"].config_space(layer) if c.block_p == 16 and c != heuristic
    )
    choice = choose_config("fprop", layer, model=_StubModel(pick, 12.0, 10.0))  # type: ignore[arg-type]
    assert choice.config == dataclasses.replace(pick, block_p=14)
    assert choice.source == "model"
    assert choice.reason.endswith(
        "; on this GPU its tile cuts the image's rows into even chunks of 14 (placed_config_on)"
    )


#: 96 x 128 x 32 x 32, 3 x 3, whose dgrad pick on the H200 (2026-11-30) was 768 blocks of
#: four warps that the model put at 14 an SM, one wave, and that held 5 an SM at 96 registers.
WAVES_LAYER = Conv2dGw8Params.make(96, 128, 32, 32)
WAVES_PICK = dataclasses.replace(
    PASSES["dgrad"].default_config(WAVES_LAYER, 132), block_g=4, warp_q16=1, prefetch=1
)


def _stub_choice(pass_name: str, layer: Conv2dGw8Params, pick: object) -> ConfigChoice:
    """choose_config's choice with a model of pass_name that predicts pick 4.2% faster than
    the heuristic's config (as the H200 dgrad model did at WAVES_LAYER)."""
    model = _StubModel(pick, heuristic_us=14.84, pick_us=14.24, pass_name=pass_name)
    return choose_config(pass_name, layer, model=model)  # type: ignore[arg-type]


@pytest.mark.parametrize("pass_name", ["fprop", "dgrad"])
def test_a_pick_whose_compiled_grid_takes_uneven_waves_the_model_never_counted_gives_way(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, pass_name: str
) -> None:
    from spio.kernels.conv2d_gw8 import fprop_segments

    heuristic = PASSES[pass_name].default_config(WAVES_LAYER, 132)
    assert WAVES_PICK in PASSES[pass_name].config_space(WAVES_LAYER)
    asked = []

    def slots_on(name: str, params: Conv2dGw8Params, config: object, device: int = 0) -> int:
        asked.append((name, params, config))
        return 5 * 132

    monkeypatch.setattr(fprop_segments, "slots_on", slots_on)
    choice = _stub_choice(pass_name, WAVES_LAYER, WAVES_PICK)
    assert (choice.config, choice.source) == (heuristic, "heuristic")
    assert choice.reason.endswith(
        "its 768 blocks take 2 waves of the 660 its compiled kernel fits at once, filling 58% "
        "of them, where the model's features count one"
    )
    assert asked == [(pass_name, WAVES_LAYER, WAVES_PICK)]
    # Where the second wave is nearly full (768 blocks in 2 x 400 slots: 96%), the pick stays.
    monkeypatch.setattr(fprop_segments, "slots_on", lambda *_: 400)
    choice = _stub_choice(pass_name, WAVES_LAYER, WAVES_PICK)
    assert (choice.config, choice.source) == (WAVES_PICK, "model")


def test_a_pick_the_model_counted_in_several_waves_or_measured_keeps_its_waves(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    from spio.kernels.conv2d_gw8 import fprop_segments

    def slots_on(*_: object) -> int:
        raise AssertionError("no pick here needs compiling")

    monkeypatch.setattr(fprop_segments, "slots_on", slots_on)
    # On a GPU of 8 SMs the model's features already count the pick's grid in several
    # waves: it learned their cost from its campaigns' multi-wave rows.
    model = _StubModel(WAVES_PICK, heuristic_us=14.84, pick_us=14.24)
    model.limits = GpuLimits(sm_count=8)
    choice = choose_config("fprop", WAVES_LAYER, model=model)  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (WAVES_PICK, "model")
    # Measured fastest on the layer, waves and all.
    heuristic = PASSES["fprop"].default_config(WAVES_LAYER, 132)
    model = _StubModel(WAVES_PICK, 14.84, 14.24, measured=WAVES_PICK, timed=(heuristic,))
    choice = choose_config("fprop", WAVES_LAYER, model=model)  # type: ignore[arg-type]
    assert (choice.config, choice.source) == (WAVES_PICK, "measured")


def test_a_pick_on_a_filter_wider_than_3x3_or_in_8_column_strips_keeps_its_uneven_waves(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The heuristic's tiles are the weaker there: 64x512x16x16 5 x 5 dgrad's pick ran 1.21x
    # faster than it in 1.55 waves, 192x512x7x7 fprop's 8-column strips 1.09x (H200).
    from spio.kernels.conv2d_gw8 import fprop_segments

    monkeypatch.setattr(fprop_segments, "slots_on", lambda *_: 5 * 132)
    layer = Conv2dGw8Params.make(96, 128, 32, 32, r=5, s=5, padding=2)
    assert WAVES_PICK in PASSES["dgrad"].config_space(layer)
    choice = _stub_choice("dgrad", layer, WAVES_PICK)
    assert (choice.config, choice.source) == (WAVES_PICK, "model")
    # The same pick on the 3 x 3 layer gives way.
    assert _stub_choice("dgrad", WAVES_LAYER, WAVES_PICK).source == "heuristic"
    narrow_layer = Conv2dGw8Params.make(192, 512, 7, 7)
    # 768 blocks in 660 slots, which the model counted in 0.65 waves.
    narrow = dataclasses.replace(
        PASSES["fprop"].default_config(narrow_layer, 132), prefetch=2, mma_k=8
    )
    assert narrow.block_q == 8
    assert narrow in PASSES["fprop"].config_space(narrow_layer)
    choice = _stub_choice("fprop", narrow_layer, narrow)
    assert (choice.config, choice.source) == (narrow, "model")


#: A 1 x 1 layer of 8-group multiples whose images are 80 wide: the launcher walks its
#: 16-column strips 4 rows six rows ahead (spio-kernels' fprop_pointwise.pointwise_walk).
POINTWISE_WALK_LAYER = Conv2dGw8Params.make(64, 256, 80, 80, r=1, s=1, padding=0)


@pytest.mark.parametrize("pass_name", ["fprop", "dgrad"])
def test_a_pick_does_not_replace_a_short_1x1_walk(
    gpu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, pass_name: str
) -> None:
    from spio.kernels.conv2d_gw8 import FpropConfig

    walk = FpropConfig(16, 8, 2, 1, 4, 6, 8)
    long_walk = dataclasses.replace(walk, block_p=32)
    heuristics = dict(_select._heuristics())
    monkeypatch.setattr(_select, "_heuristics", lambda: heuristics)
    heuristics[pass_name] = lambda params, device: walk
    pick = next(c for c in PASSES[pass_name].config_space(POINTWISE_WALK_LAYER) if c.block_q == 16)
    assert pick != walk
    choice = _choose_pick(pass_name, POINTWISE_WALK_LAYER, pick)
    assert (choice.config, choice.source) == (walk, "heuristic")
    assert choice.reason.endswith(
        "the heuristic's 1 x 1 tile walks 4 rows 6 rows ahead, against which the models' "
        "picks ran up to 1.7x slower"
    )
    # Measured fastest on the layer: kept; so is a pick where the heuristic walks long.
    choice = _choose_pick(pass_name, POINTWISE_WALK_LAYER, pick, measured=pick, timed=(walk,))
    assert (choice.config, choice.source) == (pick, "measured")
    heuristics[pass_name] = lambda params, device: long_walk
    assert _choose_pick(pass_name, POINTWISE_WALK_LAYER, pick).config == pick
