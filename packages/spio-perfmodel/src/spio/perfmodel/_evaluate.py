"""How well a latency model chooses configs for layers it has not seen.

The layers are split into folds (scikit-learn's GroupKFold, a layer never in two folds; which
fold a layer falls in depends on the set of rows alone, not on their order or the files':
fold_groups); for each fold a model trained on the other layers picks the config it predicts
fastest among the fold's measured configs (evaluate_held_out: one model, and layers the caller
holds out, such as a campaign of widths the others never sampled). The regret of a layer is the
picked config's measured time over the fastest measured one, minus 1. Beside it stand the
regret of what choose_config would run among those configs (the model's pick only where it is
predicted MIN_PREDICTED_GAIN faster than the default, else the default), and the regret of the
spec's `default_config` for the GPU's SM count, where the data holds its time, and the regret
of autotuning's pick: the fastest of the model's `shortlist` best-predicted configs among the
fold's and the default (tune_config times them on the device). (A launch without a config runs
`default_config_on`, which for fprop and dgrad may shorten the walk after asking the device for
its occupancy; a campaign times that one, and where it differs the spec's default may be
missing from the data.) The best is the best measured: with sampled configs, the regret against
the whole space's best is larger or equal. TARGETS.md asks for a median regret within 2% and a
p95 within 8% over held-out layers. (On a GPU with TMA, choose_config also keeps wgrad's
heuristic tile with TMA rows over a pick without them, _give_way._unless_tma_tile: a gain of
the producer warps those tiles run with, which rows timed without them cannot show.)

Rows of both launches (_data.ConfigTime.launch) train models with the launch as a feature,
which predict tiles as launched: the held-out layers are then scored on their launched rows
alone, their tile rows left out of training with them, and the default is the tile the
launcher starts from on the GPU (_passes.heuristic_tile: wgrad's TMA tile where
GpuLimits.tma). Rows of several GPUs train models of one of them (`gpu`) that learn from the
others' rows too: the held-out layers are scored on that GPU's rows, every GPU's rows of
them left out of training.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from spio.kernels.conv2d_gw8.params import Conv2dGw8Params

from ._autotune import AUTOTUNE_CANDIDATES
from ._data import ConfigTime, by_layer, layer_key, measured_times
from ._features import GpuLimits
from ._model import LatencyModel, TrainingOptions, row_order
from ._passes import heuristic_tile
from ._select import MIN_PREDICTED_GAIN, predicted_gain

#: The seed of the shuffle that numbers the layers for the folds (fold_groups). The same
#: for every training seed: `--seeds` compares seeds on the same folds.
FOLD_SEED = 0


@dataclass(frozen=True)
class LayerResult:
    """One held-out layer: its fastest measured config and the model's (and heuristic's) pick."""

    params: Conv2dGw8Params
    configs: int
    best_us: float
    picked: Any
    picked_us: float
    default_us: float | None
    #: What choose_config would run among the measured configs (the pick or the default).
    chosen_us: float
    #: The fastest of the model's shortlist and the default (autotuning's pick).
    tuned_us: float

    @property
    def layer(self) -> str:
        return layer_key(self.params)

    @property
    def regret(self) -> float:
        return self.picked_us / self.best_us - 1.0

    @property
    def chosen_regret(self) -> float:
        return self.chosen_us / self.best_us - 1.0

    @property
    def tuned_regret(self) -> float:
        return self.tuned_us / self.best_us - 1.0

    @property
    def default_regret(self) -> float | None:
        return None if self.default_us is None else self.default_us / self.best_us - 1.0


@dataclass(frozen=True)
class Evaluation:
    """Held-out results of every layer, and their regret's median and 95th percentile."""

    pass_name: str
    layers: tuple[LayerResult, ...]
    #: How many best-predicted configs autotuning's pick was the fastest of (with the default).
    shortlist: int = AUTOTUNE_CANDIDATES

    def regrets(self, kind: str = "model") -> list[float]:
        """Every layer's regret of `model` (its pick), `chosen` (choose_config's rule) or
        `tuned` (autotuning's pick)."""
        attribute = {"model": "regret", "chosen": "chosen_regret", "tuned": "tuned_regret"}
        return [getattr(r, attribute[kind]) for r in self.layers]

    def mean_regret(self, kind: str = "model") -> float:
        """The mean of regrets(kind): steadier than the p95 from one split of the layers to
        the next, which a few layers set."""
        return float(np.mean(self.regrets(kind)))

    def slowdown(self, kind: str = "model") -> float:
        """The geometric mean over the layers of 1 + regrets(kind): how much slower than each
        layer's fastest measured config the picks run, as `spio-perfmodel compare` sums up
        its layers' speed-ups."""
        return float(np.exp(np.mean(np.log1p(self.regrets(kind)))))

    @property
    def median_regret(self) -> float:
        return float(np.median(self.regrets("model")))

    @property
    def p95_regret(self) -> float:
        return float(np.percentile(self.regrets("model"), 95))

    @property
    def chosen_median_regret(self) -> float:
        return float(np.median(self.regrets("chosen")))

    @property
    def chosen_p95_regret(self) -> float:
        return float(np.percentile(self.regrets("chosen"), 95))

    @property
    def tuned_median_regret(self) -> float:
        return float(np.median(self.regrets("tuned")))

    @property
    def tuned_p95_regret(self) -> float:
        return float(np.percentile(self.regrets("tuned"), 95))

    def default_regrets(self) -> list[float]:
        """The spec default's regret on the layers whose data holds its time."""
        return [r.default_regret for r in self.layers if r.default_regret is not None]

    def report(self) -> str:
        """A plain-text table of the layers and the summary."""
        lines = [f"{self.pass_name}: {len(self.layers)} held-out layers"]
        # As wide as the longest layer's name (a 7 x 7 bfloat16 layer's with its padding is
        # 40 characters), so the columns stay in line.
        width = max([24, *(len(r.layer) for r in self.layers)])
        lines.append(
            f"{'layer':<{width}} {'configs':>7} {'best us':>9} {'model':>8} {'chosen':>8} "
            f"{'tuned':>8} {'default':>8}"
        )
        for r in self.layers:
            default = "-" if r.default_regret is None else f"{100 * r.default_regret:.1f}%"
            lines.append(
                f"{r.layer:<{width}} {r.configs:>7} {r.best_us:>9.2f} {100 * r.regret:>7.1f}% "
                f"{100 * r.chosen_regret:>7.1f}% {100 * r.tuned_regret:>7.1f}% {default:>8}"
            )
        lines.append(
            f"model regret: median {100 * self.median_regret:.1f}%, "
            f"p95 {100 * self.p95_regret:.1f}%, mean {100 * self.mean_regret():.1f}%; "
            f"{self.slowdown():.4f}x the fastest in geometric mean"
        )
        lines.append(
            f"chosen regret (choose_config's rule): median "
            f"{100 * self.chosen_median_regret:.1f}%, p95 {100 * self.chosen_p95_regret:.1f}%, "
            f"mean {100 * self.mean_regret('chosen'):.1f}%; "
            f"{self.slowdown('chosen'):.4f}x the fastest in geometric mean"
        )
        lines.append(
            f"tuned regret (the fastest of the model's {self.shortlist} best and the default): "
            f"median {100 * self.tuned_median_regret:.1f}%, p95 {100 * self.tuned_p95_regret:.1f}%"
        )
        defaults = self.default_regrets()
        if defaults:
            lines.append(
                f"default regret: median {100 * float(np.median(defaults)):.1f}%, "
                f"p95 {100 * float(np.percentile(defaults, 95)):.1f}% "
                f"({len(defaults)} of {len(self.layers)} layers timed it)"
            )
        return "\n".join(lines)


def evaluate(
    rows: Sequence[ConfigTime],
    folds: int = 5,
    limits: GpuLimits | None = None,
    options: TrainingOptions | None = None,
    shortlist: int = AUTOTUNE_CANDIDATES,
    gpu: str | None = None,
    fold_seed: int = FOLD_SEED,
) -> Evaluation:
    """Cross-validate a model on rows of one pass and GPU, by layer (see the module doc):
    the GPU `gpu` where the rows have several (LatencyModel.train).

    folds is the number of layer folds (at most the number of layers; as many as layers is
    leave-one-layer-out); shortlist, how many best-predicted configs autotuning's pick is
    the fastest of; fold_seed, which layers share a fold (fold_groups). The same rows in
    any order give the same evaluation, its layers in their sorted order. Raises
    ValueError with fewer than two layers, or a shortlist below 1.
    """
    _check_shortlist(shortlist)
    from sklearn.model_selection import GroupKFold

    limits = limits or GpuLimits()
    # In a canonical order, the folds' rows and each layer's configs (whose order breaks
    # ties between equal predictions) are the same whatever order the rows came in.
    rows = sorted(rows, key=row_order)
    layers = sorted({row.params for row in rows}, key=dataclasses.astuple)
    if len(layers) < 2:
        raise ValueError(f"held-out evaluation needs rows of at least 2 layers, got {len(layers)}")
    if folds < 2:
        raise ValueError(f"folds must be at least 2, got {folds}")
    index = {params: i for i, params in enumerate(layers)}
    groups = fold_groups(rows, fold_seed)
    # The launch the results are of: a model of both launches predicts launched tiles.
    launch = "launcher" if any(row.launch == "launcher" for row in rows) else "tile"
    gpus = {row.gpu for row in rows}
    if gpu is None and len(gpus) == 1:
        gpu = gpus.pop()  # (rows of several GPUs without gpu: LatencyModel.train refuses)
    splitter = GroupKFold(n_splits=min(folds, len(layers)))
    results: list[LayerResult] = []
    for train_rows, test_rows in splitter.split(np.zeros(len(rows)), groups=groups):
        model = LatencyModel.train([rows[i] for i in train_rows], limits, options, gpu)
        held_out = [rows[i] for i in test_rows]
        results += _scored(model, held_out, limits, shortlist, launch, gpu)
    results.sort(key=lambda result: index[result.params])
    return Evaluation(rows[0].pass_name, tuple(results), shortlist)


def evaluate_held_out(
    rows: Sequence[ConfigTime],
    held_out: Sequence[ConfigTime],
    limits: GpuLimits | None = None,
    options: TrainingOptions | None = None,
    shortlist: int = AUTOTUNE_CANDIDATES,
    gpu: str | None = None,
) -> Evaluation:
    """Score a model trained on rows on the layers of held_out, rows of a set of layers
    chosen by the caller rather than by folds: a campaign of channel counts or image sides
    that rows never sampled, say, to ask how far the model carries to them.

    Rows of a held-out layer are left out of training wherever they are, so the score is
    of layers the model never saw. As with evaluate, the order of the rows does not matter:
    the results come in the held-out layers' sorted order. held_out's rows must be of rows'
    pass; raises ValueError when held_out is empty, when no training rows are left, or for a
    shortlist below 1.
    """
    _check_shortlist(shortlist)
    if not held_out:
        raise ValueError("held_out has no rows: give the config times of the layers to score")
    passes = {row.pass_name for row in [*rows, *held_out]}
    if len(passes) > 1:
        raise ValueError(f"rows and held_out must be of one pass, got {sorted(passes)}")
    scored = {row.params for row in held_out}
    training = [row for row in rows if row.params not in scored]
    if not training:
        raise ValueError("every training row is of a held-out layer: no rows are left to train on")
    limits = limits or GpuLimits()
    model = LatencyModel.train(training, limits, options, gpu)
    held_out = sorted(held_out, key=row_order)
    results = _scored(model, held_out, limits, shortlist, model.launch, model.gpu)
    if not results:
        raise ValueError(
            f"held_out has no rows of GPU {model.gpu} and launch {model.launch!r}, those the "
            "model predicts"
        )
    return Evaluation(held_out[0].pass_name, tuple(results), shortlist)


def fold_groups(rows: Sequence[ConfigTime], seed: int = FOLD_SEED) -> np.ndarray:
    """Each row's group for GroupKFold: its layer's number in a shuffle, seeded, of the rows'
    layers in their sorted order (dataclasses.astuple). GroupKFold puts the largest groups
    first into the emptiest folds and breaks ties between groups of as many rows (a
    campaign's layers, as a rule) by their number: numbered in the order the rows came, the
    folds, and with them the regrets, moved with the order of the files (choose_config's
    p95 regret by up to 2.5 points on one seed's H200 wgrad rows). Numbered in their sorted
    order, the folds would take each width's batch sizes in turn; the seeded shuffle draws
    the folds as the files' order did, but from the rows alone."""
    layers = sorted({row.params for row in rows}, key=dataclasses.astuple)
    numbers = np.random.default_rng(seed).permutation(len(layers))
    number = dict(zip(layers, numbers.tolist(), strict=True))
    return np.array([number[row.params] for row in rows])


def seeds_report(evaluations: Sequence[Evaluation], seeds: Sequence[int]) -> str:
    """How the summary moves with the training seed: one line per seed (evaluations[i]
    trained with seeds[i], the same layers and folds), then each figure's range.

    XGBoost samples rows and columns for each tree (TrainingOptions.subsample and
    colsample_bytree) from its seed, so models of the same rows differ by seed, and so does
    a fold evaluation. A difference between two sets of rows, or two settings, smaller than
    this range is not shown by one evaluation.
    """
    if len(evaluations) != len(seeds) or not seeds:
        raise ValueError(f"one evaluation per seed: {len(evaluations)} for seeds {list(seeds)}")
    figures: dict[str, list[float]] = {}
    lines = [f"{evaluations[0].pass_name}: the same folds, trained with seeds {list(seeds)}"]
    for seed, evaluation in zip(seeds, evaluations, strict=True):
        row = {
            "model median": 100 * evaluation.median_regret,
            "model p95": 100 * evaluation.p95_regret,
            "chosen median": 100 * evaluation.chosen_median_regret,
            "chosen p95": 100 * evaluation.chosen_p95_regret,
            "chosen mean": 100 * evaluation.mean_regret("chosen"),
        }
        for name, value in row.items():
            figures.setdefault(name, []).append(value)
        slowdown = evaluation.slowdown("chosen")
        figures.setdefault("chosen slowdown", []).append(slowdown)
        text = ", ".join(f"{name} {value:.1f}%" for name, value in row.items())
        lines.append(f"seed {seed}: {text}, chosen {slowdown:.4f}x the fastest")
    ranges = [
        f"{name} {min(values):.4f}-{max(values):.4f}x"
        if name == "chosen slowdown"
        else f"{name} {min(values):.1f}-{max(values):.1f}%"
        for name, values in figures.items()
    ]
    lines.append(f"across seeds: {', '.join(ranges)}")
    return "\n".join(lines)


def _check_shortlist(shortlist: int) -> None:
    if isinstance(shortlist, bool) or not isinstance(shortlist, int) or shortlist < 1:
        raise ValueError(f"shortlist must be an int >= 1, got {shortlist!r}")


def _scored(
    model: LatencyModel,
    rows: Sequence[ConfigTime],
    limits: GpuLimits,
    shortlist: int,
    launch: str,
    gpu: str | None,
) -> list[LayerResult]:
    """The results of the layers of rows that are of the model's launch and GPU."""
    held_out = (row for row in rows if row.launch == launch and row.gpu == gpu)
    return [
        _layer_result(model, params, layer_rows, limits, shortlist, launch)
        for params, layer_rows in by_layer(held_out).items()
    ]


def _layer_result(
    model: LatencyModel,
    params: Conv2dGw8Params,
    rows: Sequence[ConfigTime],
    limits: GpuLimits,
    shortlist: int,
    launch: str,
) -> LayerResult:
    times = measured_times(rows)
    configs = list(times)
    predicted = model.predict_us(params, configs)
    ranked = [configs[i] for i in np.argsort(predicted, kind="stable")]
    picked = ranked[0]  # best_config(params, configs): the first of the lowest
    # Campaigns of tiles timed the spec's default; launched ones, the launcher's (_select).
    tma = limits.tma and launch == "launcher"
    default = heuristic_tile(model.pass_name, params, limits.sm_count, tma)
    chosen = picked
    if default in times and predicted_gain(model, params, default, picked) < MIN_PREDICTED_GAIN:
        chosen = default
    tuned = ranked[:shortlist] + ([default] if default in times else [])
    return LayerResult(
        params,
        len(configs),
        min(times.values()),
        picked,
        times[picked],
        times.get(default),
        times[chosen],
        min(times[config] for config in tuned),
    )
