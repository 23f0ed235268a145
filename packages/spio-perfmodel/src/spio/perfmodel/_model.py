"""A latency model of one kernel pass on one GPU: gradient-boosted trees (XGBoost) over the
features of _features, trained on measured config times.

The trees predict log(latency / floor), where the floor is a layer's roofline time,
FLOOR_US plus its compulsory bytes at FLOOR_BANDWIDTH: configs of one layer differ by
factors, and a relative error is what choosing the fastest needs; dividing by the floor
takes the layers' own scale (1 us to milliseconds) out of what the trees must learn, so
they spend their splits on the configs. (Held out, averaged over 5-, 7- and 10-fold splits
of the shipped data, the mean regret fell in 5 of 6 pass-and-GPU pairs, by up to a third:
H100 fprop 5.8% -> 3.7%.) A model file is XGBoost's JSON with Spio's
metadata (pass, GPU, its limits, the kernels' version, feature names, the fastest config
measured on each training layer and a fingerprint of every config timed there) stored as a
booster attribute, so one file is the whole model.

Rows may time their tiles two ways (_data.ConfigTime.launch): as they are, or as the
launcher runs them, which adds what no config space holds (wgrad's balanced walk, producer
warps on TMA tiles). A model of rows of one way predicts that way. A model of rows of both
learns the way as a flag (_features.FLAG_FEATURES, "launched") and predicts tiles as
launched: the many rows of tiles teach it the layers and tiles, the fewer launched rows what
the launcher adds to them. In the same way a model of one GPU may learn from another GPU's
rows beside its own ("other_gpu"), and predicts its own.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from spio.kernels.conv2d_gw8.bench_results import replacing
from spio.kernels.conv2d_gw8.params import Conv2dGw8Params, check_params

from ._data import ConfigTime, by_layer
from ._features import (
    FLAG_FEATURES,
    PREDICTED_FLAGS,
    GpuLimits,
    columns_matrix,
    feature_matrix,
    feature_names,
)
from ._passes import kernel_pass
from ._space import Columns, space_columns, space_fields
from ._tree_sums import TreeSums

#: Scoring a whole config space: each stage (trees, keep) ranks the candidates left with the
#: model's first `trees` trees and keeps the `keep` best, where that keeps fewer and, before
#: the last stage, at least halves them; the whole model scores the last ones. Each stage
#: adds only its further trees to the sums the stage before left, and the heuristic's config
#: rides through the stages for choose_config's gain check (best_config_over).
#:
#: The keeps: over 946 campaign layers (seeds 11-13, 400 each, and wgrad's largest spaces)
#: per pass on both GPUs, the first 30 trees ranked at most 386 configs above the whole
#: model's pick, the first 100 at most 118. Keeping 511, then 127, picks the whole model's
#: config on all of them; the stages before (384 where more than 1536 were left, then 48)
#: missed 2 H200 wgrad layers by up to 0.48%, and 14 fprop and dgrad layers by up to 4.1%.
#: With the heuristic's row the stages score 512 and 128 rows, whole blocks of 64 (XGBoost's
#: unit of work): on two cores 300 trees took 0.40 ms on 128 rows, 0.33 on 48, 0.60 on 129.
#:
#: Cost, on two cores (the CI machine), wgrad's largest spaces (1704 configs: N x 64 x 64 x 64
#: and N x 64 x 56 x 56, 3 x 3), interleaved in one process with the code before: the first
#: call per layer (138 layers) took a median 2.2 and 2.6 ms in two runs against 2.6 and
#: 3.3 (the machine's speed drifts through a day), the same layer again 1.9-2.8 against
#: 2.4-3.7. About 1.2 ms of it is XGBoost's three calls (30 trees on 1704 rows 0.44 ms, 70
#: on 512 0.32, 300 on 128 0.45: its trees cost per block of rows, and little per row within
#: one); 0.4 ms the features (a NumPy operation on 1704 values costs about 5 us with the
#: caches cold after XGBoost). The calls skip inplace_predict's Python (_tree_sums: 0.1 ms a
#: call). On the GPU host (16 cores, an H100 machine; its cores were no faster that day):
#: 2.1 and 2.5 ms against 2.6 and 3.2; XGBoost with fewer threads there was slower.
#:
#: A stage's trees are a share of the model's (`trees` of 400: the first 30 and 100 of a
#: 400-tree model, 15 and 50 of wgrad's 200-tree ones, whose trees learn twice as fast:
#: PASS_TRAINING).
SCREEN_STAGES = ((30, 511), (100, 127))
#: The model size SCREEN_STAGES' tree counts are given for.
SCREEN_ROUNDS = 400

#: Version of the model file's metadata and targets; a file of another version is refused.
#: (3: targets relative to the layer's floor; 4: the configs timed on each training layer.)
FORMAT_VERSION = 4

#: The floor a latency is predicted relative to: FLOOR_US plus the pass's compulsory bytes at
#: FLOOR_BANDWIDTH (bytes per microsecond; 3.5 TB/s). Rough on purpose: it only has to carry
#: a layer's scale; the trees learn the rest.
FLOOR_US = 2.0
FLOOR_BANDWIDTH = 3.5e6
_META_KEY = "spio_perfmodel"
#: The names a model file may have: XGBoost writes its JSON for .json, its binary UBJSON for
#: .ubj (smaller, and ten times faster to load), and UBJSON with a warning for any other.
MODEL_SUFFIXES = (".json", ".ubj")
#: Where an XGBoost error message says it was raised: "[15:09:23] /path/to/c_api.cc:1532: ".
_XGBOOST_PREFIX = re.compile(r"^\[[0-9:]+\] \S+:[0-9]+: ")


@dataclass(frozen=True)
class TrainingOptions:
    """XGBoost settings. The defaults fit a few thousand rows in seconds on two cores."""

    rounds: int = 400
    max_depth: int = 7
    learning_rate: float = 0.06
    subsample: float = 0.85
    colsample_bytree: float = 0.85
    min_child_weight: float = 1.0
    seed: int = 0
    threads: int = 0  # 0: XGBoost's default (all cores)

    def xgboost_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {
            "objective": "reg:squarederror",
            "max_depth": self.max_depth,
            "eta": self.learning_rate,
            "subsample": self.subsample,
            "colsample_bytree": self.colsample_bytree,
            "min_child_weight": self.min_child_weight,
            "seed": self.seed,
            "tree_method": "hist",
        }
        if self.threads:
            params["nthread"] = self.threads
        return params


class LatencyModel:
    """Predicted latencies of one pass's configs on one GPU; picks the fastest config."""

    def __init__(
        self,
        booster: Any,
        pass_name: str,
        gpu: str,
        limits: GpuLimits,
        kernel: str = "",
        measured: dict[Conv2dGw8Params, Any] | None = None,
        timed: dict[Conv2dGw8Params, frozenset[str]] | None = None,
        launch: str = "tile",
        flags: Sequence[str] = (),
    ) -> None:
        self._booster = booster
        self._tree_sums = TreeSums(booster)
        self._rounds = booster.num_boosted_rounds()
        self.pass_name = kernel_pass(pass_name).name
        self.gpu = gpu
        self.limits = limits
        #: The version of the kernels its rows timed (sources_digest; "" when unknown): a
        #: model describes that version only.
        self.kernel = kernel
        #: The fastest config measured on each layer it was trained on (as `launch` where a
        #: config was timed so, _measured_rows).
        self.measured = dict(measured or {})
        #: The fingerprints (config_fingerprint) of the configs timed on each training layer.
        self.timed = dict(timed or {})
        #: How the tiles it predicts run ("tile" or "launcher", _data.ConfigTime.launch):
        #: with "tile", the launcher's placements (wgrad's producer warps) never reached it.
        self.launch = launch
        #: Its flag columns (_features.FLAG_FEATURES): "launched" where it learned from rows
        #: of both launches (it predicts launched tiles: launch is "launcher"), "other_gpu"
        #: where it learned from other GPUs' rows beside its own.
        self.flags = tuple(flag for flag in FLAG_FEATURES if flag in flags)
        if "launched" in self.flags and launch != "launcher":
            raise ValueError(
                "a model with the launch as a feature predicts launched tiles; got launch "
                f"{launch!r}"
            )

    def measured_config(self, params: Conv2dGw8Params) -> Any | None:
        """The fastest config measured on params when it was a training layer, else None."""
        return self.measured.get(params)

    def was_timed(self, params: Conv2dGw8Params, config: Any) -> bool:
        """Whether config's tile was among the configs timed on the training layer params
        (False where params was no training layer)."""
        return config_fingerprint(config) in self.timed.get(params, ())

    @classmethod
    def train(
        cls,
        rows: Sequence[ConfigTime],
        limits: GpuLimits | None = None,
        options: TrainingOptions | None = None,
        gpu: str | None = None,
    ) -> LatencyModel:
        """Fit a model to rows, all of one pass, for the GPU `gpu` (None: the rows' one GPU).

        Rows of both launches ("tile" and "launcher") make a model with the launch as a
        flag, which predicts tiles as launched; rows of other GPUs than `gpu` beside its
        own, a model with the GPU as a flag, which predicts `gpu`'s (the module doc). limits
        are those of `gpu`. The rows' order does not matter: the same rows in any order
        train the same model.

        Raises:
            ValueError: no rows, rows of several passes or kernel versions (a model is per
                pass, of one version of the kernels: select them first, LatencyTable.select),
                of several GPUs without `gpu`, or none of `gpu`.
        """
        import xgboost

        if not rows:
            raise ValueError("no rows to train on")
        passes = {row.pass_name for row in rows}
        if len(passes) > 1:
            raise ValueError(f"a model is trained on one pass; rows have passes {sorted(passes)}")
        gpus = {row.gpu for row in rows}
        if gpu is None and len(gpus) > 1:
            raise ValueError(
                f"rows have GPUs {sorted(gpus)}: name the model's (gpu=...); the others' rows "
                "are then learned from with a flag"
            )
        gpu = gpu if gpu is not None else next(iter(gpus))
        if gpu not in gpus:
            raise ValueError(f"no rows of the GPU {gpu!r}; rows have GPUs {sorted(gpus)}")
        kernels = {row.kernel for row in rows}
        if len(kernels) > 1:
            named = sorted(kernel or "(unknown)" for kernel in kernels)
            raise ValueError(
                f"rows were timed with {len(kernels)} versions of the kernels {named}; train on "
                "one (LatencyTable.select(..., kernel=...))"
            )
        # XGBoost's row and column samples follow the row order: in a canonical order the
        # model depends on the rows alone, not on the order of the files they came from
        # (in another order, about half of a model's picks move among near-equal tiles).
        rows = sorted(rows, key=row_order)
        launches = {row.launch for row in rows}
        differs = {"launched": len(launches) > 1, "other_gpu": len(gpus) > 1}
        flags = tuple(flag for flag in FLAG_FEATURES if differs[flag])
        launch = "launcher" if "launcher" in launches else "tile"
        pass_name, kernel = passes.pop(), kernels.pop()
        limits = limits or GpuLimits()
        features, targets = _training_arrays(rows, pass_name, limits, flags, gpu)
        matrix = xgboost.DMatrix(
            features, label=targets, feature_names=list(feature_names(pass_name, flags))
        )
        options = options or training_options(pass_name)
        booster = xgboost.train(options.xgboost_params(), matrix, num_boost_round=options.rounds)
        # What was measured on a layer is kept from its rows of the model's GPU
        # (_measured_rows): a layer timed only on another GPU is no measurement.
        layers = {
            layer: _measured_rows(layer_rows, launch)
            for layer, layer_rows in by_layer(row for row in rows if row.gpu == gpu).items()
        }
        measured = {layer: _fastest(layer_rows) for layer, layer_rows in layers.items()}
        timed = {
            layer: frozenset(config_fingerprint(row.config) for row in layer_rows)
            for layer, layer_rows in layers.items()
        }
        return cls(booster, pass_name, gpu, limits, kernel, measured, timed, launch, flags)

    def predict_us(self, params: Conv2dGw8Params, configs: Sequence[Any]) -> np.ndarray:
        """Predicted latency in microseconds of each config on the layer params. TypeError for
        params that are no Conv2dGw8Params, or a config of another pass's type."""
        check_params(params)
        self._check_configs(configs)
        if not configs:
            return np.zeros(0)
        features = feature_matrix(self.pass_name, params, configs, self.limits, self._flags)
        margins = self._tree_sums(features, 0, self._rounds)
        return np.exp(margins) * floor_us(params, self.pass_name)

    def best_config(self, params: Conv2dGw8Params, configs: Sequence[Any] | None = None) -> Any:
        """The config with the lowest predicted latency on params: among configs, else the
        pass's whole config space for params (scored as arrays, _space). ValueError where
        there is none; TypeError as predict_us."""
        check_params(params)
        if configs is not None:
            if not configs:
                raise ValueError(f"no {self.pass_name} config fits {params}")
            return configs[int(np.argmin(self.predict_us(params, configs)))]
        space, features = self._space_features(params)
        kept, margins = self._screened_margins(features)
        return space.config(int(kept[np.argmin(margins)]))

    def best_config_over(self, params: Conv2dGw8Params, baseline: Any) -> tuple[Any, float]:
        """best_config(params) from the whole space, and how much faster the model predicts
        it than the config `baseline` (0.1: 10%; inf where they are the same config).

        One scoring does both: the baseline's row (the space's own where the space holds it,
        as the heuristic's config always is) rides through the screens beside the others, so
        the whole model scores it in the same call as the last candidates (a call of its own
        cost as much as the choice's last stage, 0.5 ms, on two cores). TypeError as
        predict_us."""
        check_params(params)
        self._check_configs([baseline])
        space, features = self._space_features(params)
        row = space.index_of(baseline)
        if row is None:
            row = len(features)
            baseline_row = feature_matrix(
                self.pass_name, params, [baseline], self.limits, self._flags
            )
            features = np.concatenate([features, baseline_row])
        kept, margins = self._screened_margins(features, always=row)
        # The baseline's own margin: the pick is the lowest of the space's rows only.
        at_baseline = int(np.flatnonzero(kept == row)[0])
        candidates = kept < len(space)
        best = int(np.argmin(np.where(candidates, margins, np.inf)))
        pick = space.config(int(kept[best]))
        if pick == baseline:
            return pick, float("inf")
        # Margins are log(latency / floor): the ratio of latencies is exp of their difference.
        return pick, float(np.exp(margins[at_baseline] - margins[best]) - 1)

    def top_configs(self, params: Conv2dGw8Params, count: int) -> list[Any]:
        """The `count` configs of the pass's whole space for params with the lowest predicted
        latency, lowest first (all of them where the space is smaller; the first is
        best_config's). The whole model scores every config (no screening: a screen keeps the
        best pick, not necessarily the next ones). ValueError where no config fits or count
        is not an int >= 1; TypeError for params that are no Conv2dGw8Params."""
        check_params(params)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"count must be an int >= 1, got {count!r}")
        space, features = self._space_features(params)
        predicted = self._tree_sums(features, 0, self._rounds)
        return [space.config(int(row)) for row in np.argsort(predicted, kind="stable")[:count]]

    def _space_features(self, params: Conv2dGw8Params) -> tuple[Columns, np.ndarray]:
        """The pass's whole space for params and its feature rows; ValueError where no config
        fits."""
        space = space_columns(self.pass_name, params)
        if len(space) == 0:
            raise ValueError(f"no {self.pass_name} config fits {params}")
        return space, columns_matrix(self.pass_name, params, space, self.limits, self._flags)

    def _check_configs(self, configs: Sequence[Any]) -> None:
        """TypeError unless every config is of the model's pass's config type (whose fields
        its features read)."""
        config_type = kernel_pass(self.pass_name).config_type
        for config in configs:
            if not isinstance(config, config_type):
                raise TypeError(
                    f"a {self.pass_name} model scores {config_type.__name__}s, got "
                    f"{type(config).__name__}: {config!r}"
                )

    @property
    def _flags(self) -> dict[str, float]:
        """The value of each of its flag columns when it predicts (PREDICTED_FLAGS)."""
        return {flag: PREDICTED_FLAGS[flag] for flag in self.flags}

    def _screened_margins(
        self, features: np.ndarray, always: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The rows of features left after the screens (SCREEN_STAGES, where the rows and the
        model are large enough for them to pay), with the whole model's margins for them.
        Row `always` is kept through every screen.

        Each stage adds only its further trees to the margins the stage before it left
        (a base margin), so no tree scores a row twice; the sums equal the whole model's to
        the bit."""
        kept = np.arange(len(features))
        rows = features  # features[kept]
        margins: np.ndarray | None = None
        scored = 0  # the trees already summed into margins
        for stage, (reference_trees, keep) in enumerate(SCREEN_STAGES):
            trees = max(1, round(reference_trees * self._rounds / SCREEN_ROUNDS))
            if not self._screen_pays(len(kept), trees, keep, stage == len(SCREEN_STAGES) - 1):
                continue
            margins = self._tree_sums(rows, scored, trees, margins)
            scored = trees
            best = np.argpartition(margins, keep - 1)[:keep]
            if always is not None and not np.any(kept[best] == always):
                best = np.append(best, int(np.flatnonzero(kept == always)[0]))
            kept, margins = kept[best], margins[best]
            rows = features[kept]
        return kept, self._tree_sums(rows, scored, self._rounds, margins)

    def _screen_pays(self, candidates: int, trees: int, keep: int, last: bool) -> bool:
        """Whether a stage of SCREEN_STAGES runs on this many candidates: where it keeps
        fewer and the model has more trees, and, before the last stage, where it at least
        halves them (about where it pays: 30 trees on 1024 rows cost what the next stage's
        70 more trees would on the 512 it drops)."""
        if candidates <= keep or self._rounds <= trees:
            return False
        return last or candidates > 2 * keep

    def save(self, path: str | Path) -> Path:
        """Write the model to path: XGBoost's JSON where the name ends in .json, its binary
        UBJSON where it ends in .ubj (smaller, and ten times faster to load). The file is
        replaced whole: a save cut off leaves the file there before, never a part of one.

        Raises:
            ValueError: path is no place for a model file (check_model_path), or XGBoost
                could not write it (its message's first line).
        """
        path = check_model_path(path)
        meta = {
            "format": FORMAT_VERSION,
            "pass": self.pass_name,
            "gpu": self.gpu,
            "limits": dataclasses.asdict(self.limits),
            "kernel": self.kernel,
            "measured": [
                [dataclasses.asdict(layer), dataclasses.asdict(config)]
                for layer, config in self.measured.items()
            ],
            "timed": [
                [dataclasses.asdict(layer), sorted(fingerprints)]
                for layer, fingerprints in self.timed.items()
            ],
            "features": list(feature_names(self.pass_name, self.flags)),
            "launch": self.launch,
        }
        self._booster.set_attr(**{_META_KEY: json.dumps(meta)})
        import xgboost

        try:
            with replacing(path) as temporary:
                self._booster.save_model(str(temporary))
        except xgboost.core.XGBoostError as error:
            raise ValueError(f"{path}: {_first_line(str(error))}") from None
        return path

    @classmethod
    def load(cls, path: str | Path) -> LatencyModel:
        """Read a model written by save.

        Raises:
            FileNotFoundError: nothing at path.
            ValueError: a directory at path, not a Spio latency model, another format
                version, GPU limits out of range, or features that differ from this
                version's for its pass (retrain it).
        """
        import xgboost

        path = Path(path)
        if path.is_dir():
            raise ValueError(f"{path} is a directory, not a latency model file")
        if not path.is_file():
            raise FileNotFoundError(f"no latency model at {path}")
        booster = xgboost.Booster()
        try:
            booster.load_model(str(path))
        except xgboost.core.XGBoostError as error:
            # Its message's first line says what is wrong; the native backtrace after it
            # says only where in libxgboost.
            raise ValueError(
                f"{path} is not an XGBoost model file: {_first_line(str(error))}"
            ) from None
        except UnicodeDecodeError:
            # XGBoost decodes its own message, which quotes the file's bytes.
            raise ValueError(f"{path} is not an XGBoost model file") from None
        text = booster.attr(_META_KEY)
        if text is None:
            raise ValueError(f"{path} is an XGBoost model without Spio's metadata")
        meta = json.loads(text)
        if meta.get("format") != FORMAT_VERSION:
            raise ValueError(
                f"{path} has model format {meta.get('format')!r}; this spio-perfmodel reads "
                f"format {FORMAT_VERSION}"
            )
        try:
            pass_name = meta["pass"]
            # The flag columns follow the pass's features: a file's names are one of these.
            flags = tuple(flag for flag in FLAG_FEATURES if flag in meta["features"])
            if tuple(meta["features"]) != feature_names(pass_name, flags):
                raise ValueError(
                    f"{path} was trained on other features than this spio-perfmodel computes for "
                    f"{pass_name}; retrain it"
                )
            config_type = kernel_pass(pass_name).config_type
            measured = {
                _layer_from_dict(layer): config_type(**config) for layer, config in meta["measured"]
            }
            timed = {
                _layer_from_dict(layer): frozenset(fingerprints)
                for layer, fingerprints in meta["timed"]
            }
            try:
                limits = GpuLimits(**meta["limits"])
            except ValueError as error:
                raise ValueError(f"{path} holds GPU limits out of range: {error}") from None
            # (Files from before the launch key were all trained on tiles.)
            launch = meta.get("launch", "tile")
            return cls(
                booster,
                pass_name,
                meta["gpu"],
                limits,
                meta["kernel"],
                measured,
                timed,
                launch,
                flags,
            )
        except (KeyError, TypeError) as error:
            # A key missing, or a config this version's dataclasses do not take.
            raise ValueError(
                f"{path} has Spio metadata this spio-perfmodel cannot read "
                f"({type(error).__name__}: {error}); train the model again"
            ) from None


#: Training settings of the passes whose models differ from TrainingOptions' defaults. wgrad:
#: half the trees at twice the learning rate, so that choosing among its largest spaces
#: (1704 configs) costs less. Held out (six layer folds, seeds 0-2 of the training, all rows
#: of each GPU; model / chosen / tuned p95 regret): H200 14.9-17.8% / 14.4-16.7% / 3.5-4.6%
#: against 14.4-16.5% / 16.4-16.7% / 3.5-3.7% with 400 trees at 0.06; H100 16.6-20.6% /
#: 13.2-17.2% / 4.1-4.3% against 14.1-23.4% / 15.9-20.2% / 2.5-3.5%; medians 0.0-1.7% both
#: ways. fprop's held-out p95 got worse the same way (H200 chosen 12.0-15.8% against
#: 10.6-11.2%), so fprop and dgrad keep the defaults.
PASS_TRAINING: dict[str, TrainingOptions] = {
    "wgrad": TrainingOptions(rounds=200, learning_rate=0.12),
}


def check_model_path(path: str | Path) -> Path:
    """path as a Path where save can write a model: a name ending in one of MODEL_SUFFIXES,
    in a directory that exists, and no directory itself. ValueError naming path and what
    is wrong, so a command can refuse it before minutes of training."""
    path = Path(path)
    if path.suffix not in MODEL_SUFFIXES:
        given = repr(path.suffix) if path.suffix else "no suffix"
        raise ValueError(
            f"{path}: a model file's name ends in .json (XGBoost's JSON) or .ubj (its binary "
            f"UBJSON), got {given}"
        )
    if path.is_dir():
        raise ValueError(f"{path}: is a directory; give the name of the model file to write")
    parent = path.parent
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else "does not exist"
        raise ValueError(f"{path}: directory {parent} {what}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{path}: directory {parent} is not writable")
    return path


def _first_line(message: str) -> str:
    """The first line of an XGBoost error message, without its "[hh:mm:ss] file:line: "."""
    first = message.strip().partition("\n")[0]
    return _XGBOOST_PREFIX.sub("", first)


def training_options(pass_name: str) -> TrainingOptions:
    """The XGBoost settings pass_name's models are trained with (PASS_TRAINING, else the
    defaults)."""
    return PASS_TRAINING.get(kernel_pass(pass_name).name, TrainingOptions())


def _measured_rows(rows: Sequence[ConfigTime], launch: str) -> list[ConfigTime]:
    """The rows of one layer whose fastest config a model of `launch` takes as measured there:
    each config's rows timed the way the model predicts, or as a tile where it was timed only
    so.

    A config's tile time stands in well for its launched time (H100, 58 fprop configs timed
    both ways: tile over launched 1.003 in geometric mean, 0.976-1.033 from the 5th to the
    95th percentile), and launched campaigns time a sample of a layer's space, often narrowed
    (`collect --where`), where its tile campaigns may have timed all of it. Taking launched
    rows alone lost the tiles' fastest: 32x64x64x64 dgrad ran 10.71 us with the fastest of a
    campaign narrowed to 32-column tiles, 9.54 with the tiles' fastest (H100, 2026-12-06).
    """
    if launch == "tile":
        return [row for row in rows if row.launch == "tile"]
    launched = {row.config for row in rows if row.launch == launch}
    return [row for row in rows if row.launch == launch or row.config not in launched]


def _fastest(rows: Sequence[ConfigTime]) -> Any:
    """The config of rows with the lowest mean time (a config timed in several campaigns
    counts once, at its mean: the minimum of repeats would favour a lucky one)."""
    times: dict[Any, list[float]] = {}
    for row in rows:
        times.setdefault(row.config, []).append(row.median_us)
    return min(times, key=lambda config: sum(times[config]) / len(times[config]))


def row_order(row: ConfigTime) -> tuple[Any, ...]:
    """A sort key that orders any rows the same way whatever order they came in: the layer,
    GPU, launch and timing, then the config and its time."""
    return (
        dataclasses.astuple(row.params),
        row.gpu,
        row.launch,
        row.timing,
        repr(row.config),
        row.median_us,
    )


def config_fingerprint(config: Any) -> str:
    """Eight hex digits that name config's tile: a CRC-32 of its space fields and their values
    (placement fields left out, as the configs a model trains on have them at their
    defaults). What a model keeps of every config timed on a training layer: a few bytes
    each, where whole configs would grow a wgrad model by a third."""
    fields = space_fields(type(config))
    text = ",".join(f"{name}={getattr(config, name)!r}" for name in fields)
    return f"{zlib.crc32(text.encode()):08x}"


def _layer_from_dict(fields: dict[str, Any]) -> Conv2dGw8Params:
    """A layer from dataclasses.asdict's dict (JSON made its padding a list)."""
    return Conv2dGw8Params(**{**fields, "padding": tuple(fields["padding"])})


def floor_us(params: Conv2dGw8Params, pass_name: str) -> float:
    """The layer's floor the model's targets are relative to (FLOOR_US, FLOOR_BANDWIDTH)."""
    return FLOOR_US + params.compulsory_bytes(pass_name) / FLOOR_BANDWIDTH  # type: ignore[arg-type]


def _training_arrays(
    rows: Sequence[ConfigTime],
    pass_name: str,
    limits: GpuLimits,
    flags: Sequence[str] = (),
    gpu: str = "",
) -> tuple[np.ndarray, np.ndarray]:
    """Features and log latencies over the layer's floor of rows, built a layer at a time,
    with the flag columns among flags set from each row (its launch; its GPU against gpu)."""
    blocks = []
    targets = []
    for params, layer_rows in by_layer(rows).items():
        configs = [row.config for row in layer_rows]
        features = feature_matrix(pass_name, params, configs, limits, dict.fromkeys(flags, 0.0))
        row_flags = {
            "launched": [row.launch == "launcher" for row in layer_rows],
            "other_gpu": [row.gpu != gpu for row in layer_rows],
        }
        first_flag = features.shape[1] - len(flags)
        for i, flag in enumerate(flag for flag in FLAG_FEATURES if flag in flags):
            features[:, first_flag + i] = row_flags[flag]
        blocks.append(features)
        times = np.array([row.median_us for row in layer_rows])
        targets.append(np.log(times / floor_us(params, pass_name)))
    return np.concatenate(blocks), np.concatenate(targets)
