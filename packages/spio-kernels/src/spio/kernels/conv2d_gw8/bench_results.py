"""Result rows of the conv2d_gw8 benchmark, their CSV and JSON writers and the bandwidth plot.

Nothing here times or touches a GPU: `bench.py` measures, builds `BenchRow`s with
`contender_rows` and hands them to `write_csv`, `write_json` and `write_bandwidth_plots`.
matplotlib (the `bench` extra) is imported only inside the plotting functions, with the Agg
backend, so the rows and writers work on a machine without a display or matplotlib.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import json
import os
import re
import secrets
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .params import GROUP_WIDTH, Conv2dGw8Params, normalize_padding
from .sources_digest import sources_digest

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: The contenders of one shape and pass, in the order they are written.
CONTENDERS: tuple[str, ...] = ("spio", "cudnn")


@dataclass(frozen=True)
class BenchRow:
    """One contender's timing of one shape and pass, with the run it belongs to.

    gbs is the effective bandwidth (compulsory bytes / median time), fraction_of_copy is gbs
    over the run's copy bandwidth copy_gbs, speedup_over_cudnn is cuDNN's median time over
    this row's (1.0 for the cuDNN row). config is the spio config's repr, "" for cuDNN.
    padding is (top, bottom, left, right). spio_launch says how the run launched Spio's
    kernels: "pdl" (programmatic dependent launch, each launch overlapping the previous
    kernel's tail) or "ordered" (plain stream order, --no-pdl). timing says how the times
    were taken: "loop" (events around a loop of launches from Python: the host's launch cost
    shows where it exceeds the GPU's time) or "graph" (events around replays of a CUDA graph
    of the same launches, --cuda-graph: the GPU's time alone); rows written before the
    column existed read as "loop".
    """

    gpu: str
    torch_version: str
    cudnn_version: str
    dtype: str
    shape: str
    n: int
    c: int
    h: int
    w: int
    r: int
    s: int
    padding: tuple[int, int, int, int]
    pass_name: str
    contender: str
    config: str
    median_us: float
    gbs: float
    fraction_of_copy: float
    speedup_over_cudnn: float
    copy_gbs: float
    launches: int
    repetitions: int
    spio_launch: str
    timing: str = "loop"

    @property
    def layer(self) -> tuple[int, int, int, int, int, tuple[int, int, int, int], str]:
        """The layer without the batch size: (c, h, w, r, s, padding, dtype)."""
        return (self.c, self.h, self.w, self.r, self.s, self.padding, self.dtype)


def shape_text(params: Conv2dGw8Params) -> str:
    """The shape column of the result CSVs: "NxCxHxW", e.g. "128x64x64x64"."""
    return f"{params.n}x{params.c}x{params.h}x{params.w}"


def padding_text(padding: Sequence[int]) -> str:
    """The padding column of the result CSVs: (top, bottom, left, right) joined by spaces,
    e.g. "1 1 1 1" (`parse_padding` reads it back)."""
    return " ".join(str(v) for v in padding)


def parse_padding(value: str | Sequence[int]) -> tuple[int, int, int, int]:
    """Padding from a CSV cell written by `padding_text` or a JSON list of four ints."""
    parts = value.split() if isinstance(value, str) else value
    top, bottom, left, right = (int(v) for v in parts)
    return (top, bottom, left, right)


def same_padding(r: int, s: int) -> tuple[int, int, int, int]:
    """The padding (top, bottom, left, right) that keeps an R x S filter's output as large
    as its input: r // 2 rows above and below for an odd r (an even r pads one row fewer
    above), and s // 2 columns likewise. What the command lines take where no padding is
    given: 1 for 3 x 3, 0 for 1 x 1, 3 for 7 x 7, as every campaign samples them."""
    return ((r - 1) // 2, r // 2, (s - 1) // 2, s // 2)


def padding_option(
    values: Sequence[int] | None, r: int, s: int, option: str = "--pad"
) -> tuple[int, int, int, int]:
    """The padding a command line's `option` gives for an R x S filter: 1, 2 or 4 ints (every
    side; vertical and horizontal; top, bottom, left and right), or same_padding(r, s) where
    it was not given (None). ValueError naming the option for another number of ints; the
    range is Conv2dGw8Params' to check."""
    if values is None:
        return same_padding(r, s)
    if len(values) not in (1, 2, 4):
        raise ValueError(f"{option} takes 1, 2 or 4 ints, got {len(values)}")
    return normalize_padding(values[0] if len(values) == 1 else tuple(values))


@contextlib.contextmanager
def replacing(path: str | Path) -> Iterator[Path]:
    """A path beside `path`, with its suffix, for the block to write a whole new file at; it
    replaces `path` when the block ends without an error (os.replace, so readers see the
    old file or the new one, never a part), and is removed otherwise. A run cut off while
    writing leaves the old file; its name is of this process and random, so two writers
    never share it.

        with replacing(table) as temporary:
            temporary.write_text(...)
    """
    path = Path(path)
    temporary = path.with_name(f".{path.stem}.{os.getpid()}-{secrets.token_hex(4)}{path.suffix}")
    try:
        yield temporary
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


#: Column names of the CSV and keys of each JSON row, in order.
COLUMNS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(BenchRow))
_FIELD_TYPES: dict[str, type] = {
    "n": int,
    "c": int,
    "h": int,
    "w": int,
    "r": int,
    "s": int,
    "launches": int,
    "repetitions": int,
    "median_us": float,
    "gbs": float,
    "fraction_of_copy": float,
    "speedup_over_cudnn": float,
    "copy_gbs": float,
}


def contender_rows(
    params: Conv2dGw8Params,
    pass_name: str,
    config: object,
    spio_us: float,
    cudnn_us: float,
    *,
    copy_gbs: float,
    gpu: str,
    torch_version: str,
    cudnn_version: str,
    launches: int,
    repetitions: int,
    spio_launch: str,
    timing: str = "loop",
) -> list[BenchRow]:
    """Build the spio and cuDNN rows of one shape and pass from their median times (us)."""
    if spio_us <= 0 or cudnn_us <= 0 or copy_gbs <= 0:
        raise ValueError(
            f"times and copy bandwidth must be > 0, got spio_us={spio_us}, "
            f"cudnn_us={cudnn_us}, copy_gbs={copy_gbs}"
        )
    nbytes = params.compulsory_bytes(pass_name)  # type: ignore[arg-type]
    rows = []
    for contender, us, config_text in (
        ("spio", spio_us, repr(config)),
        ("cudnn", cudnn_us, ""),
    ):
        gbs = nbytes / us / 1e3
        rows.append(
            BenchRow(
                gpu=gpu,
                torch_version=torch_version,
                cudnn_version=cudnn_version,
                dtype=params.dtype,
                shape=shape_text(params),
                n=params.n,
                c=params.c,
                h=params.h,
                w=params.w,
                r=params.r,
                s=params.s,
                padding=params.padding,
                pass_name=pass_name,
                contender=contender,
                config=config_text,
                median_us=us,
                gbs=gbs,
                fraction_of_copy=gbs / copy_gbs,
                speedup_over_cudnn=cudnn_us / us,
                copy_gbs=copy_gbs,
                launches=launches,
                repetitions=repetitions,
                spio_launch=spio_launch,
                timing=timing,
            )
        )
    return rows


#: Columns added after results were first written, with the value older rows stand for.
_LATER_COLUMNS: dict[str, str] = {"timing": "loop"}


def _from_record(record: dict[str, Any]) -> BenchRow:
    record = {**_LATER_COLUMNS, **record}
    missing = [name for name in COLUMNS if name not in record]
    if missing:
        raise ValueError(f"result row lacks columns {missing}; expected {list(COLUMNS)}")
    values: dict[str, Any] = {}
    for name in COLUMNS:
        value = record[name]
        if name == "padding":
            values[name] = parse_padding(value)
        elif name in _FIELD_TYPES:
            values[name] = _FIELD_TYPES[name](value)
        else:
            values[name] = str(value)
    return BenchRow(**values)


def write_csv(rows: Iterable[BenchRow], path: str | Path) -> Path:
    """Write the rows as CSV with a header of COLUMNS; padding as "top bottom left right".
    The file is replaced whole (`replacing`): a campaign's table of every layer so far
    outlives a run stopped while writing it."""
    path = Path(path)
    with replacing(path) as temporary, temporary.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS)
        for row in rows:
            record = dataclasses.asdict(row)
            record["padding"] = padding_text(row.padding)
            writer.writerow([record[name] for name in COLUMNS])
    return path


def read_csv(path: str | Path) -> list[BenchRow]:
    """Read rows written by `write_csv`."""
    with Path(path).open(newline="") as f:
        return [_from_record(record) for record in csv.DictReader(f)]


#: How a run timed its launches (`BenchRow.timing`): a loop of launches from Python, or
#: replays of a CUDA graph of that loop (--cuda-graph).
TIMINGS: tuple[str, ...] = ("loop", "graph")

#: How a config-times row's tile was launched (`write_config_times`' launch column): "tile",
#: the config as its space holds it (placement fields at their defaults); "launcher", as a
#: launch that chose it runs it on that GPU (wgrad: balanced_config_on's walk and kernel
#: improvements; fprop's and dgrad's launchers run the tile as it is). spio-perfmodel's models
#: tell the two kinds apart.
LAUNCHES: tuple[str, ...] = ("tile", "launcher")

#: The columns of `write_config_times`' CSV before the config's fields (which come next,
#: in `dataclasses.asdict` order, followed by median_us).
CONFIG_TIMES_LAYER_COLUMNS: tuple[str, ...] = (
    "gpu",
    "shape",
    "n",
    "c",
    "h",
    "w",
    "r",
    "s",
    "padding",
    "dtype",
    "timing",
    "launch",
    "kernel",
    "pass_name",
)


def config_times_header(config: Any) -> list[str]:
    """The header of `write_config_times`' CSV for configs of config's dataclass."""
    return [*CONFIG_TIMES_LAYER_COLUMNS, *dataclasses.asdict(config), "median_us"]


def upgrade_config_times(path: str | Path, config: Any) -> None:
    """Make the CSV at path ready for `write_config_times`' rows of config's dataclass, before
    anything is timed: nothing to do where it is missing, empty or has their header. A file
    of an older format, whose header lacks only config fields added since, is rewritten with
    those columns filled in with the fields' defaults, the values its rows ran with (a
    campaign then resumes where it stopped). Any other header raises ValueError."""
    path = Path(path)
    if not path.exists():
        return
    header = config_times_header(config)
    with path.open(newline="", encoding="utf-8") as f:
        # (The header alone where it is current: the benchmark checks before every shape.)
        reader = csv.reader(f)
        existing = next(reader, None)
        if existing is None or existing == header:
            return
        rows = list(reader)
    defaults = {
        field.name: field.default
        for field in dataclasses.fields(config)
        if field.default is not dataclasses.MISSING
    }
    added = [column for column in header if column not in existing]
    if [column for column in header if column in existing] != existing or any(
        column not in defaults for column in added
    ):
        raise ValueError(
            f"{path} has the header {existing}, not {header} (another pass's configs, or a "
            "format that is not an older one of these): use a new --out directory"
        )
    at = {column: index for index, column in enumerate(existing)}
    with replacing(path) as upgraded, upgraded.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        for row in rows:
            writer.writerow([row[at[c]] if c in at else str(defaults[c]) for c in header])


def write_config_times(
    gpu: str,
    pass_name: str,
    params: Conv2dGw8Params,
    times: dict[Any, float],
    path: str | Path,
    *,
    timing: str,
    launch: str = "tile",
) -> Path:
    """Append every config's median time of one layer and pass to the CSV at path.

    This is --all-configs' data, for choosing heuristics and training the latency models
    (spio-perfmodel), so each row describes the layer fully: the columns are
    `CONFIG_TIMES_LAYER_COLUMNS` (gpu; shape "NxCxHxW"; n, c, h, w, r, s; padding as
    "top bottom left right", as in `write_csv`; dtype; timing, "loop" or "graph" as in
    `BenchRow.timing`; launch, how each tile was launched, one of `LAUNCHES`; kernel, the
    digest of the pass's sources that were timed,
    `sources_digest(pass_name)`; pass_name), then the config's fields in `dataclasses.asdict` order,
    then median_us. A new (or empty) file gets the header first; an existing one is appended
    to, so several runs can share it, but only if its header is the same: a file of an older
    format, or of another config type (fprop's and dgrad's `FpropConfig` share a header,
    wgrad's `WgradConfig` does not), raises ValueError and nothing is written. Every config
    of times must be of one dataclass. timing not in `TIMINGS` or launch not in `LAUNCHES`
    raises ValueError.
    """
    if timing not in TIMINGS:
        raise ValueError(f"timing must be one of {TIMINGS}, got {timing!r}")
    if launch not in LAUNCHES:
        raise ValueError(f"launch must be one of {LAUNCHES}, got {launch!r}")
    path = Path(path)
    if not times:
        return path
    header = config_times_header(next(iter(times)))
    layer = [
        gpu,
        shape_text(params),
        params.n,
        params.c,
        params.h,
        params.w,
        params.r,
        params.s,
        padding_text(params.padding),
        params.dtype,
        timing,
        launch,
        sources_digest(pass_name),
        pass_name,
    ]
    records = []
    for config, us in times.items():
        if config_times_header(config) != header:
            raise ValueError(
                f"configs of one write must share their fields, got {config!r} among "
                f"configs with columns {header[len(layer) : -1]}"
            )
        records.append([*layer, *dataclasses.asdict(config).values(), f"{us:.3f}"])
    existing = None
    if path.exists():
        with path.open(newline="", encoding="utf-8") as f:
            existing = next(csv.reader(f), None)
    if existing is not None and existing != header:
        raise ValueError(
            f"{path} has the header {existing}, not {header} (an older format or another "
            "pass's configs); rows are not appended to it: use a new --out directory"
        )
    with path.open("a", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        if existing is None:
            writer.writerow(header)
        writer.writerows(records)
    return path


def write_json(rows: Iterable[BenchRow], path: str | Path) -> Path:
    """Write {"columns": COLUMNS, "rows": [{column: value}, ...]} as JSON."""
    path = Path(path)
    records = [dataclasses.asdict(row) for row in rows]
    for record in records:
        record["padding"] = list(record["padding"])
    path.write_text(json.dumps({"columns": list(COLUMNS), "rows": records}, indent=2) + "\n")
    return path


def read_json(path: str | Path) -> list[BenchRow]:
    """Read rows written by `write_json`."""
    document = json.loads(Path(path).read_text())
    return [_from_record(record) for record in document["rows"]]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def plot_title(row: BenchRow) -> str:
    """Title of a bandwidth plot: GPU, pass and layer (C, H x W, R x S, group width, dtype)."""
    return (
        f"{row.gpu}: conv2d {row.pass_name}, C={row.c}, {row.h}x{row.w}, {row.r}x{row.s}, "
        f"group width {GROUP_WIDTH}, {row.dtype}"
    )


def bandwidth_figure(rows: Sequence[BenchRow]) -> Figure:
    """Plot effective bandwidth against batch size for one layer and pass; return the figure.

    One line per contender (Spio, cuDNN) over N on a log2 axis, and a horizontal line at the
    copy bandwidth. All rows must share the GPU, layer and pass; raises ValueError if not.
    """
    if not rows:
        raise ValueError("bandwidth_figure needs at least one row")
    first = rows[0]
    keys = {(row.gpu, row.layer, row.pass_name) for row in rows}
    if len(keys) > 1:
        raise ValueError(f"rows of one figure must share GPU, layer and pass, got {sorted(keys)}")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    # A Figure on an Agg canvas, not pyplot: no display, no global figure state left behind.
    figure = Figure(figsize=(8, 5), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    labels = {"spio": "Spio", "cudnn": "PyTorch / cuDNN"}
    markers = {"spio": "o", "cudnn": "s"}
    for contender in CONTENDERS:
        points = sorted((row.n, row.gbs) for row in rows if row.contender == contender)
        if points:
            xs, ys = zip(*points, strict=True)
            axes.plot(xs, ys, marker=markers[contender], label=labels[contender])
    copy_gbs = max(row.copy_gbs for row in rows)
    axes.axhline(copy_gbs, color="gray", linestyle="--", label=f"copy ({copy_gbs:.0f} GB/s)")
    axes.set_xscale("log", base=2)
    batches = sorted({row.n for row in rows})
    axes.set_xticks(batches, batch_tick_labels(batches))
    axes.minorticks_off()
    axes.set_xlabel("batch size N")
    axes.set_ylabel("effective bandwidth (GB/s)")
    axes.set_ylim(bottom=0)
    axes.set_title(plot_title(first), fontsize=10)
    axes.grid(True, alpha=0.3)
    axes.legend()
    figure.tight_layout()
    return figure


#: Batch sizes closer than this factor to the last labelled one keep their tick unlabelled:
#: on the log axis their labels would run together (128 and 160, 256 and 300).
MIN_LABEL_RATIO = 1.3


def batch_tick_labels(batches: Sequence[int]) -> list[str]:
    """Labels of the sorted batch-size ticks: each batch size, or "" where it lies within
    MIN_LABEL_RATIO of the last labelled one."""
    labels = []
    last = None
    for n in batches:
        crowded = last is not None and n < last * MIN_LABEL_RATIO
        labels.append("" if crowded else str(n))
        if not crowded:
            last = n
    return labels


def plot_filename(row: BenchRow) -> str:
    """File name of a bandwidth plot, e.g. batch_size_vs_eff_bandwidth__nvidia_h100__....png."""
    pad = "_".join(str(v) for v in row.padding)
    layer = f"{row.c}c_{row.h}h_{row.w}w_{row.r}r_{row.s}s_pad{pad}_{GROUP_WIDTH}gw_{row.dtype}"
    return f"batch_size_vs_eff_bandwidth__{_slug(row.gpu)}__{row.pass_name}_{layer}.png"


def write_bandwidth_plots(rows: Iterable[BenchRow], out_dir: str | Path) -> list[Path]:
    """Write one PNG per (GPU, layer, pass) of the rows into out_dir; return the paths."""
    groups: dict[tuple[object, ...], list[BenchRow]] = {}
    for row in rows:
        groups.setdefault((row.gpu, row.layer, row.pass_name), []).append(row)
    paths = []
    for group in groups.values():
        path = Path(out_dir) / plot_filename(group[0])
        bandwidth_figure(group).savefig(path, format="png")
        paths.append(path)
    return paths
