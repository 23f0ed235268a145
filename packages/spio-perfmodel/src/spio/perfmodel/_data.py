"""Measured latencies of kernel configs: the rows `spio.kernels.bench --all-configs --out` writes.

Each row of a config-times CSV is one config of one layer, timed on one GPU. Files from
before the layer columns existed (gpu, shape, pass_name, config fields, median_us) read as
3 x 3 filters, padding 1, float16 and loop timing, which is what those sweeps ran. A config
field missing from an older file takes the config's default (walk_n = 1, image_sync off:
what the kernel did before the field existed).

Each row names the version of the kernels it timed (`kernel`, the digest of their sources,
`spio.kernels.conv2d_gw8.sources_digest(pass)`; "" in files from before the column): timings of
different versions describe different kernels, and a model is trained on one
(`LatencyModel.train` refuses a mix).

Each row says how its tile was launched (`launch`, "tile" in files from before the column):
as the config space holds it, or as a launch that chose it runs it on that GPU ("launcher":
wgrad's walk and kernel improvements, `spio.kernels.bench --all-configs --as-launched`). The
two describe different times of the same tile: a model of both kinds learns the launch as a
flag (_features.FLAG_FEATURES).

Rows whose config the kernel no longer accepts (the config space changed since they were
timed) are not training data for today's kernel: they are left out and listed in
`LatencyTable.skipped` with the reason, never dropped silently.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spio.kernels.conv2d_gw8.bench_results import LAUNCHES, padding_text, parse_padding
from spio.kernels.conv2d_gw8.params import Conv2dGw8Params

from ._passes import kernel_pass

#: Layer columns of a row, with the value older files imply.
_LEGACY_LAYER = {
    "r": "3",
    "s": "3",
    "padding": "1 1 1 1",
    "dtype": "float16",
    "timing": "loop",
    "launch": "tile",
    "kernel": "",
}


@dataclass(frozen=True)
class ConfigTime:
    """One config's median time on one layer and GPU."""

    gpu: str
    pass_name: str
    params: Conv2dGw8Params
    config: Any
    median_us: float
    timing: str = "loop"
    kernel: str = ""
    #: How the tile was launched: "tile" or "launcher" (bench_results.LAUNCHES).
    launch: str = "tile"


@dataclass(frozen=True)
class LatencyTable:
    """Rows read from config-times CSVs, and the rows left out (file:line: reason)."""

    rows: tuple[ConfigTime, ...]
    skipped: tuple[str, ...] = ()

    def select(
        self,
        pass_name: str,
        gpu: str | None = None,
        kernel: str | None = None,
        launch: str | None = None,
    ) -> LatencyTable:
        """The rows of one pass (and GPU, kernel version and launch, when given)."""
        kept = tuple(
            row
            for row in self.rows
            if row.pass_name == pass_name
            and (gpu is None or row.gpu == gpu)
            and (kernel is None or row.kernel == kernel)
            and (launch is None or row.launch == launch)
        )
        return LatencyTable(kept, self.skipped)

    def by_layer(self) -> dict[Conv2dGw8Params, list[ConfigTime]]:
        """The rows grouped by layer, in the order layers first appear."""
        return by_layer(self.rows)


def by_layer(rows: Iterable[ConfigTime]) -> dict[Conv2dGw8Params, list[ConfigTime]]:
    """rows grouped by layer, in the order layers first appear."""
    groups: dict[Conv2dGw8Params, list[ConfigTime]] = {}
    for row in rows:
        groups.setdefault(row.params, []).append(row)
    return groups


def _parse_field(field: dataclasses.Field[Any], text: str) -> Any:
    if field.type in (bool, "bool"):
        if text not in ("True", "False", "1", "0"):
            raise ValueError(f"{field.name} must be True or False, got {text!r}")
        return text in ("True", "1")
    return int(text)


def _params(record: dict[str, str]) -> Conv2dGw8Params:
    if "n" in record:
        n, c, h, w = (int(record[key]) for key in ("n", "c", "h", "w"))
    else:
        n, c, h, w = (int(v) for v in record["shape"].split("x"))
    padding = parse_padding(record["padding"])
    return Conv2dGw8Params(
        n=n,
        c=c,
        h=h,
        w=w,
        r=int(record["r"]),
        s=int(record["s"]),
        padding=padding,
        dtype=record["dtype"],  # type: ignore[arg-type]  # validated by Conv2dGw8Params
    )


def _row(record: dict[str, str]) -> ConfigTime:
    """A ConfigTime from one CSV record; ValueError/KeyError say what is wrong with it."""
    for key, legacy in _LEGACY_LAYER.items():
        if not record.get(key):
            record[key] = legacy
    spec = kernel_pass(record["pass_name"])
    params = _params(record)
    fields = {
        field.name: _parse_field(field, record[field.name])
        for field in dataclasses.fields(spec.config_type)
        if record.get(field.name)
    }
    config = spec.config_type(**fields)
    spec.check_config(params, config)
    median_us = float(record["median_us"])
    # (Not `> 0` alone: inf, and a number past a float's range, would reach XGBoost's labels.)
    if not (math.isfinite(median_us) and median_us > 0):
        raise ValueError(f"median_us must be a positive finite number, got {median_us}")
    if record["launch"] not in LAUNCHES:
        raise ValueError(f"launch must be one of {LAUNCHES}, got {record['launch']!r}")
    return ConfigTime(
        record["gpu"],
        spec.name,
        params,
        config,
        median_us,
        record["timing"],
        record["kernel"],
        record["launch"],
    )


def read_config_times(paths: str | Path | Sequence[str | Path]) -> LatencyTable:
    """Read config-times CSVs (see the module doc) into a LatencyTable.

    Raises:
        OSError: a path does not exist (FileNotFoundError), is a directory
            (IsADirectoryError) or cannot be read.
        ValueError: a file lacks the columns every row needs (gpu, shape, pass_name,
            median_us and the tile's fields: _REQUIRED_COLUMNS), naming the file; the
            benchmark's table of contenders (conv2d_gw8_bench.csv, a campaign's
            conv2d_gw8_campaign_bench.csv), which has the first four but a config's text
            for its fields, is refused so.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    rows: list[ConfigTime] = []
    skipped: list[str] = []
    for path in paths:
        rows_of_file, skipped_of_file = _read_one(Path(path))
        rows += rows_of_file
        skipped += skipped_of_file
    return LatencyTable(tuple(rows), tuple(skipped))


#: Columns every config-times CSV has, old and new: the row's GPU, layer, pass and time, and
#: the tile fields that every pass's config has (a field added later reads as its default).
_REQUIRED_COLUMNS = ("gpu", "shape", "pass_name", "median_us", "block_q", "block_g", "block_p")


def _read_one(path: Path) -> tuple[list[ConfigTime], list[str]]:
    rows: list[ConfigTime] = []
    skipped: list[str] = []
    # utf-8-sig: a file a spreadsheet saved starts with a byte-order mark, which would be
    # read into the first column's name.
    with path.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        missing = set(_REQUIRED_COLUMNS) - set(reader.fieldnames or ())
        if missing:
            raise ValueError(
                f"{path} is not a config-times CSV: it lacks the columns {sorted(missing)} "
                "(written by `python -m spio.kernels.bench conv2d_gw8 --all-configs --out DIR`)"
            )
        for line, record in enumerate(reader, start=2):
            try:
                rows.append(_row(dict(record)))
            except (ValueError, TypeError, KeyError) as error:
                skipped.append(f"{path}:{line}: {type(error).__name__}: {error}")
    return rows, skipped


def layer_key(params: Conv2dGw8Params) -> str:
    """A short name of a layer for reports: NxCxHxW, with R x S, padding and dtype when they
    are not 3 x 3, 1 and float16."""
    text = f"{params.n}x{params.c}x{params.h}x{params.w}"
    if (params.r, params.s) != (3, 3):
        text += f" {params.r}x{params.s}"
    if params.padding != (1, 1, 1, 1):
        text += " pad " + padding_text(params.padding)
    if params.dtype != "float16":
        text += f" {params.dtype}"
    return text


def parse_layer_key(text: str) -> Conv2dGw8Params:
    """The layer layer_key named (reports and `compare`'s CSVs name layers so). ValueError
    naming text where it is no such name, or names a layer out of the kernels' scope."""
    words = text.split()
    try:
        n, c, h, w = (int(v) for v in words[0].split("x"))
        r = s = 3
        if len(words) > 1 and words[1][0].isdigit():
            r, s = (int(v) for v in words.pop(1).split("x"))
        padding = (1, 1, 1, 1)
        if len(words) > 1 and words[1] == "pad":
            padding = parse_padding(" ".join(words[2:6]))
            del words[1:6]
        dtype = words.pop(1) if len(words) > 1 else "float16"
        if len(words) > 1:
            raise ValueError
    except (ValueError, IndexError):
        raise ValueError(
            f"a layer's name is NxCxHxW, then RxS, pad TOP BOTTOM LEFT RIGHT and the dtype where "
            f"they are not 3x3, 1 and float16 (e.g. '2x512x56x56 7x7 pad 3 3 3 3'); got {text!r}"
        ) from None
    # (The params check the dtype, as every other field.)
    return Conv2dGw8Params.make(n, c, h, w, r=r, s=s, padding=padding, dtype=dtype)  # type: ignore[arg-type]


def measured_times(rows: Iterable[ConfigTime]) -> dict[Any, float]:
    """config -> median_us of rows of one layer (the fastest where a config repeats)."""
    times: dict[Any, float] = {}
    for row in rows:
        times[row.config] = min(row.median_us, times.get(row.config, float("inf")))
    return times
