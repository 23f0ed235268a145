"""The `spio-perfmodel` command: evaluate, train and query latency models from config times.

    spio-perfmodel evaluate TIMES.csv ... --pass wgrad [--gpu NAME] [--folds 5] [--shortlist 4]
        [--held-out TIMES.csv ...] [--seeds 0 1 2]
    spio-perfmodel train TIMES.csv ... --pass wgrad --out wgrad.json [--gpu NAME] [--sm-count 132]
    spio-perfmodel pick wgrad.json 128x64x64x64 [--r 3 --s 3 --pad 1 --dtype float16]
    spio-perfmodel collect --out DIR [--layers 24] [--configs 40] [--seed 0] [--batches N ...]
        [--channels C ...] [--sides H ...] [--where FIELD=V[,V...] ...]
    spio-perfmodel layers [--layers 24] [--seed 0] [--batches N ...] [--channels C ...]
        [--sides H ...]
    spio-perfmodel retime TIMES.csv ... --pass fprop --kernel OLD_DIGEST --out DIR [--loop]
    spio-perfmodel compare [--layers 16] [--seed 1] [--channels C ...] [--sides H ...]
        [--exclude TIMES.csv ...] [--selection autotune] [--out CSV]
    spio-perfmodel compare --from CSV ...
    spio-perfmodel shipped
    spio-perfmodel tune 128x64x64x64 --pass wgrad [--device 0] [--candidates 4] [--r 3 ...]
    spio-perfmodel tunings [--forget]

collect times a campaign of layers on this machine's GPU (see _campaign; it needs torch
and spio-kernels[bench]); layers prints the campaign's layers without timing anything;
retime times the configs of rows of older kernels (--kernel) again on today's, into DIR
(see _retime).
compare times the config choose_config picks against the heuristic's on a campaign's
layers (those in --exclude's files left out: the model's training layers), and under
--model or another selection mode (--selection autotune) the shipped models' choice too;
with --from it times nothing and reports on earlier runs' --out files together (one run
per filter size, one verdict over them all); shipped lists the models that ship with
spio-perfmodel; tune times a model's shortlist for one layer on
the GPU (tune_config) and prints the fastest; tunings says how many of choose_config's
tunings are kept on disk and where (--forget deletes them). evaluate splits the layers
into folds, or with --held-out trains once on the other files and scores those files'
layers (a campaign of widths the training rows never sampled, say); --seeds repeats it for
each training seed and prints how far the summary moves with the seed alone.

TIMES.csv files are written by `python -m spio.kernels.bench conv2d_gw8 --all-configs --out DIR`.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence

import spio.perfmodel
from spio.kernels.conv2d_gw8.bench_results import LAUNCHES, padding_option
from spio.kernels.conv2d_gw8.params import Conv2dGw8Params, Dtype

from ._autotune import AUTOTUNE_CANDIDATES
from ._campaign import BATCHES, CHANNELS, SIDES, campaign_layers, collect
from ._compare import compare, read_csv, report, write_csv
from ._data import LatencyTable, layer_key, read_config_times
from ._evaluate import evaluate, evaluate_held_out, seeds_report
from ._features import GpuLimits
from ._model import LatencyModel, check_model_path, training_options
from ._passes import PASSES
from ._retime import retime
from ._select import tune_config
from ._selection_mode import SELECTIONS, selection_mode_set
from ._shipped import shipped_models
from ._tunings import forget_tunings, kept_tunings, tunings_dir, unusable_reason


def _rows(
    args: argparse.Namespace, files: Sequence[str] | None = None, training: bool = True
) -> LatencyTable:
    """The rows of files (default args.times) that args' pass, GPU, kernel and launch select;
    training: they train a model (which a note on rows of both launches is about).
    ValueError where they select none, naming the option that left none and what the files
    hold."""
    files = args.times if files is None else files
    table = read_config_times(files)
    if table.skipped:
        _report_left_out(table.skipped)
    gpus = sorted({row.gpu for row in table.rows if row.pass_name == args.pass_name})
    if args.gpu is None and len(gpus) > 1:
        raise ValueError(f"the files hold several GPUs {gpus}; choose one with --gpu")
    if args.pool and args.gpu is None:
        raise ValueError("--pool learns from other GPUs' rows for the GPU --gpu names; give --gpu")
    # With --pool every GPU's rows stay; the model is --gpu's.
    filters = {
        "pass_name": args.pass_name,
        "gpu": None if args.pool else args.gpu,
        "kernel": args.kernel,
        "launch": args.launch,
    }
    selected = table.select(**filters)
    if not selected.rows:
        raise ValueError(_why_no_rows(table, filters, files))
    kernels = Counter(row.kernel or "(unknown)" for row in selected.rows)
    if len(kernels) > 1:
        raise ValueError(f"the rows come from several versions of the kernels: "
                         f"{_listed(kernels)}; choose one with --kernel")  # fmt: skip
    launches = Counter(row.launch for row in selected.rows)
    if training and len(launches) > 1:
        print(f"rows of both launches, {_listed(launches)}: the model learns the launch as a "
              "feature and predicts tiles as launched (--launch chooses one)")  # fmt: skip
    return selected


#: The options that select rows (_rows), in the order they apply: the ConfigTime attribute
#: each compares, the option, and what its values are called.
_ROW_FILTERS = (
    ("pass_name", "--pass", "passes"),
    ("gpu", "--gpu", "GPUs"),
    ("kernel", "--kernel", "kernels"),
    ("launch", "--launch", "launches"),
)


def _why_no_rows(table: LatencyTable, filters: dict[str, str | None], files: Sequence[str]) -> str:
    """Why table holds no rows of filters: the first option that leaves none, and what the
    rows before it hold (each value with its count)."""
    named = ", ".join(str(path) for path in files)
    if not table.rows:
        left_out = f": all {len(table.skipped)} were left out (above)" if table.skipped else ""
        return f"no rows in {named}{left_out}"
    pass_name = filters["pass_name"]
    given: dict[str, str] = {}
    before = table.rows
    for attribute, option, values in _ROW_FILTERS:
        value = filters[attribute]
        if value is None:
            continue
        given[attribute] = value
        after = table.select(**given).rows
        if not after:
            held = _listed(Counter(getattr(row, attribute) or "(unknown)" for row in before))
            if attribute == "pass_name":
                return f"no {pass_name} rows in {named}; the rows there are of the {values} {held}"
            return (
                f"no {pass_name} rows of {option} {value} in {named}; the {pass_name} rows "
                f"there are of the {values} {held}"
            )
        before = after
    return f"no {pass_name} rows in {named}"  # (not reached: some option left none)


def _listed(counts: Counter[str]) -> str:
    """Values with their counts of rows, most first: "tile (160 rows), launcher (40 rows)"."""
    return ", ".join(f"{value} ({count} rows)" for value, count in counts.most_common())


#: Where a row left out by read_config_times was, and why: "path:line: reason".
_LEFT_OUT = re.compile(r"^(.*?:\d+): (.*)$")
#: The reasons for leaving rows out that a command lists (the rest are counted).
_REASONS_SHOWN = 8


def _report_left_out(skipped: Sequence[str]) -> None:
    """Say on stderr how many rows were left out, and a count per reason with the first
    row of each."""
    places: dict[str, list[str]] = {}
    for entry in skipped:
        match = _LEFT_OUT.match(entry)
        where, reason = match.groups() if match else ("", entry)
        places.setdefault(reason, []).append(where)
    print(f"left out {len(skipped)} rows (malformed, or configs the kernel no longer accepts):",
          file=sys.stderr)  # fmt: skip
    for reason, wheres in list(places.items())[:_REASONS_SHOWN]:
        print(f"  {len(wheres)} x {reason} (first at {wheres[0]})", file=sys.stderr)
    if len(places) > _REASONS_SHOWN:
        print(f"  and {len(places) - _REASONS_SHOWN} other reasons", file=sys.stderr)


def _limits(args: argparse.Namespace) -> GpuLimits:
    return GpuLimits(sm_count=args.sm_count, tma=not args.no_tma)


def _evaluate(args: argparse.Namespace) -> None:
    # (Said before the files are read: a campaign's files take seconds.)
    if args.held_out and args.folds is not None:
        raise ValueError("--folds splits the rows into folds; --held-out names the layers "
                         "to score instead: give one of them")  # fmt: skip
    rows = _rows(args).rows
    limits = _limits(args)
    held_out = _rows(args, args.held_out, training=False).rows if args.held_out else ()
    defaults = training_options(args.pass_name)
    evaluations = []
    for seed in args.seeds or [defaults.seed]:
        options = dataclasses.replace(defaults, seed=seed)
        if args.held_out:
            evaluation = evaluate_held_out(list(rows), list(held_out), limits=limits,
                                           options=options, shortlist=args.shortlist,
                                           gpu=args.gpu)  # fmt: skip
        else:
            folds = 5 if args.folds is None else args.folds
            evaluation = evaluate(list(rows), folds=folds, limits=limits, options=options,
                                  shortlist=args.shortlist, gpu=args.gpu)  # fmt: skip
        evaluations.append(evaluation)
    print(evaluations[0].report())
    if args.seeds:
        print(seeds_report(evaluations, args.seeds))


def _train(args: argparse.Namespace) -> None:
    # Before the rows are read and the trees trained: minutes on the whole data.
    try:
        check_model_path(args.out)
    except ValueError as error:
        raise ValueError(f"--out {error}") from None
    table = _rows(args)
    model = LatencyModel.train(list(table.rows), _limits(args), gpu=args.gpu)
    path = model.save(args.out)
    layers = len(table.by_layer())
    print(f"trained a {model.pass_name} model for {model.gpu} on {len(table.rows)} configs of "
          f"{layers} layers; wrote {path}")  # fmt: skip


def _layer(args: argparse.Namespace, shape: str) -> Conv2dGw8Params:
    """The layer N x C x H x W of shape with args' filter, padding and dtype (the options'
    defaults where not given: 3 x 3, the padding that keeps the output's size, float16)."""
    try:
        n, c, h, w = (int(v) for v in shape.lower().split("x"))
    except ValueError:
        raise ValueError(f"a layer is N x C x H x W, e.g. 128x64x64x64; got {shape!r}") from None
    r = DEFAULT_FILTER if args.r is None else args.r
    s = DEFAULT_FILTER if args.s is None else args.s
    dtype = args.dtype or DEFAULT_DTYPE
    try:
        padding = padding_option(args.pad, r, s)
        return Conv2dGw8Params.make(n, c, h, w, r=r, s=s, padding=padding, dtype=dtype)
    except (TypeError, ValueError) as error:
        pad = "" if args.pad is None else f" --pad {' '.join(map(str, args.pad))}"
        raise ValueError(f"layer {shape} with --r {r} --s {s}{pad}: {error}") from None


def _pick(args: argparse.Namespace) -> None:
    model = LatencyModel.load(args.model)
    params = _layer(args, args.shape)
    # The first choice of a process builds what every later one reuses (the space's
    # columns, XGBoost's buffers): the second is what a choice costs.
    times_ms = []
    for _ in range(2):
        start = time.perf_counter()
        config = model.best_config(params)
        times_ms.append(1e3 * (time.perf_counter() - start))
    predicted = float(model.predict_us(params, [config])[0])
    first, then = times_ms
    print(f"{layer_key(params)}: {config} (predicted {predicted:.1f} us on {model.gpu}; "
          f"chosen in {then:.1f} ms, the process's first choice in {first:.1f} ms)")  # fmt: skip


def _tune(args: argparse.Namespace) -> None:
    params = _layer(args, args.shape)
    start = time.perf_counter()
    choice = tune_config(args.pass_name, params, args.device, count=args.candidates)
    elapsed_ms = 1e3 * (time.perf_counter() - start)
    print(f"{choice.config} ({choice.source}: {choice.reason}; in {elapsed_ms:.0f} ms)")


def _tunings(args: argparse.Namespace) -> None:
    directory = tunings_dir()
    if directory is None:
        print("no tunings are kept: spio-jit's cache is turned off (SPIO_JIT_DISABLE_CACHE)")
    elif args.forget:
        print(f"forgot {forget_tunings()} tunings in {directory.absolute()}")
    else:
        print(f"{len(kept_tunings())} tunings kept in {directory.absolute()}")
        problem = unusable_reason(directory)
        if problem is not None:
            raise ValueError(
                f"{problem}: autotuning keeps no choice, and times every layer again in every "
                "process (SPIO_JIT_CACHE_DIR names the directory)"
            )


def _sampled_layers(args: argparse.Namespace) -> list[Conv2dGw8Params]:
    """The campaign's layers that args' --layers, --seed and value lists name."""
    batches = getattr(args, "batches", BATCHES)
    return campaign_layers(args.layers, args.seed, batches, args.channels, args.sides)


def _layers(args: argparse.Namespace) -> None:
    for layer in _sampled_layers(args):
        print(layer_key(layer))


def _collect(args: argparse.Namespace) -> None:
    layers = _sampled_layers(args)
    timed = collect(
        args.out, layers, args.configs, args.passes, graph=not args.loop,
        as_launched=args.as_launched, where=args.where or (),
    )  # fmt: skip
    print(f"timed {len(timed)} of {len(layers)} layers (the rest were in {args.out} already)")


def _retime(args: argparse.Namespace) -> None:
    rows = _rows(args, training=False).rows
    timed = retime(list(rows), args.out, graph=not args.loop)
    configs = sum(len(job.configs) for job in timed)
    print(f"timed {configs} configs of {len(timed)} layer-passes again into {args.out} (those "
          "already there were skipped)")  # fmt: skip


def _compare(args: argparse.Namespace) -> None:
    _check_compare_options(args)
    if args.from_csv:
        print(report(read_csv(args.from_csv)))
        return
    seen = set(read_config_times(args.exclude).by_layer()) if args.exclude else set()
    if args.shapes:
        candidates = list(dict.fromkeys(_layer(args, shape) for shape in args.shapes))
    else:
        candidates = campaign_layers(
            COMPARE_LAYERS if args.layers is None else args.layers,
            COMPARE_SEED if args.seed is None else args.seed,
            BATCHES,
            args.channels or CHANNELS,
            args.sides or SIDES,
        )
    layers = [layer for layer in candidates if layer not in seen]
    if not layers:
        raise ValueError(f"every one of the {len(candidates)} layers is in the --exclude files")
    passes = args.passes or sorted(PASSES)
    models = _models_by_pass(args.model or [])
    for pass_name in models:
        if pass_name not in passes:
            raise ValueError(
                f"--model gives a {pass_name} model, but --passes {' '.join(passes)} times no "
                f"{pass_name}: add {pass_name} to --passes, or leave the model out"
            )
    with selection_mode_set(args.selection):
        comparisons = compare(layers, passes, graph=not args.loop, models=models)
    print(report(comparisons))
    if args.out:
        print(f"wrote {write_csv(comparisons, args.out)}")


#: compare's options by attribute: those that sample a campaign, those that shape the
#: layers of --shapes, and those that time (all of which --from, timing nothing, leaves).
_CAMPAIGN_OPTIONS = {"layers": "--layers", "seed": "--seed", "channels": "--channels",
                     "sides": "--sides"}  # fmt: skip
_LAYER_OPTIONS = {"r": "--r", "s": "--s", "pad": "--pad", "dtype": "--dtype"}
_TIMING_OPTIONS = {
    **_CAMPAIGN_OPTIONS, "shapes": "--shapes", **_LAYER_OPTIONS, "exclude": "--exclude",
    "passes": "--passes", "loop": "--loop", "model": "--model", "selection": "--selection",
    "out": "--out",
}  # fmt: skip


def _check_compare_options(args: argparse.Namespace) -> None:
    """ValueError for options given together that one of them would leave unused (their
    defaults are None: given or not shows)."""

    def given(options: dict[str, str]) -> str:
        # (`is not False`: --seed 0 is given, and 0 == False.)
        return ", ".join(
            option
            for attribute, option in options.items()
            if getattr(args, attribute) is not None and getattr(args, attribute) is not False
        )

    if args.from_csv:
        if timing := given(_TIMING_OPTIONS):
            raise ValueError(f"--from reports on earlier runs and times nothing; {timing} "
                             "would time layers: give them without --from")  # fmt: skip
    elif args.shapes:
        if campaign := given(_CAMPAIGN_OPTIONS):
            raise ValueError(f"--shapes names the layers; {campaign} sample a campaign's "
                             "instead: give one or the other")  # fmt: skip
    elif layer := given(_LAYER_OPTIONS):
        raise ValueError(f"{layer} shape the layers of --shapes; a campaign samples its own "
                         "filters, padding and dtypes")  # fmt: skip


def _models_by_pass(paths: list[str]) -> dict[str, LatencyModel]:
    """The models at paths by pass; ValueError where two are of one pass."""
    models: dict[str, LatencyModel] = {}
    for path in paths:
        model = LatencyModel.load(path)
        if model.pass_name in models:
            raise ValueError(f"--model has two {model.pass_name} models; give one per pass")
        models[model.pass_name] = model
    return models


def _shipped(args: argparse.Namespace) -> None:
    models = shipped_models()
    if not models:
        print("no models ship with this spio-perfmodel")
    for model in models:
        print(f"{model.gpu:>24} {model.pass_name:>5} kernels {model.kernel or '(unknown)'}  "
              f"{model.path}")  # fmt: skip


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="spio-perfmodel", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--version", action="version", version=f"spio-perfmodel {spio.perfmodel.__version__}"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for name, helper in (
        ("evaluate", "held-out regret by layer"),
        ("train", "fit and save a model"),
    ):
        sub = commands.add_parser(name, help=helper)
        sub.add_argument("times", nargs="+", help="config-times CSV files")
        sub.add_argument("--pass", dest="pass_name", required=True, choices=sorted(PASSES))
        sub.add_argument("--gpu", help="the GPU name of the rows to use (when files hold several)")
        sub.add_argument(
            "--pool", action="store_true",
            help="learn from every GPU's rows in the files for --gpu's model, with a flag "
            "that tells them apart (other_gpu)",
        )  # fmt: skip
        sub.add_argument(
            "--sm-count", type=_positive, default=GpuLimits().sm_count,
            help="the GPU's streaming multiprocessors (default %(default)s, the H100's and H200's)",
        )  # fmt: skip
        sub.add_argument(
            "--no-tma", action="store_true",
            help="the GPU has no TMA (before sm_90): wgrad's heuristic tile differs",
        )  # fmt: skip
        sub.add_argument("--kernel", help="the kernels' version (sources digest) of the rows")
        sub.add_argument(
            "--launch", choices=LAUNCHES,
            help="the rows' launch: their tiles as they are, or as the launcher runs them",
        )  # fmt: skip
        if name == "evaluate":
            sub.add_argument("--folds", type=int, help="layer folds (default 5)")
            sub.add_argument(
                "--held-out", nargs="+", metavar="TIMES.csv",
                help="score these files' layers with one model trained on the others' rows "
                "(instead of folds)",
            )  # fmt: skip
            sub.add_argument(
                "--shortlist", type=_positive, default=AUTOTUNE_CANDIDATES,
                help="best-predicted configs autotuning times (default %(default)s)",
            )  # fmt: skip
            sub.add_argument(
                "--seeds", nargs="+", type=int, metavar="SEED",
                help="train with each of these XGBoost seeds on the same folds and print how "
                "the summary moves with the seed (the report's table is the first seed's)",
            )  # fmt: skip
        else:
            sub.add_argument(
                "--out", required=True,
                help="model file to write: .ubj (XGBoost's binary UBJSON, as the shipped "
                "models) or .json",
            )  # fmt: skip
    pick = commands.add_parser("pick", help="the config a model predicts fastest for a layer")
    pick.add_argument("model", help="a model file that train wrote (.json or .ubj)")
    pick.add_argument("shape", help="N x C x H x W, e.g. 128x64x64x64")
    _add_layer_options(pick)
    for name, helper in (
        ("collect", "time a campaign of layers (GPU)"),
        ("layers", "list a campaign's layers without timing them"),
    ):
        sub = commands.add_parser(name, help=helper)
        sub.add_argument("--layers", type=_positive, default=24, help="layers in the campaign")
        sub.add_argument(
            "--seed", type=int, default=0,
            help="which layers the campaign samples (the same seed, the same layers)",
        )  # fmt: skip
        sub.add_argument(
            "--batches", nargs="+", type=_positive, default=list(BATCHES),
            help="batch sizes to sample (default: 1 to 512)",
        )  # fmt: skip
        _add_sample_options(sub)
        if name == "collect":
            sub.add_argument("--out", required=True, help="directory of the config-times CSVs")
            sub.add_argument("--configs", type=_positive, default=40, help="sampled per pass")
            sub.add_argument("--passes", nargs="+", default=sorted(PASSES), choices=sorted(PASSES))
            sub.add_argument("--loop", action="store_true", help="loop timing, not CUDA graphs")
            sub.add_argument(
                "--as-launched", action="store_true",
                help="time each tile as the launcher runs it (its row chunks even; wgrad: its "
                "walk, producer warps)",
            )  # fmt: skip
            sub.add_argument(
                "--where", nargs="+", action="extend", default=None, metavar="FIELD=V[,V...]",
                help="sample only configs whose fields take these values (each layer's default "
                "still timed), e.g. --where block_p=4,8 prefetch=6",
            )  # fmt: skip
    sub = commands.add_parser("retime", help="time older kernels' rows again on today's (GPU)")
    sub.add_argument("times", nargs="+", help="config-times CSV files")
    sub.add_argument("--pass", dest="pass_name", required=True, choices=sorted(PASSES))
    sub.add_argument(
        "--kernel", required=True,
        help="the sources digest of the rows to time again (older kernels')",
    )  # fmt: skip
    sub.add_argument("--gpu", help="the GPU name of the rows (this machine's GPU)")
    sub.add_argument("--launch", choices=LAUNCHES, help="only the rows of this launch")
    sub.add_argument("--out", required=True, help="directory of the new config-times CSVs")
    sub.add_argument("--loop", action="store_true", help="loop timing, not CUDA graphs")
    sub.set_defaults(pool=False)
    sub = commands.add_parser("compare", help="time chosen against heuristic configs (GPU)")
    # (The campaign's and layers' options default to None, resolved in _compare: given
    # where they do not apply, they are refused, not ignored.)
    sub.add_argument(
        "--layers", type=_positive,
        help=f"layers in the campaign (default {COMPARE_LAYERS})",
    )  # fmt: skip
    sub.add_argument(
        "--seed", type=int, help=f"which layers the campaign samples (default {COMPARE_SEED})"
    )
    _add_sample_options(sub, defaults=False)
    sub.add_argument(
        "--shapes", nargs="+", metavar="NxCxHxW",
        help="these layers instead of a campaign's (with --r, --s, --pad and --dtype)",
    )  # fmt: skip
    _add_layer_options(sub)
    sub.add_argument("--exclude", nargs="+", help="config-times CSVs to leave out")
    sub.add_argument(
        "--passes", nargs="+", choices=sorted(PASSES), help="passes to time (default: all)"
    )
    sub.add_argument("--loop", action="store_true", help="loop timing, not CUDA graphs")
    sub.add_argument("--out", help="CSV file to write")
    sub.add_argument(
        "--from", dest="from_csv", nargs="+", metavar="CSV",
        help="time nothing: report on these --out files of earlier runs, their layers pooled",
    )  # fmt: skip
    sub.add_argument(
        "--model", nargs="+",
        help="model files (spio-perfmodel train) that choose instead of the shipped ones, "
        "one per pass of --passes",
    )  # fmt: skip
    sub.add_argument(
        "--selection", choices=SELECTIONS,
        help="how the chosen configs are picked (default: SPIO_CONFIG_SELECTION's mode, "
        "else model); under another than model the shipped models' choices are timed too",
    )  # fmt: skip
    commands.add_parser("shipped", help="list the models that ship")
    tunings = commands.add_parser("tunings", help="where autotuning keeps its choices")
    tunings.add_argument("--forget", action="store_true", help="delete them all")
    tune = commands.add_parser("tune", help="time a model's shortlist for a layer (GPU)")
    tune.add_argument("shape", help="N x C x H x W, e.g. 128x64x64x64")
    tune.add_argument("--pass", dest="pass_name", required=True, choices=sorted(PASSES))
    tune.add_argument("--device", type=int, default=0, help="CUDA device (default 0)")
    tune.add_argument(
        "--candidates", type=_positive, default=AUTOTUNE_CANDIDATES,
        help="best-predicted configs to time (default %(default)s)",
    )  # fmt: skip
    _add_layer_options(tune)
    return parser


#: A layer's filter rows and columns, and its dtype, where the command line gives none (its
#: padding: the filter's same_padding).
DEFAULT_FILTER = 3
DEFAULT_DTYPE: Dtype = "float16"
#: compare's campaign where the command line names none.
COMPARE_LAYERS = 16
COMPARE_SEED = 1


def _add_layer_options(parser: argparse.ArgumentParser) -> None:
    """The filter, padding and dtype of layers given as N x C x H x W (defaults: None,
    DEFAULT_FILTER and DEFAULT_DTYPE in _layer, so a command can tell them given)."""
    parser.add_argument("--r", type=int, help=f"filter rows (default {DEFAULT_FILTER})")
    parser.add_argument("--s", type=int, help=f"filter columns (default {DEFAULT_FILTER})")
    parser.add_argument(
        "--pad", type=int, nargs="+", metavar="P",
        help="zero padding: 1, 2 or 4 ints (every side; vertical and horizontal; top, bottom, "
        "left and right; default: the output as large as the input, 1 for 3 x 3, 0 for 1 x 1)",
    )  # fmt: skip
    parser.add_argument(
        "--dtype", choices=("float16", "bfloat16"),
        help=f"activations' and weights' type (default {DEFAULT_DTYPE})",
    )  # fmt: skip


def _add_sample_options(parser: argparse.ArgumentParser, defaults: bool = True) -> None:
    """The channel counts and image sides a campaign samples from (_campaign's
    NETWORK_CHANNELS and NETWORK_SIDES are those the shipped models never timed); without
    defaults, None where not given (the command resolves them)."""
    parser.add_argument(
        "--channels", nargs="+", type=_channel_count,
        default=list(CHANNELS) if defaults else None,
        help="channel counts to sample, multiples of 8 (default: 64 to 1024, powers of two)",
    )  # fmt: skip
    parser.add_argument(
        "--sides", nargs="+", type=_positive, default=list(SIDES) if defaults else None,
        help="image sides (H = W) to sample (default: 7 to 112)",
    )  # fmt: skip


def _channel_count(text: str) -> int:
    value = _positive(text)
    if value % 8:
        raise argparse.ArgumentTypeError(f"must be a multiple of 8 (the group width), got {text}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive int, got {text}")
    return value


def main(argv: Sequence[str] | None = None) -> None:
    """Run the spio-perfmodel command line."""
    args = _parser().parse_args(argv)
    try:
        commands = {
            "evaluate": _evaluate,
            "train": _train,
            "pick": _pick,
            "collect": _collect,
            "layers": _layers,
            "compare": _compare,
            "retime": _retime,
            "shipped": _shipped,
            "tune": _tune,
            "tunings": _tunings,
        }
        commands[args.command](args)
    except ValueError as error:
        print(f"spio-perfmodel: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    except ModuleNotFoundError as error:
        if error.name not in _EXTRAS:
            raise
        print(
            f"spio-perfmodel: error: {args.command} needs {error.name}: "
            f'pip install "spio-perfmodel[{_EXTRAS[error.name]}]"',
            file=sys.stderr,
        )
        raise SystemExit(2) from None
    except BrokenPipeError:
        # The reader went away (`spio-perfmodel layers | head`): stop quietly, and keep the
        # interpreter's final flush from raising again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1) from None
    except OSError as error:
        # A path that is missing, a directory or unreadable: one line, as for bad input.
        # (After BrokenPipeError, which is an OSError too.)
        where = f"{error.filename}: {error.strerror}" if error.filename else str(error)
        print(f"spio-perfmodel: error: {where}", file=sys.stderr)
        raise SystemExit(2) from None


#: The optional dependencies some commands import, and the extra that installs each:
#: timing on the GPU goes through torch and spio-kernels' benchmark, held-out evaluation
#: through scikit-learn's folds.
_EXTRAS = {"torch": "collect", "matplotlib": "collect", "sklearn": "train"}


if __name__ == "__main__":
    main()
