"""How much fprop's and dgrad's rows timed as launched could teach their latency models.

    D=packages/spio-perfmodel/data/nvidia_h200
    uv run python tools/launched_rows_check.py --pass fprop \
        --tiles $D/seed*/conv2d_gw8_configs_fprop.csv $D/pending/seed15/*_fprop.csv \
        --launched $D/pending/seed1[35]_launched/conv2d_gw8_configs_fprop.csv [--folds 6] \
        [--seeds 0 1 2] [--gates 0 0.03 0.08 inf]

The shipped fprop and dgrad models learn from rows of tiles as they are (`launch` "tile"),
while the launcher cuts each tile's row chunks evenly before it runs it (spio-kernels'
placement: 56 rows in chunks of 14 rather than 16, 16, 16 and 8). A campaign timed with
`spio-perfmodel collect --as-launched` times the same tiles the launcher's way. Two questions,
answered on the CPU from such rows:

1. The ceiling. On each layer with rows of both launches, the tile rows' fastest config run
   as launched, against the launched rows' fastest: what a model that knew every tile time
   exactly, but only as tiles, would lose to one that knew the launched times. Printed with
   the spread of a config's tile time over its launched time.
2. The models. Layer folds over the launched layers; for each fold, models trained on the
   other layers' rows in each of VARIANTS, and choose_config's rule (a pick only where
   predicted MIN_PREDICTED_GAIN faster than the heuristic's tile, else that tile) scored by
   the held-out layers' launched times: the regret over the layer's launched fastest.
3. The gate (--gates). The same folds, the models of the launched rows beside the tile rows,
   scored with each given gain asked of a pick over the heuristic's tile instead of
   MIN_PREDICTED_GAIN: 0 always takes the pick, inf always the tile.

The sixty-fourth session ran it on seeds 13 and 15 (docs/benchmarks-log.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from spio.perfmodel._compare import geometric_mean
from spio.perfmodel._data import ConfigTime, by_layer, layer_key, measured_times, read_config_times
from spio.perfmodel._features import GpuLimits
from spio.perfmodel._model import LatencyModel, TrainingOptions, training_options
from spio.perfmodel._passes import heuristic_tile
from spio.perfmodel._select import MIN_PREDICTED_GAIN, predicted_gain

Rows = list[ConfigTime]


def _tile_only(tiles: Rows, launched: Rows) -> Rows:
    return tiles


def _both(tiles: Rows, launched: Rows) -> Rows:
    return tiles + launched


def _launched_instead(tiles: Rows, launched: Rows) -> Rows:
    timed = {row.params for row in launched}
    return [row for row in tiles if row.params not in timed] + launched


#: How each variant's model is trained from a fold's tile rows and launched rows: the tile
#: rows alone (the shipped models' way); both, the launch a feature (LatencyModel.train); a
#: layer's launched rows instead of its tile rows where it has them.
VARIANTS: dict[str, Callable[[Rows, Rows], Rows]] = {
    "tile": _tile_only,
    "both": _both,
    "launched instead": _launched_instead,
}


@dataclass(frozen=True)
class LayerCeiling:
    """One layer timed both ways: the tile rows' fastest config and the launched fastest."""

    layer: str
    tile_best: Any
    tile_best_launched_us: float
    launched_best: Any
    launched_best_us: float

    @property
    def loss(self) -> float:
        """The tile rows' fastest, launched, over the launched fastest (1.0: the same)."""
        return self.tile_best_launched_us / self.launched_best_us


def _times_by_layer(rows: Rows) -> dict[Any, dict[Any, float]]:
    """Each layer's config -> time (measured_times) of rows."""
    return {params: measured_times(layer_rows) for params, layer_rows in by_layer(rows).items()}


def paired_ratios(tiles: Rows, launched: Rows) -> list[float]:
    """Each config's tile time over its launched time, on the layers and configs timed both
    ways (above 1: it runs faster as launched)."""
    tile_times = _times_by_layer(tiles)
    ratios = []
    for params, rows in by_layer(launched).items():
        on_layer = tile_times.get(params, {})
        for config, us in measured_times(rows).items():
            if config in on_layer:
                ratios.append(on_layer[config] / us)
    return ratios


def ceilings(tiles: Rows, launched: Rows) -> list[LayerCeiling]:
    """The layers timed both ways, each with its tile rows' fastest among the configs timed
    as launched too, run as launched, and the launched fastest."""
    tile_times = _times_by_layer(tiles)
    found = []
    for params, rows in by_layer(launched).items():
        launched_times = measured_times(rows)
        shared = {c: us for c, us in tile_times.get(params, {}).items() if c in launched_times}
        if not shared:
            continue
        tile_best = min(shared, key=shared.__getitem__)
        best = min(launched_times, key=launched_times.__getitem__)
        found.append(
            LayerCeiling(
                layer_key(params), tile_best, launched_times[tile_best], best, launched_times[best]
            )
        )
    return found


def chosen_regret(
    model: LatencyModel, rows: Rows, limits: GpuLimits, gate: float = MIN_PREDICTED_GAIN
) -> float:
    """choose_config's rule among one layer's launched rows, scored by their times: the
    chosen config's time over the fastest, minus 1. The heuristic's tile stands where the
    model predicts its pick less than `gate` faster (and the tile was timed); choose_config's
    gate is MIN_PREDICTED_GAIN."""
    params = rows[0].params
    times = measured_times(rows)
    configs = list(times)
    predicted = model.predict_us(params, configs)
    pick = int(np.argmin(predicted))
    chosen = configs[pick]
    default = heuristic_tile(model.pass_name, params, limits.sm_count, False)
    if default in times and predicted_gain(model, params, default, chosen) < gate:
        chosen = default
    return times[chosen] / min(times.values()) - 1


def _held_out_models(
    tiles: Rows,
    launched: Rows,
    folds: int,
    limits: GpuLimits,
    variants: Sequence[str],
    seed: int = 0,
    options: TrainingOptions | None = None,
) -> Iterator[tuple[str, LatencyModel, list[Rows]]]:
    """For each of `folds` layer folds of the launched layers (a seeded shuffle; a fold's tile
    and launched rows both left out) and each of variants: the variant's model trained on
    the other layers' rows, with options (the pass's own where None), and the held-out
    layers' launched rows, a list per layer."""
    layers = list(by_layer(launched))
    if not 2 <= folds <= len(layers):
        raise ValueError(f"folds must be 2 to the {len(layers)} launched layers, got {folds}")
    order = np.random.default_rng(seed).permutation(len(layers))
    for k in range(folds):
        held = {layers[i] for i in order[k::folds]}
        fold_tiles = [row for row in tiles if row.params not in held]
        fold_launched = [row for row in launched if row.params not in held]
        held_rows = list(by_layer(r for r in launched if r.params in held).values())
        for name in variants:
            rows = VARIANTS[name](fold_tiles, fold_launched)
            yield name, LatencyModel.train(rows, limits, options), held_rows


def _fold_scores(
    tiles: Rows,
    launched: Rows,
    folds: int,
    limits: GpuLimits,
    variants: Sequence[str],
    gates: Sequence[float] = (),
    seed: int = 0,
    options: TrainingOptions | None = None,
) -> tuple[dict[str, list[float]], dict[float, list[float]]]:
    """Each of variants' chosen_regret on every launched layer, held out in `folds` layer
    folds (_held_out_models), and the "both" variant's at each of gates, from one training
    per fold and variant."""
    regrets: dict[str, list[float]] = {name: [] for name in variants}
    by_gate: dict[float, list[float]] = {gate: [] for gate in gates}
    for name, model, held_rows in _held_out_models(
        tiles, launched, folds, limits, variants, seed, options
    ):
        regrets[name].extend(chosen_regret(model, rows, limits) for rows in held_rows)
        if name == "both":
            for gate in gates:
                by_gate[gate].extend(chosen_regret(model, rows, limits, gate) for rows in held_rows)
    return regrets, by_gate


def fold_regrets(
    tiles: Rows,
    launched: Rows,
    folds: int,
    limits: GpuLimits,
    seed: int = 0,
    options: TrainingOptions | None = None,
) -> dict[str, list[float]]:
    """Each variant's chosen_regret on every launched layer, held out in `folds` layer folds
    (_held_out_models)."""
    return _fold_scores(tiles, launched, folds, limits, list(VARIANTS), (), seed, options)[0]


def gate_regrets(
    tiles: Rows,
    launched: Rows,
    folds: int,
    limits: GpuLimits,
    gates: Sequence[float],
    options: TrainingOptions | None = None,
) -> dict[float, list[float]]:
    """chosen_regret at each of gates on every launched layer, held out in `folds` layer
    folds, the models of the "both" variant (the launched rows beside the tile rows): how
    much the predicted gain that choose_config asks of a pick over the heuristic's tile
    matters."""
    return _fold_scores(tiles, launched, folds, limits, ["both"], gates, 0, options)[1]


def _regret_line(label: str, regrets: Sequence[float]) -> str:
    return (
        f"{label}: {len(regrets)} layers, chosen regret median {_percentile(regrets, 50):.1%}, "
        f"p95 {_percentile(regrets, 95):.1%}, mean {np.mean(regrets):.1%}, geometric mean "
        f"slowdown {geometric_mean([1 + r for r in regrets]):.4f}"
    )


def _percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.array(values), q))


def report(
    pass_name: str,
    tiles: Rows,
    launched: Rows,
    folds: int,
    limits: GpuLimits,
    seeds: Sequence[int] = (0,),
    gates: Sequence[float] = (),
) -> str:
    """The two answers of the module doc, as text; the folds once per XGBoost seed in seeds
    (a seed moves the trees by about as much as the variants differ: docs/perfmodel), and
    with gates, the "both" variant's regrets at each of them (gate_regrets), from the same
    models."""
    lines = []
    ratios = paired_ratios(tiles, launched)
    if ratios:
        lines.append(
            f"{pass_name}: {len(ratios)} configs timed both ways, tile over launched time: "
            f"geometric mean {geometric_mean(ratios):.3f}, 5th/50th/95th percentile "
            f"{_percentile(ratios, 5):.3f} / {_percentile(ratios, 50):.3f} / "
            f"{_percentile(ratios, 95):.3f}"
        )
    found = ceilings(tiles, launched)
    moved = [ceiling for ceiling in found if ceiling.tile_best != ceiling.launched_best]
    for ceiling in moved:
        lines.append(
            f"  {ceiling.layer}: the tile rows' fastest {ceiling.tile_best} runs "
            f"{ceiling.tile_best_launched_us:.2f} us launched, the launched fastest "
            f"{ceiling.launched_best} {ceiling.launched_best_us:.2f} us ({ceiling.loss:.3f}x)"
        )
    if found:
        lines.append(
            f"{pass_name}: the fastest config moves on {len(moved)} of {len(found)} layers; "
            f"the tile rows' fastest, launched, over the launched fastest: geometric mean "
            f"{geometric_mean([c.loss for c in found]):.4f}, at most "
            f"{max(c.loss for c in found):.3f}x"
        )
    for seed in seeds:
        options = dataclasses.replace(training_options(pass_name), seed=seed)
        by_variant, by_gate = _fold_scores(
            tiles, launched, folds, limits, list(VARIANTS), gates, 0, options
        )
        for name, regrets in by_variant.items():
            lines.append(_regret_line(f"{pass_name} seed {seed} {name:>16}", regrets))
        for gate, regrets in by_gate.items():
            named = f"{gate:.0%}" if math.isfinite(gate) else "inf"
            lines.append(_regret_line(f"{pass_name} seed {seed} gate {named}", regrets))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pass", dest="pass_name", choices=("fprop", "dgrad"), required=True)
    parser.add_argument("--tiles", nargs="+", required=True, help="config-times CSVs of tiles")
    parser.add_argument("--launched", nargs="+", required=True, help="CSVs timed as launched")
    parser.add_argument(
        "--kernel", help="the kernels' digest of the rows (default: the launched rows' one)"
    )
    parser.add_argument("--folds", type=int, default=6)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="XGBoost seeds")
    parser.add_argument(
        "--gates",
        type=float,
        nargs="+",
        default=[],
        help="predicted gains to ask of a pick over the heuristic's tile, scored as "
        "choose_config's gate (fractions: 0.03 is its own; inf keeps the heuristic's tile)",
    )
    args = parser.parse_args(argv)
    launched = read_config_times(args.launched).select(
        args.pass_name, kernel=args.kernel, launch="launcher"
    )
    if not launched.rows:
        parser.error(f"--launched holds no {args.pass_name} rows timed as launched")
    # A model learns from rows of one version of the kernels (LatencyModel.train).
    kernels = sorted({row.kernel for row in launched.rows})
    if len(kernels) > 1:
        parser.error(f"--launched rows were timed on kernels {kernels}: choose one with --kernel")
    tiles = read_config_times(args.tiles).select(args.pass_name, kernel=kernels[0], launch="tile")
    rows = list(tiles.rows), list(launched.rows)
    print(report(args.pass_name, *rows, args.folds, GpuLimits(), args.seeds, args.gates))


if __name__ == "__main__":
    main()
