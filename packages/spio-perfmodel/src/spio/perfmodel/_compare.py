"""The end-to-end check of config selection on a GPU: the config choose_config picks against
the heuristic's, both timed in one process on the same buffers, with cuDNN beside them.

Held-out regret (_evaluate) measures the model on the configs a campaign timed; here it
chooses from each pass's whole space, as it does in use, on layers it has not seen. The two
configs are timed alternately (heuristic, model, heuristic, model) and each gets the mean
of its two medians, so drift in the GPU's clocks falls on both.

A model of your own (a candidate before it ships) chooses in the shipped one's place; the
shipped model's choice is then timed in the same rounds as a third contender, so the
candidate is measured against what runs today in one process. So it is under another
selection mode (SPIO_CONFIG_SELECTION or set_selection_mode "autotune" or "heuristic"): the
mode's choices against the shipped models' (mode "model").
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spio.kernels.conv2d_gw8.bench_results import replacing
from spio.kernels.conv2d_gw8.params import Conv2dGw8Params

from ._data import layer_key, parse_layer_key
from ._model import LatencyModel
from ._passes import PASSES
from ._select import choose_config, heuristic_config
from ._selection_mode import selection_mode

#: Each config's median is timed this many times, alternating with the other config's.
ROUNDS = 2


@dataclass(frozen=True)
class Comparison:
    """One layer's pass: the heuristic's config and time, the chosen config and time, and
    cuDNN's time, all microseconds of GPU time per call."""

    params: Conv2dGw8Params
    pass_name: str
    heuristic: Any
    chosen: Any
    source: str
    heuristic_us: float
    chosen_us: float
    cudnn_us: float
    #: Where a model of your own or another selection mode chose: the shipped models' choice
    #: (mode "model") and its time.
    shipped: Any = None
    shipped_us: float | None = None

    @property
    def speedup(self) -> float:
        """heuristic time / chosen time: above 1 where the chosen config is faster."""
        return self.heuristic_us / self.chosen_us

    @property
    def speedup_over_shipped(self) -> float | None:
        """shipped choice's time / chosen time, where a model of your own or another selection
        mode chose."""
        return None if self.shipped_us is None else self.shipped_us / self.chosen_us


def compare(
    layers: Sequence[Conv2dGw8Params],
    passes: Sequence[str],
    graph: bool = True,
    launches: int = 20,
    repetitions: int = 9,
    models: Mapping[str, LatencyModel] | None = None,
) -> list[Comparison]:
    """Time the heuristic's and choose_config's configs of each layer's passes (GPU 0).

    Needs a GPU, torch and the benchmark's dependencies (spio-kernels[bench]). graph times
    replays of CUDA graphs (the GPU's time, as the benchmark's --cuda-graph). models: by
    pass, a model of your own that chooses instead of the shipped one (a candidate to check
    before it ships; choose_config's `model`). Where one chooses, or the selection mode is
    not "model", the shipped models' choice is timed too.
    """
    models = models or {}
    from spio.kernels.conv2d_gw8 import bench

    other_mode = selection_mode() != "model"

    results = []
    for params in layers:
        picks = {}
        for pass_name in passes:
            model = models.get(pass_name)
            choice = choose_config(pass_name, params, model=model)
            shipped = None
            if model is not None or other_mode:
                shipped = choose_config(pass_name, params, mode="model").config
            heuristic = heuristic_config(pass_name, params)
            picks[pass_name] = (heuristic, choice.config, choice.source, shipped)
        contenders: dict[str, Sequence[Any]] = {
            name: [c for c in dict.fromkeys((heuristic, chosen, shipped)) if c is not None]
            for name, (heuristic, chosen, _, shipped) in picks.items()
        }
        bench.precompile(params, contenders)
        buffers = bench.Buffers(params, passes, contenders)
        for pass_name, (heuristic, chosen, source, shipped) in picks.items():
            times: dict[Any, list[float]] = {config: [] for config in contenders[pass_name]}
            cudnn = []
            for _ in range(ROUNDS):
                for config in contenders[pass_name]:
                    spio_us, cudnn_us = bench.bench_pass(
                        pass_name, params, [config], buffers, launches, repetitions, graph=graph
                    )
                    times[config].append(spio_us[config])
                    cudnn.append(cudnn_us)
            mean = {config: sum(values) / len(values) for config, values in times.items()}
            results.append(
                Comparison(
                    params,
                    pass_name,
                    heuristic,
                    chosen,
                    source,
                    mean[heuristic],
                    mean[chosen],
                    sum(cudnn) / len(cudnn),
                    shipped,
                    None if shipped is None else mean[shipped],
                )
            )
    return results


#: The columns write_csv writes, in order.
CSV_COLUMNS = (
    "layer", "pass", "heuristic", "chosen", "source", "heuristic_us", "chosen_us", "cudnn_us",
    "shipped", "shipped_us",
)  # fmt: skip
#: The columns of the files compare wrote before the shipped choice was timed beside the
#: others: read as rows without one.
_CSV_COLUMNS_BEFORE_SHIPPED = CSV_COLUMNS[:-2]


#: Resamples of the layers for the interval of a geometric-mean speed-up, and its coverage.
BOOTSTRAP_ROUNDS = 2000
INTERVAL = 0.95
#: A layer counts as faster or slower by more than this (timing noise between processes on
#: small layers is a few percent).
CLEAR_CHANGE = 0.03


def geometric_mean(values: Iterable[float]) -> float:
    logs = [math.log(value) for value in values]
    return math.exp(sum(logs) / len(logs)) if logs else float("nan")


def total_time_speedup(pairs: Iterable[tuple[float, float]]) -> float:
    """The summed times before over the summed times after, of (before, after) pairs in
    microseconds: above 1 where the layers together take less time after. nan for none."""
    before = after = 0.0
    for was, now in pairs:
        before += was
        after += now
    return before / after if after else float("nan")


def geometric_mean_interval(values: Sequence[float], seed: int = 0) -> tuple[float, float]:
    """The INTERVAL bootstrap interval of the geometric mean of values over the layers (the
    layers resampled with replacement BOOTSTRAP_ROUNDS times, seeded): how far the mean of
    another draw of as many layers could fall. An interval that holds 1.0 shows no change.
    ValueError for no values."""
    import numpy as np

    if not values:
        raise ValueError("no values to take the geometric mean of")
    logs = np.log(np.asarray(values, dtype=np.float64))
    draws = np.random.default_rng(seed).integers(0, len(logs), (BOOTSTRAP_ROUNDS, len(logs)))
    means = np.exp(logs[draws].mean(axis=1))
    tail = 100 * (1 - INTERVAL) / 2
    return float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))


def report(comparisons: Sequence[Comparison]) -> str:
    """A table of the comparisons and, per pass, the geometric-mean speed-up of the chosen
    configs over the heuristic's and over cuDNN (and over the shipped models' choices, where
    a model of your own chose). Beside each geometric mean, which gives every layer the same
    say, the speed-up in total time (total_time_speedup), which weighs them as a network's
    step does: picks 10% faster on a 2 us layer and 5% slower on a 180 us one are ahead in
    geometric mean and behind in total time."""
    with_shipped = any(row.shipped_us is not None for row in comparisons)
    shipped_header = f" {'shipped us':>10} {'over it':>8}" if with_shipped else ""
    lines = [
        f"{'layer':>32} {'pass':>5} {'heuristic us':>12} {'chosen us':>9} {'speed-up':>8} "
        f"{'cuDNN us':>8} {'by':>9}{shipped_header}"
    ]
    for row in comparisons:
        shipped = ""
        if row.shipped_us is not None:
            shipped = f" {row.shipped_us:>10.2f} {row.speedup_over_shipped:>7.3f}x"
        lines.append(
            f"{layer_key(row.params):>32} {row.pass_name:>5} {row.heuristic_us:>12.2f} "
            f"{row.chosen_us:>9.2f} {row.speedup:>7.3f}x {row.cudnn_us:>8.2f} {row.source:>9}"
            f"{shipped}"
        )
    for pass_name in dict.fromkeys(row.pass_name for row in comparisons):
        rows = [row for row in comparisons if row.pass_name == pass_name]
        worst = min(rows, key=lambda row: row.speedup)
        lines.append(
            f"{pass_name}: chosen over heuristic {geometric_mean(r.speedup for r in rows):.3f}x "
            f"(geometric mean of {len(rows)} layers; worst {worst.speedup:.3f}x on "
            f"{layer_key(worst.params)}; "
            f"{total_time_speedup([(r.heuristic_us, r.chosen_us) for r in rows]):.3f}x in total "
            f"time), chosen over cuDNN "
            f"{geometric_mean(r.cudnn_us / r.chosen_us for r in rows):.2f}x, heuristic over "
            f"cuDNN {geometric_mean(r.cudnn_us / r.heuristic_us for r in rows):.2f}x"
        )
        against = [(r, r.speedup_over_shipped) for r in rows if r.speedup_over_shipped]
        if against:
            low, low_speedup = min(against, key=lambda pair: pair[1])
            speedups = [speedup for _, speedup in against]
            bottom, top = geometric_mean_interval(speedups)
            faster = sum(speedup > 1 + CLEAR_CHANGE for speedup in speedups)
            slower = sum(speedup < 1 / (1 + CLEAR_CHANGE) for speedup in speedups)
            shipped_pairs = [
                (r.shipped_us, r.chosen_us) for r, _ in against if r.shipped_us is not None
            ]
            lines.append(
                f"{pass_name}: chosen over the shipped model's choice "
                f"{geometric_mean(speedups):.3f}x (geometric mean of {len(against)} layers, "
                f"{INTERVAL:.0%} bootstrap interval {bottom:.3f}-{top:.3f}x; {faster} faster and "
                f"{slower} slower by more than {CLEAR_CHANGE:.0%}; worst {low_speedup:.3f}x on "
                f"{layer_key(low.params)}; "
                f"{total_time_speedup(shipped_pairs):.3f}x "
                f"in total time)"
            )
    return "\n".join(lines)


def write_csv(comparisons: Sequence[Comparison], path: str | Path) -> Path:
    """Write one row per comparison: the layer, the pass, both configs, the times (the file
    replaced whole)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with replacing(path) as temporary, temporary.open("w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(CSV_COLUMNS)
        for row in comparisons:
            shipped_us = "" if row.shipped_us is None else f"{row.shipped_us:.3f}"
            writer.writerow(
                [layer_key(row.params), row.pass_name, row.heuristic, row.chosen, row.source,
                 f"{row.heuristic_us:.3f}", f"{row.chosen_us:.3f}", f"{row.cudnn_us:.3f}",
                 "" if row.shipped is None else row.shipped, shipped_us]
            )  # fmt: skip
    return path


def read_csv(paths: Iterable[str | Path]) -> list[Comparison]:
    """The comparisons write_csv wrote to paths, in order: several runs' layers pooled for one
    report (compare times one filter size per run; its verdict is over all of them). Configs
    come back as the text the CSV holds. Files of before the shipped choice's columns read
    as rows without one.

    Raises:
        OSError: a path that cannot be read (missing, a directory).
        ValueError: naming the file and line, for a file of other columns or no rows, or a
            row that names no layer or pass, or holds a time that is not a positive finite
            number.
    """
    comparisons: list[Comparison] = []
    for path in paths:
        # (utf-8-sig: a file a spreadsheet saved starts with a byte-order mark.)
        with Path(path).open(newline="", encoding="utf-8-sig") as file:
            reader = csv.DictReader(file)
            columns = tuple(reader.fieldnames or ())
            if columns not in (CSV_COLUMNS, _CSV_COLUMNS_BEFORE_SHIPPED):
                raise ValueError(
                    f"{path}: not a CSV of spio-perfmodel compare --out; its columns are "
                    f"{reader.fieldnames}, compare writes {list(CSV_COLUMNS)}"
                )
            before = len(comparisons)
            for line, row in enumerate(reader, start=2):
                try:
                    comparisons.append(_comparison(row, len(columns)))
                except ValueError as error:
                    raise ValueError(f"{path}:{line}: {error}") from None
            if len(comparisons) == before:
                raise ValueError(
                    f"{path}: the header alone, no rows (compare --out writes a row per layer "
                    "and pass)"
                )
    return comparisons


def _comparison(row: dict[str, str], cells: int) -> Comparison:
    """The comparison of one row of a compare CSV of `cells` columns; ValueError saying
    what is wrong with it."""
    # (DictReader fills a short row's cells with None, a long one's under None.)
    if None in row or None in row.values():
        raise ValueError(f"a row of {cells} cells is needed")
    if row["pass"] not in PASSES:
        raise ValueError(f"pass must be one of {sorted(PASSES)}, got {row['pass']!r}")
    shipped = row.get("shipped") or None
    shipped_us = row.get("shipped_us")
    return Comparison(
        parse_layer_key(row["layer"]),
        row["pass"],
        row["heuristic"],
        row["chosen"],
        row["source"],
        _time(row, "heuristic_us"),
        _time(row, "chosen_us"),
        _time(row, "cudnn_us"),
        shipped,
        _time(row, "shipped_us") if shipped_us else None,
    )


def _time(row: dict[str, str], column: str) -> float:
    """The microseconds in row's column; ValueError unless a positive finite number (the
    report divides by them and takes their logarithms)."""
    text = row[column]
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{column} must be a positive finite number, got {text!r}")
    return value
