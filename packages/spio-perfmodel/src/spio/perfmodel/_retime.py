"""Time again, on today's kernels, the configs that rows of older kernels timed.

A change to a pass's kernels changes its sources digest, and training leaves the rows of
other digests out (`spio-perfmodel train --kernel`). Where a change alters the code of some
configs only (tools/relabel_timings.py --unless-defining), those configs' rows keep the old
digest and a model trained on today's rows no longer sees them: its picks on those layers
move, and its trees never learn how those configs run now. Retiming them is cheaper than a
new campaign (the same layers and configs, not a fresh sample) and keeps each layer's timed
configs as they were, so that models trained with the new rows compare like for like with
the ones before.

The rows are timed as they were: a tile row as that tile, a launched row ("launcher") as a
launch that chose its tile runs it on this GPU (the benchmark's --as-launched). The new
rows land in out_dir's config-times CSVs with today's digest; a layer already there (for
its pass and launch) is skipped, so an interrupted run resumes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spio.kernels.conv2d_gw8.params import Conv2dGw8Params

from ._campaign import config_times_path
from ._data import ConfigTime, read_config_times


@dataclass(frozen=True)
class RetimeJob:
    """One layer's configs of one pass, to time one way (launch "tile" or "launcher")."""

    pass_name: str
    launch: str
    params: Conv2dGw8Params
    configs: tuple[Any, ...]


def retime_jobs(rows: Sequence[ConfigTime], out_dir: str | Path) -> list[RetimeJob]:
    """The layers and configs of rows, by pass and launch, in the rows' order, without those
    whose layer out_dir's CSVs already hold for that pass and launch (timed by an earlier,
    interrupted run). The rows must be of one GPU, the one to time on (ValueError)."""
    gpus = sorted({row.gpu for row in rows})
    if len(gpus) > 1:
        raise ValueError(f"rows of one GPU are timed again on it; rows have GPUs {gpus}")
    done = _layers_done(Path(out_dir), {row.pass_name for row in rows})
    jobs: dict[tuple[str, str, Conv2dGw8Params], dict[Any, None]] = {}
    for row in rows:
        key = (row.pass_name, row.launch, row.params)
        if key not in done:
            jobs.setdefault(key, {})[row.config] = None
    return [
        RetimeJob(p, launch, params, tuple(configs))
        for (p, launch, params), configs in jobs.items()
    ]


def retime(
    rows: Sequence[ConfigTime],
    out_dir: str | Path,
    graph: bool = True,
    launches: int = 20,
    repetitions: int = 9,
) -> list[RetimeJob]:
    """Time each row's config again on GPU 0 with today's kernels, as the benchmark times a
    campaign's (graph: CUDA-graph replays, its --cuda-graph), into out_dir's config-times
    CSVs; return the jobs timed now (retime_jobs). The rows must be of this GPU: another
    GPU's times are no retiming of them (ValueError naming both). Needs a GPU, torch and the
    benchmark's dependencies (spio-kernels[bench])."""
    import spio.jit

    spio.jit.device_info(0)  # (a clear ValueError where there is no GPU, before torch's)
    import torch

    from spio.kernels.conv2d_gw8 import bench
    from spio.kernels.conv2d_gw8.bench_results import write_config_times

    gpu = torch.cuda.get_device_name(0)
    theirs = {row.gpu for row in rows}
    if theirs - {gpu}:
        raise ValueError(f"the rows were timed on {sorted(theirs)}; this GPU is {gpu!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    jobs = retime_jobs(rows, out)
    for job in jobs:
        # A launched row's time is its tile's as a launch runs it: the placed config's.
        runs = (
            bench.launched_configs(job.pass_name, job.params, job.configs)
            if job.launch == "launcher"
            else {config: config for config in job.configs}
        )
        timed = list(dict.fromkeys(runs.values()))
        bench.precompile(job.params, {job.pass_name: timed})
        buffers = bench.Buffers(job.params, [job.pass_name], {job.pass_name: timed})
        times, _ = bench.bench_pass(
            job.pass_name, job.params, timed, buffers, launches, repetitions, graph=graph
        )
        write_config_times(
            gpu,
            job.pass_name,
            job.params,
            {config: times[runs[config]] for config in job.configs},
            config_times_path(out, job.pass_name),
            timing="graph" if graph else "loop",
            launch=job.launch,
        )
    return jobs


def _layers_done(out: Path, passes: set[str]) -> set[tuple[str, str, Conv2dGw8Params]]:
    """(pass, launch, layer) of every row in out's config-times CSVs of passes."""
    done = set()
    for pass_name in passes:
        path = config_times_path(out, pass_name)
        if path.exists():
            table = read_config_times(path).select(pass_name)
            done |= {(row.pass_name, row.launch, row.params) for row in table.rows}
    return done
