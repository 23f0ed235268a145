"""LatencyModel: training, choosing configs for unseen layers, saving and loading."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from synthetic import GPU, LAYERS, synthetic_rows, synthetic_us

from spio.kernels.conv2d_gw8.params import Conv2dGw8Params
from spio.perfmodel import (
    PASSES,
    ConfigTime,
    GpuLimits,
    LatencyModel,
    TrainingOptions,
    evaluate,
    evaluate_held_out,
)
from spio.perfmodel._evaluate import seeds_report
from spio.perfmodel._model import config_fingerprint
from spio.perfmodel._passes import heuristic_tile

FAST = TrainingOptions(rounds=150, threads=2)


def _sorted(layers: list[Conv2dGw8Params]) -> list[Conv2dGw8Params]:
    """layers in the order an evaluation reports them: sorted, whatever order their rows had."""
    return sorted(layers, key=dataclasses.astuple)


@pytest.mark.parametrize("pass_name", ["fprop", "wgrad"])
def test_picks_for_unseen_layers_are_near_the_best(pass_name: str) -> None:
    rows = synthetic_rows(pass_name, LAYERS, per_layer=120)
    evaluation = evaluate(rows, folds=5, options=FAST)
    assert len(evaluation.layers) == len(LAYERS)
    assert evaluation.median_regret < 0.03, evaluation.report()
    assert evaluation.p95_regret < 0.15, evaluation.report()


def test_held_out_layers_are_scored_by_a_model_that_never_saw_them() -> None:
    training = synthetic_rows("fprop", LAYERS[:8], per_layer=120)
    held_out = synthetic_rows("fprop", LAYERS[8:], per_layer=120, seed=1)
    evaluation = evaluate_held_out(training, held_out, options=FAST)
    assert [result.params for result in evaluation.layers] == _sorted(LAYERS[8:])
    assert evaluation.median_regret < 0.05, evaluation.report()
    # A held-out layer's rows among the training rows are left out of training: the
    # model, and so every pick, is the one trained without them.
    leaked = evaluate_held_out(training + held_out, held_out, options=FAST)
    assert [r.picked for r in leaked.layers] == [r.picked for r in evaluation.layers]
    assert leaked.regrets() == evaluation.regrets()


def test_held_out_rows_are_checked() -> None:
    rows = synthetic_rows("fprop", LAYERS[:4], per_layer=20)
    with pytest.raises(ValueError, match="held_out has no rows"):
        evaluate_held_out(rows, [], options=FAST)
    with pytest.raises(ValueError, match=r"one pass, got \['dgrad', 'fprop'\]"):
        evaluate_held_out(rows, synthetic_rows("dgrad", LAYERS[4:5], per_layer=20), options=FAST)
    with pytest.raises(ValueError, match="no rows are left to train on"):
        evaluate_held_out(rows, rows, options=FAST)
    other_gpu = [dataclasses.replace(row, gpu="Other GPU") for row in rows[:20]]
    with pytest.raises(ValueError, match="held_out has no rows of GPU Synthetic GPU"):
        evaluate_held_out(rows[20:], other_gpu, options=FAST)
    with pytest.raises(ValueError, match="shortlist must be an int >= 1, got 0"):
        evaluate_held_out(rows[20:], rows[:20], options=FAST, shortlist=0)


def test_the_report_sets_the_default_beside_the_model() -> None:
    rows = synthetic_rows("wgrad", LAYERS[:4], per_layer=40)
    for layer in LAYERS[:4]:
        default = PASSES["wgrad"].default_config(layer, 132)
        rows.append(ConfigTime(GPU, "wgrad", layer, default, synthetic_us("wgrad", layer, default)))
    evaluation = evaluate(rows, folds=2, options=FAST)
    assert len(evaluation.default_regrets()) == 4
    assert all(regret >= 0 for regret in evaluation.default_regrets())
    assert "(4 of 4 layers timed it)" in evaluation.report()
    # choose_config's rule runs the pick or the default: its regret is one of theirs.
    for layer in evaluation.layers:
        assert layer.chosen_regret in (layer.regret, layer.default_regret)
    assert "chosen regret (choose_config's rule): median" in evaluation.report()
    mean = evaluation.mean_regret("chosen")
    assert mean == pytest.approx(np.mean([layer.chosen_regret for layer in evaluation.layers]))
    assert f"mean {100 * mean:.1f}%" in evaluation.report()


def test_the_seed_moves_the_trees_and_the_report_gives_the_range() -> None:
    rows = synthetic_rows("fprop", LAYERS[:6], per_layer=60)
    seeds = (0, 1, 2)
    evaluations = [
        evaluate(rows, folds=3, options=dataclasses.replace(FAST, seed=seed)) for seed in seeds
    ]
    # Row and column subsampling follow the seed: the same rows, other predictions.
    configs = [row.config for row in rows if row.params == LAYERS[0]]
    first, second = (
        LatencyModel.train(rows, options=dataclasses.replace(FAST, seed=seed)).predict_us(
            LAYERS[0], configs
        )
        for seed in (0, 1)
    )
    assert not np.allclose(first, second)
    for evaluation in evaluations:
        slowdown = evaluation.slowdown("chosen")
        expected = np.exp(np.mean(np.log1p(evaluation.regrets("chosen"))))
        assert slowdown == pytest.approx(expected)
        assert slowdown >= 1.0
    report = seeds_report(evaluations, seeds)
    lines = report.splitlines()
    assert lines[0] == "fprop: the same folds, trained with seeds [0, 1, 2]"
    assert [line.split(":")[0] for line in lines[1:4]] == ["seed 0", "seed 1", "seed 2"]
    low = min(e.slowdown("chosen") for e in evaluations)
    high = max(e.slowdown("chosen") for e in evaluations)
    assert f"chosen slowdown {low:.4f}-{high:.4f}x" in lines[4]
    medians = [100 * e.median_regret for e in evaluations]
    assert f"model median {min(medians):.1f}-{max(medians):.1f}%" in lines[4]
    with pytest.raises(ValueError, match="one evaluation per seed: 3 for seeds \\[0, 1\\]"):
        seeds_report(evaluations, seeds[:2])


def test_the_tuned_regret_is_the_fastest_of_the_shortlist_and_the_default() -> None:
    rows = synthetic_rows("wgrad", LAYERS[:4], per_layer=40)
    for layer in LAYERS[:4]:
        default = PASSES["wgrad"].default_config(layer, 132)
        rows.append(ConfigTime(GPU, "wgrad", layer, default, synthetic_us("wgrad", layer, default)))
    one = evaluate(rows, folds=2, options=FAST, shortlist=1)
    three = evaluate(rows, folds=2, options=FAST, shortlist=3)
    every = evaluate(rows, folds=2, options=FAST, shortlist=41)
    for a, b, c in zip(one.layers, three.layers, every.layers, strict=True):
        # The shortlist of one is the pick, and the default beside it.
        assert a.tuned_regret == min(a.regret, a.default_regret or 0.0)
        assert 0.0 == c.tuned_regret <= b.tuned_regret <= a.tuned_regret
    assert "tuned regret (the fastest of the model's 3 best and the default)" in three.report()
    with pytest.raises(ValueError, match="shortlist must be an int >= 1, got 0"):
        evaluate(rows, folds=2, options=FAST, shortlist=0)


def test_the_regret_check_fails_a_model_that_learned_nothing() -> None:
    # The thresholds above can fail: the same rows with their times shuffled among them
    # teach a model nothing about configs, and its picks fall far from the best.
    rows = synthetic_rows("fprop", LAYERS, per_layer=120)
    times = [row.median_us for row in rows]
    random.Random(1).shuffle(times)
    shuffled = [
        ConfigTime(row.gpu, row.pass_name, row.params, row.config, us)
        for row, us in zip(rows, times, strict=True)
    ]
    evaluation = evaluate(shuffled, folds=5, options=FAST)
    assert evaluation.p95_regret > 0.15, evaluation.report()


def test_predictions_are_microseconds_on_the_layers_trained_on() -> None:
    # The trees learn times relative to each layer's floor; predict_us scales them back.
    rows = synthetic_rows("fprop", LAYERS[:6], per_layer=80)
    model = LatencyModel.train(rows, options=FAST)
    for layer in LAYERS[:6]:
        layer_rows = [row for row in rows if row.params == layer]
        measured = np.array([row.median_us for row in layer_rows])
        predicted = model.predict_us(layer, [row.config for row in layer_rows])
        assert np.median(np.abs(predicted / measured - 1)) < 0.1, layer


def test_save_and_load_give_the_same_predictions(tmp_path: Path) -> None:
    rows = synthetic_rows("wgrad", LAYERS[:4], per_layer=80)
    rows = [dataclasses.replace(row, kernel="0123456789ab") for row in rows]
    model = LatencyModel.train(rows, GpuLimits(sm_count=114), FAST)
    assert model.kernel == "0123456789ab"
    path = model.save(tmp_path / "wgrad.json")
    loaded = LatencyModel.load(path)
    assert (loaded.pass_name, loaded.gpu, loaded.limits) == ("wgrad", GPU, GpuLimits(sm_count=114))
    assert loaded.kernel == "0123456789ab"
    assert loaded.measured == model.measured
    assert loaded.timed == model.timed
    layer = LAYERS[5]
    configs = PASSES["wgrad"].config_space(layer)[:50]
    np.testing.assert_allclose(loaded.predict_us(layer, configs), model.predict_us(layer, configs))
    assert loaded.best_config(layer) == model.best_config(layer)


def test_the_order_of_the_rows_does_not_change_the_model(tmp_path: Path) -> None:
    """Files listed in another order (a folder moved, a shell's glob) train the same model,
    byte for byte: XGBoost's row samples would otherwise follow the order."""
    rows = synthetic_rows("fprop", LAYERS[:4], per_layer=40)
    shuffled = list(rows)
    random.Random(3).shuffle(shuffled)
    first = LatencyModel.train(rows, options=FAST).save(tmp_path / "first.ubj")
    second = LatencyModel.train(shuffled, options=FAST).save(tmp_path / "second.ubj")
    assert first.read_bytes() == second.read_bytes()


def test_a_model_keeps_the_fastest_config_measured_on_each_training_layer() -> None:
    rows = synthetic_rows("fprop", LAYERS[:3], per_layer=30)
    model = LatencyModel.train(rows, options=FAST)
    for layer in LAYERS[:3]:
        times = {row.config: row.median_us for row in rows if row.params == layer}
        # (The law times some tiles alike; the model keeps one of the fastest.)
        assert times[model.measured_config(layer)] == min(times.values())
    assert model.measured_config(LAYERS[5]) is None


def test_a_model_knows_which_configs_were_timed_on_each_training_layer() -> None:
    rows = synthetic_rows("wgrad", LAYERS[:2], per_layer=30)
    model = LatencyModel.train(rows, options=FAST)
    layer = LAYERS[0]
    timed = {row.config for row in rows if row.params == layer}
    untimed = [c for c in PASSES["wgrad"].config_space(layer) if c not in timed]
    assert timed
    assert untimed
    assert all(model.was_timed(layer, config) for config in timed)
    assert not any(model.was_timed(layer, config) for config in untimed)
    assert len(model.timed[layer]) == len(timed)  # no two timed tiles share a fingerprint
    # A tile as a launcher places it is still that tile.
    placed = dataclasses.replace(next(iter(timed)), padded_slabs=True)
    assert model.was_timed(layer, placed)
    assert not model.was_timed(LAYERS[5], next(iter(timed)))


def test_a_fingerprint_names_a_tile() -> None:
    space = PASSES["fprop"].config_space(LAYERS[0])
    fingerprints = {config_fingerprint(config) for config in space}
    assert len(fingerprints) == len(space)
    assert all(len(f) == 8 and int(f, 16) >= 0 for f in fingerprints)
    # Stable across processes and versions of Python: a CRC of the fields' text.
    assert config_fingerprint(space[0]) == config_fingerprint(dataclasses.replace(space[0]))


def test_training_takes_one_pass_and_names_its_gpu() -> None:
    rows = synthetic_rows("fprop", LAYERS[:2], per_layer=10)
    other = [ConfigTime("Other GPU", r.pass_name, r.params, r.config, r.median_us) for r in rows]
    with pytest.raises(ValueError, match=r"rows have GPUs \['Other GPU', 'Synthetic GPU'\]: name"):
        LatencyModel.train(rows + other)
    with pytest.raises(ValueError, match="no rows of the GPU 'Third GPU'"):
        LatencyModel.train(rows + other, gpu="Third GPU")
    wgrad = synthetic_rows("wgrad", LAYERS[:1], per_layer=5)
    with pytest.raises(ValueError, match=r"one pass; rows have passes \['fprop', 'wgrad'\]"):
        LatencyModel.train(rows + wgrad)
    with pytest.raises(ValueError, match="no rows"):
        LatencyModel.train([])
    newer = [dataclasses.replace(row, kernel="0123456789ab") for row in rows]
    with pytest.raises(ValueError, match=r"2 versions of the kernels \['\(unknown\)', '0123"):
        LatencyModel.train(rows + newer)


def test_a_model_keeps_how_its_rows_were_launched(tmp_path: Path) -> None:
    rows = synthetic_rows("fprop", LAYERS[:2], per_layer=20)
    assert LatencyModel.train(rows, options=FAST).launch == "tile"
    launched = [dataclasses.replace(row, launch="launcher") for row in rows]
    model = LatencyModel.train(launched, options=FAST)
    assert model.launch == "launcher"
    assert LatencyModel.load(model.save(tmp_path / "fprop.ubj")).launch == "launcher"


#: What the synthetic launcher gives a wgrad tile with TMA rows (its producer warps).
PRODUCER_GAIN = 0.7


def _launched(rows: list[ConfigTime]) -> list[ConfigTime]:
    """rows as the synthetic launcher runs their tiles: TMA tiles PRODUCER_GAIN faster."""
    return [
        dataclasses.replace(
            row,
            launch="launcher",
            median_us=row.median_us * (PRODUCER_GAIN if row.config.tma else 1),
        )
        for row in rows
    ]


def _tma_twins(params: Conv2dGw8Params) -> list[tuple[Any, Any]]:
    """Pairs of wgrad tiles of params's space, one with TMA rows and the same one without."""
    space = set(PASSES["wgrad"].config_space(params))
    return [
        (config, dataclasses.replace(config, tma=False))
        for config in sorted(space, key=str)
        if config.tma and dataclasses.replace(config, tma=False) in space
    ]


def test_rows_of_both_launches_teach_a_model_what_the_launcher_adds(tmp_path: Path) -> None:
    tiles = synthetic_rows("wgrad", LAYERS, per_layer=80)
    # Launched rows of some layers only: the rest of what the model knows comes from tiles.
    launched = _launched([row for row in tiles if row.params in LAYERS[:7]])
    tile_model = LatencyModel.train(tiles, options=FAST)
    model = LatencyModel.train(tiles + launched, options=FAST)
    assert (tile_model.launch, tile_model.flags) == ("tile", ())
    assert (model.launch, model.flags) == ("launcher", ("launched",))

    # On a layer it has timed neither way, it predicts TMA tiles as launched: faster than
    # their twins without TMA by about what the launcher adds; the tile model, the same.
    unseen = Conv2dGw8Params.make(48, 128, 40, 40)
    twins = _tma_twins(unseen)
    assert len(twins) >= 10
    with_tma, without = (list(side) for side in zip(*twins, strict=True))
    ratio = model.predict_us(unseen, with_tma) / model.predict_us(unseen, without)
    tile_ratio = tile_model.predict_us(unseen, with_tma) / tile_model.predict_us(unseen, without)
    assert np.median(ratio) < 0.8, ratio
    assert np.median(tile_ratio) > 0.95, tile_ratio

    # What it measured is what ran as launched, and as a tile on a layer timed only so.
    fastest = min((row for row in launched if row.params == LAYERS[0]), key=lambda r: r.median_us)
    assert model.measured_config(LAYERS[0]) == fastest.config
    assert model.measured_config(LAYERS[9]) == tile_model.measured_config(LAYERS[9])

    loaded = LatencyModel.load(model.save(tmp_path / "wgrad.ubj"))
    assert (loaded.launch, loaded.flags) == ("launcher", ("launched",))
    np.testing.assert_array_equal(
        loaded.predict_us(unseen, with_tma), model.predict_us(unseen, with_tma)
    )
    assert loaded.best_config(unseen) == model.best_config(unseen)


def test_a_launched_sample_that_misses_the_tiles_fastest_config_keeps_it_as_measured() -> None:
    # A campaign narrowed by `collect --where` times a few of a layer's configs as launched;
    # its tile campaigns timed more. Each config counts at its launched time where it has
    # one, so the tiles' fastest, left out of the sample, stays the measurement, and a
    # config timed both ways counts as launched.
    layer = LAYERS[0]
    others = [row for row in synthetic_rows("wgrad", LAYERS, per_layer=80) if row.params != layer]
    # The layer's configs at distinct times (the synthetic law ties some), fastest first.
    on_layer = [
        dataclasses.replace(row, median_us=10.0 + rank)
        for rank, row in enumerate(synthetic_rows("wgrad", [layer], per_layer=80))
    ]
    tiles = others + on_layer
    fastest_tile, second = on_layer[0], on_layer[1]
    launched = [dataclasses.replace(row, launch="launcher") for row in on_layer[1:20]]
    model = LatencyModel.train(tiles + launched, options=FAST)
    assert model.measured_config(layer) == fastest_tile.config
    assert model.was_timed(layer, fastest_tile.config)

    slower = dataclasses.replace(launched[0], median_us=fastest_tile.median_us * 0.5)
    assert slower.config == second.config
    model = LatencyModel.train([*tiles, slower, *launched[1:]], options=FAST)
    assert model.measured_config(layer) == second.config  # its launched time, not its tile's
    # The tiles' fastest, timed slow as launched, counts at its launched time.
    slowed = dataclasses.replace(fastest_tile, launch="launcher", median_us=100.0)
    model = LatencyModel.train([*tiles, slowed, *launched], options=FAST)
    assert model.measured_config(layer) == second.config
    assert model.measured_config(LAYERS[9]) is not None  # timed only as tiles


def test_held_out_layers_of_both_launches_are_scored_as_launched() -> None:
    tiles = synthetic_rows("wgrad", LAYERS, per_layer=60)
    launched_layers = LAYERS[:6]
    # The launcher's default on a GPU with TMA is the TMA tile; its campaign times it.
    defaults = [
        ConfigTime(GPU, "wgrad", layer, tile, synthetic_us("wgrad", layer, tile))
        for layer in launched_layers
        for tile in [heuristic_tile("wgrad", layer, 132, tma=True)]
    ]
    launched = _launched([row for row in tiles if row.params in launched_layers] + defaults)
    evaluation = evaluate(tiles + launched, folds=3, options=FAST)
    assert [result.params for result in evaluation.layers] == _sorted(launched_layers)
    assert len(evaluation.default_regrets()) == len(launched_layers)
    assert evaluation.median_regret < 0.05, evaluation.report()
    # Scored on launched times: the best of each layer is its fastest launched row.
    for result in evaluation.layers:
        rows = [row for row in launched if row.params == result.params]
        assert result.best_us == min(row.median_us for row in rows)
    # Without TMA (GpuLimits.tma), the launcher's default is the spec's, which was not timed.
    plain = evaluate(tiles + launched, folds=3, limits=GpuLimits(tma=False), options=FAST)
    assert len(plain.default_regrets()) < len(launched_layers)


def test_load_refuses_what_is_not_a_model_of_this_version(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no latency model"):
        LatencyModel.load(tmp_path / "missing.json")
    junk = tmp_path / "junk.json"
    junk.write_text("not a model")
    with pytest.raises(ValueError, match="not an XGBoost model"):
        LatencyModel.load(junk)
    model = LatencyModel.train(synthetic_rows("fprop", LAYERS[:2], per_layer=20), options=FAST)
    path = model.save(tmp_path / "fprop.json")
    document = json.loads(path.read_text())
    attributes = document["learner"]["attributes"]
    meta = json.loads(attributes["spio_perfmodel"])
    meta["format"] = 99
    attributes["spio_perfmodel"] = json.dumps(meta)
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError, match="model format 99"):
        LatencyModel.load(path)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda meta: meta.pop("gpu"), "KeyError: 'gpu'"),
        (lambda meta: meta["limits"].update(cores=4), "TypeError"),
    ],
)
def test_metadata_missing_a_key_or_holding_another_versions_is_a_value_error(
    tmp_path: Path, change: Any, named: str
) -> None:
    model = LatencyModel.train(synthetic_rows("fprop", LAYERS[:2], per_layer=20), options=FAST)
    path = model.save(tmp_path / "fprop.json")
    document = json.loads(path.read_text())
    attributes = document["learner"]["attributes"]
    meta = json.loads(attributes["spio_perfmodel"])
    change(meta)
    attributes["spio_perfmodel"] = json.dumps(meta)
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError, match="Spio metadata this spio-perfmodel cannot read") as caught:
        LatencyModel.load(path)
    assert named in str(caught.value)


def test_a_file_xgboost_cannot_read_is_named_without_xgboosts_backtrace(tmp_path: Path) -> None:
    """Regression: the ValueError carried XGBoost's native backtrace ("Stack trace:", a line
    per frame of libxgboost); and bytes that are not UTF-8 gave a UnicodeDecodeError."""
    junk = tmp_path / "junk.json"
    junk.write_text("not a model")
    with pytest.raises(ValueError, match="is not an XGBoost model file") as caught:
        LatencyModel.load(junk)
    message = str(caught.value)
    # The first line, without where in libxgboost it was raised ("[hh:mm:ss] c_api.cc:N:").
    assert message.startswith(f"{junk} is not an XGBoost model file: Check failed")
    assert "Invalid model format" in message
    for backtrace in ("\n", "Stack trace", "[bt]", "libxgboost"):
        assert backtrace not in message
    assert caught.value.__cause__ is None
    binary = tmp_path / "junk.ubj"
    binary.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ValueError, match=r"junk\.ubj is not an XGBoost model file"):
        LatencyModel.load(binary)


@pytest.mark.parametrize("pass_name", sorted(PASSES))
def test_the_whole_space_scored_as_arrays_picks_what_the_list_path_picks(pass_name: str) -> None:
    model = LatencyModel.train(synthetic_rows(pass_name, LAYERS[:4], per_layer=60), options=FAST)
    for layer in LAYERS[4:7]:
        space = PASSES[pass_name].config_space(layer)
        predicted = model.predict_us(layer, space)
        assert model.best_config(layer) == space[int(np.argmin(predicted))]


def test_best_config_without_candidates_names_the_layer() -> None:
    model = LatencyModel.train(synthetic_rows("fprop", LAYERS[:2], per_layer=20), options=FAST)
    with pytest.raises(ValueError, match="no fprop config fits"):
        model.best_config(LAYERS[0], [])


def _on_other_gpu(rows: list[ConfigTime], slowdown: float) -> list[ConfigTime]:
    """rows as another GPU times them: the synthetic law, slowdown times slower."""
    return [
        dataclasses.replace(row, gpu="Other GPU", median_us=row.median_us * slowdown)
        for row in rows
    ]


def test_another_gpus_rows_teach_a_model_of_its_own_gpu(tmp_path: Path) -> None:
    # Few layers of the model's GPU, many of the other's, which runs every config 1.5x slower.
    own = synthetic_rows("fprop", LAYERS[:3], per_layer=60)
    other = _on_other_gpu(synthetic_rows("fprop", LAYERS, per_layer=60, seed=1), 1.5)
    pooled = LatencyModel.train(own + other, options=FAST, gpu=GPU)
    assert (pooled.gpu, pooled.flags, pooled.launch) == (GPU, ("other_gpu",), "tile")
    # It predicts its own GPU's times on a layer only the other GPU timed.
    layer = LAYERS[7]
    configs = PASSES["fprop"].config_space(layer)[:40]
    truth = np.array([synthetic_us("fprop", layer, config) for config in configs])
    assert 0.85 < np.median(pooled.predict_us(layer, configs) / truth) < 1.15
    alone = LatencyModel.train(other, options=FAST)
    assert np.median(alone.predict_us(layer, configs) / truth) > 1.35
    # Its measurements are its own GPU's.
    assert set(pooled.measured) == set(LAYERS[:3])
    loaded = LatencyModel.load(pooled.save(tmp_path / "fprop.ubj"))
    assert (loaded.gpu, loaded.flags) == (GPU, ("other_gpu",))
    np.testing.assert_array_equal(
        loaded.predict_us(layer, configs), pooled.predict_us(layer, configs)
    )


def test_held_out_layers_of_pooled_rows_are_scored_on_the_models_gpu() -> None:
    own = synthetic_rows("fprop", LAYERS[:6], per_layer=40)
    other = _on_other_gpu(synthetic_rows("fprop", LAYERS, per_layer=40, seed=1), 1.5)
    evaluation = evaluate(own + other, folds=3, options=FAST, gpu=GPU)
    assert [result.params for result in evaluation.layers] == _sorted(LAYERS[:6])
    for result in evaluation.layers:
        assert result.best_us == min(r.median_us for r in own if r.params == result.params)
    with pytest.raises(ValueError, match="name the model's"):
        evaluate(own + other, folds=3, options=FAST)


def test_evaluate_gives_the_same_folds_and_numbers_for_rows_in_any_order() -> None:
    """Regression (B1 of the CLI audit): the layers were numbered in the order their rows came,
    and GroupKFold breaks ties between layers of as many rows by that number, so the files'
    order moved the folds: choose_config's p95 regret by 2.5 points on one H200 seed."""
    from spio.perfmodel._evaluate import fold_groups

    rows = synthetic_rows("fprop", LAYERS[:6], per_layer=30)
    shuffled = random.Random(3).sample(rows, len(rows))
    by_layer = {row.params: group for row, group in zip(rows, fold_groups(rows), strict=True)}
    assert [by_layer[row.params] for row in shuffled] == list(fold_groups(shuffled))
    assert fold_groups(rows, seed=1).tolist() != fold_groups(rows).tolist()  # seeded
    first = evaluate(rows, folds=3, options=FAST)
    again = evaluate(shuffled, folds=3, options=FAST)
    assert again.layers == first.layers
    assert [result.params for result in first.layers] == _sorted(LAYERS[:6])
    assert again.report() == first.report()


def test_the_report_keeps_its_columns_for_long_layer_names() -> None:
    """Regression (N2): a layer's name longer than the column (a 7 x 7 bfloat16 one with its
    padding) pushed its row's numbers out of line."""
    from spio.perfmodel._evaluate import Evaluation, LayerResult

    long = Conv2dGw8Params.make(256, 512, 16, 16, r=7, s=7, padding=3, dtype="bfloat16")
    results = [
        LayerResult(layer, 40, 10.0, None, 11.0, None, 11.0, 10.0) for layer in (LAYERS[0], long)
    ]
    lines = Evaluation("fprop", tuple(results)).report().splitlines()
    header, rows = lines[1], lines[2:4]
    assert rows[1].startswith("256x512x16x16 7x7 pad 3 3 3 3 bfloat16 ")
    end = header.index("configs") + len("configs")
    assert all(row[end - 2 : end] == "40" for row in rows), lines


def test_a_model_file_with_gpu_limits_out_of_range_is_refused(tmp_path: Path) -> None:
    """Regression (B2): a model trained with --sm-count -5 was written, then used."""
    with pytest.raises(ValueError, match=r"GpuLimits\.sm_count must be >= 1, got -5"):
        LatencyModel.train(synthetic_rows("fprop", LAYERS[:2], per_layer=20),
                           GpuLimits(sm_count=-5), options=FAST)  # fmt: skip
    model = LatencyModel.train(synthetic_rows("fprop", LAYERS[:2], per_layer=20), options=FAST)
    path = model.save(tmp_path / "fprop.json")
    document = json.loads(path.read_text())
    attributes = document["learner"]["attributes"]
    meta = json.loads(attributes["spio_perfmodel"])
    meta["limits"]["sm_count"] = 0
    attributes["spio_perfmodel"] = json.dumps(meta)
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError, match=r"fprop\.json holds GPU limits out of range: .*sm_count"):
        LatencyModel.load(path)


def test_save_writes_only_json_or_ubj_and_replaces_the_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regressions (B5, N1, N7): a name of another suffix got UBJSON with XGBoost's warning;
    a missing directory failed after training with XGBoost's native backtrace; a save cut
    off left a part of a model at the final name."""
    import xgboost

    model = LatencyModel.train(synthetic_rows("fprop", LAYERS[:2], per_layer=20), options=FAST)
    with pytest.raises(ValueError, match=r"x\.txt: a model file's name ends in \.json .* or "
                       r"\.ubj .*, got '\.txt'"):  # fmt: skip
        model.save(tmp_path / "x.txt")
    with pytest.raises(ValueError, match=r"x\.json: directory .*nodir does not exist"):
        model.save(tmp_path / "nodir" / "x.json")
    (tmp_path / "dir.ubj").mkdir()
    with pytest.raises(ValueError, match=r"dir\.ubj: is a directory"):
        model.save(tmp_path / "dir.ubj")
    path = model.save(tmp_path / "fprop.ubj")
    saved = path.read_bytes()

    def cut_off(booster: Any, name: str) -> None:
        Path(name).write_bytes(saved[:100])  # a part written, then the write fails
        raise xgboost.core.XGBoostError("[10:00:00] io.cc:12: disk full\nStack trace:\n  [bt] 0")

    monkeypatch.setattr(xgboost.Booster, "save_model", cut_off)
    with pytest.raises(ValueError, match=r"fprop\.ubj: disk full$"):
        model.save(path)
    assert path.read_bytes() == saved  # the model before, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.ubj", "fprop.ubj"]


def test_the_model_api_names_an_argument_of_the_wrong_type() -> None:
    """Regression (P7): another pass's config, or a shape given as text, gave AttributeErrors
    from inside the features."""
    from spio.kernels.conv2d_gw8 import FpropConfig

    model = LatencyModel.train(synthetic_rows("wgrad", LAYERS[:2], per_layer=20), options=FAST)
    with pytest.raises(TypeError, match="a wgrad model scores WgradConfigs, got FpropConfig"):
        model.predict_us(LAYERS[0], [FpropConfig()])
    with pytest.raises(TypeError, match="a wgrad model scores WgradConfigs, got FpropConfig"):
        model.best_config(LAYERS[0], [FpropConfig()])
    for call in (model.best_config, lambda params: model.top_configs(params, 2)):
        with pytest.raises(TypeError, match="params must be a Conv2dGw8Params, got str"):
            call("128x64x64x64")
