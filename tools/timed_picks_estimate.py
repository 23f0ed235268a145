"""Estimate candidate latency models on the CPU, from layers a GPU check already timed.

    uv run python tools/timed_picks_estimate.py --gpu "NVIDIA H100 80GB HBM3" \
        --compare docs/assets/benchmarks/h100_compare_s89_*.csv \
        --model fprop=candidate_fprop.ubj dgrad=candidate_dgrad.ubj

Each row of a `spio-perfmodel compare --model` run (tools/gpu-candidate-check.sh) holds the
times of three configs of one layer and pass: the heuristic's, the shipped model's pick and
the candidate's, each as the launcher placed it. Another candidate often picks one of those
three. This script makes each candidate's picks on a stand-in of --gpu
(selection_time.stand_in: no GPU and no compiles) and places them in even row chunks, as
the launcher does. Where a pick is one of the row's three configs, its time is known. The
estimate is the geometric mean of shipped time over pick time on those rows; the script
also counts the picks it cannot time, which only the GPU can judge. A row counts only where
the stand-in makes the row's shipped pick. The stand-in never walks the heuristic's
segments, since deciding them needs the GPU's occupancy, so such rows are skipped.
fprop and dgrad only: wgrad's placement compiles its kernels.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from selection_time import GPUS, stand_in

from spio.kernels.conv2d_gw8.params import Conv2dGw8Params

# Bound before stand_in replaces placement.placed_config_on with the identity (for
# choose_config, which then scores tiles without compiling): fprop's and dgrad's placement
# compiles nothing, and the picks here are compared as the launcher placed them.
from spio.kernels.conv2d_gw8.placement import placed_config_on
from spio.perfmodel import _select
from spio.perfmodel._compare import Comparison, geometric_mean, read_csv
from spio.perfmodel._model import LatencyModel

#: The passes whose placement needs no GPU (placement.placed_config_on: even chunks).
ESTIMATED_PASSES = ("fprop", "dgrad")
#: What placed_pick gives for a choice the heuristic made: the row's heuristic column holds
#: its time whatever its placement (segments included).
HEURISTIC = "heuristic"


@dataclass
class PassEstimate:
    """One pass's rows: how many were used and skipped, and the candidate's picks on them."""

    pass_name: str
    used: int = 0
    skipped: int = 0
    changed: int = 0
    #: shipped time / candidate pick time, for every used row whose pick was timed.
    ratios: list[float] = field(default_factory=list)
    #: The used rows whose pick no row timed: (layer, placed config).
    untimed: list[tuple[Conv2dGw8Params, str]] = field(default_factory=list)

    def summary(self) -> str:
        timed = len(self.ratios)
        line = (
            f"{self.pass_name}: {self.used} rows ({self.skipped} skipped: the stand-in does "
            f"not make their shipped pick); the candidate changes {self.changed} picks; "
            f"{timed} of {self.used} picks timed"
        )
        if timed:
            line += f", over the shipped picks {geometric_mean(self.ratios):.3f}x"
        return line


def placed_pick(pass_name: str, params: Conv2dGw8Params, model: LatencyModel | None) -> str:
    """The config choose_config picks for params (with model, else the shipped models) as the
    launcher places it, as the text a compare CSV holds; HEURISTIC where the heuristic chose."""
    choice = _select.choose_config(pass_name, params, model=model)
    if choice.source == "heuristic":  # (ConfigChoice.source, not the pick's text)
        return HEURISTIC
    return str(placed_config_on(pass_name, params, choice.config))


def _same(pick: str, config: str | None, row: Comparison) -> bool:
    """Whether pick (placed_pick's text) is the config a row's column holds."""
    return pick == config or (pick == HEURISTIC and config == row.heuristic)


def _timed(pick: str, row: Comparison) -> float | None:
    """The row's time of pick, where one of its three columns holds it."""
    for config, us in (
        (row.heuristic, row.heuristic_us),
        (row.shipped, row.shipped_us),
        (row.chosen, row.chosen_us),
    ):
        if _same(pick, config, row):
            return us
    return None


def estimate(
    comparisons: Iterable[Comparison], models: Mapping[str, LatencyModel]
) -> list[PassEstimate]:
    """Each model's estimate over the rows of its pass (models: pass name -> candidate)."""
    estimates = {name: PassEstimate(name) for name in models}
    _select._choose_shipped.cache_clear()  # (choices memoised before the stand-in)
    for row in comparisons:
        result = estimates.get(row.pass_name)
        if result is None or row.shipped is None or row.shipped_us is None:
            continue  # another pass, or a run without a candidate (no shipped column)
        if not _same(placed_pick(row.pass_name, row.params, None), row.shipped, row):
            result.skipped += 1
            continue
        result.used += 1
        pick = placed_pick(row.pass_name, row.params, models[row.pass_name])
        result.changed += not _same(pick, row.shipped, row)
        us = _timed(pick, row)
        if us is None:
            result.untimed.append((row.params, pick))
        else:
            result.ratios.append(row.shipped_us / us)
    return list(estimates.values())


def _models(specs: Sequence[str]) -> dict[str, LatencyModel]:
    """--model's PASS=PATH items loaded; ValueError naming the item that is wrong."""
    models: dict[str, LatencyModel] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not path:
            raise ValueError(f"--model takes PASS=PATH, got {spec!r}")
        if name not in ESTIMATED_PASSES:
            raise ValueError(
                f"--model's pass must be one of {', '.join(ESTIMATED_PASSES)} (wgrad's "
                f"placement compiles its kernels), got {name!r} in {spec!r}"
            )
        if name in models:
            raise ValueError(f"--model names {name} twice")
        model = LatencyModel.load(path)
        if model.pass_name != name:
            raise ValueError(f"--model {spec!r}: {path} is a {model.pass_name} model")
        models[name] = model
    return models


def main(
    argv: list[str] | None = None, patch: Callable[[object, str, object], None] = setattr
) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpu", choices=sorted(GPUS), required=True)
    parser.add_argument("--compare", nargs="+", required=True, help="compare --out CSVs")
    parser.add_argument("--model", nargs="+", required=True, help="PASS=PATH, fprop or dgrad")
    parser.add_argument("--untimed", action="store_true", help="list the untimed picks")
    args = parser.parse_args(argv)
    try:
        models = _models(args.model)
        comparisons = read_csv(args.compare)
    except (OSError, ValueError) as error:
        parser.error(str(error))
    stand_in(args.gpu, patch)
    for result in estimate(comparisons, models):
        print(result.summary())
        if args.untimed:
            for params, pick in result.untimed:
                print(f"  untimed: {params} {pick}")


if __name__ == "__main__":
    main()
