"""Compare the registers of the steady walk and the checked walk on configs whose times moved.

    uv run python tools/steady_walk_registers.py [--slowest 45] [--sampled 200] [--seed 1]

fprop's and dgrad's 5 x 5 and 7 x 7 configs walk their steady rows unchecked
(CONV2D_GW8_STEADY_WALK). The H200's rows of those configs were timed before that walk (the
campaigns' rows left on fprop 5b198f8d8c7f and dgrad 5570a02c1209 in the data's seed*
folders) and again after it (`seed_retimed_steady/`). This joins the two times of each config
and compiles (NVRTC, sm_90, no cache: no GPU needed) the slowest configs by that ratio and a
seeded sample of the rest both ways: with the generated header as it is, and without the
macro (the checked walk). For each it prints the ratio (old time over new: below 1 the steady
walk runs slower), ptxas's registers, stack frame and spill stores of both, and the blocks
an SM that registers and shared memory allow each (Hopper's limits); then the geometric mean
of the ratio where the steady walk spills more, where it fits fewer blocks an SM, and
elsewhere. The sixty-third session asked whether registers could tell which configs the
steady walk slows (docs/benchmarks-log.md).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import math
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hopper_occupancy import blocks_per_sm
from relabel_timings import accepted_row

import spio.jit
from spio.kernels.conv2d_gw8 import dgrad_spec, fprop, fprop_spec
from spio.perfmodel._data import ConfigTime

DATA = Path(__file__).resolve().parent.parent / "packages/spio-perfmodel/data/nvidia_h200"

#: Each pass's digest of the rows timed before the steady walk (the fifty-ninth session's).
BEFORE_STEADY = {"fprop": "5b198f8d8c7f", "dgrad": "5570a02c1209"}
MACRO_LINE = "#define CONV2D_GW8_STEADY_WALK 1"


_REGISTERS = re.compile(r"Used (\d+) registers")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores")


@dataclasses.dataclass(frozen=True)
class MovedConfig:
    """A config timed before and after the steady walk."""

    pass_name: str
    row: ConfigTime  # the retimed row
    before_us: float
    after_us: float

    @property
    def ratio(self) -> float:
        """The time before over the time after: below 1, the steady walk runs slower."""
        return self.before_us / self.after_us


@dataclasses.dataclass(frozen=True)
class Build:
    """What ptxas reports of one kernel build."""

    registers: int
    stack: int
    spill_stores: int


def _identity(record: dict[str, str]) -> tuple[str, ...]:
    """A row's layer and config, whatever its digest and time (older files lack some
    columns, whose defaults are filled in)."""
    defaults = {"launch": "tile", "segments": "0"}
    fields = (
        "shape", "r", "s", "padding", "dtype", "launch", "block_q", "block_g", "warp_g",
        "warp_q16", "block_p", "prefetch", "mma_k", "segments",
    )  # fmt: skip
    return tuple(record.get(name, defaults.get(name, "")) for name in fields)


def moved_configs(pass_name: str) -> Iterator[MovedConfig]:
    """The configs of pass_name with a retimed row and a row timed before the steady walk."""
    before: dict[tuple[str, ...], float] = {}
    for path in DATA.glob(f"seed*/conv2d_gw8_configs_{pass_name}.csv"):
        if path.parent.name == "seed_retimed_steady":
            continue
        with path.open(newline="") as file:
            for record in csv.DictReader(file):
                if record["kernel"] == BEFORE_STEADY[pass_name]:
                    key = _identity(record)
                    time = float(record["median_us"])
                    before[key] = min(time, before.get(key, time))
    retimed = DATA / "seed_retimed_steady" / f"conv2d_gw8_configs_{pass_name}.csv"
    with retimed.open(newline="") as file:
        for record in csv.DictReader(file):
            key = _identity(record)
            row = accepted_row(record)
            if key in before and row is not None:
                yield MovedConfig(pass_name, row, before[key], float(record["median_us"]))


def _spec(moved: MovedConfig) -> Any:
    """The spec module of moved's pass (its types header and launch geometry)."""
    return dgrad_spec if moved.pass_name == "dgrad" else fprop_spec


def builds(configs: list[MovedConfig]) -> dict[tuple[int, bool], Build]:
    """ptxas's report of each config compiled with the steady walk (True) and without."""
    verbose = spio.jit.CompileOptions(extra_flags=("-Xptxas=-v",))
    source = fprop.kernel_source()
    requests = {}
    for index, moved in enumerate(configs):
        header = _spec(moved).generate_types(moved.row.params, moved.row.config)
        if MACRO_LINE not in header:
            raise ValueError(f"{moved.row.config} on {moved.row.params} takes no steady walk")
        for steady in (True, False):
            types_h = header if steady else header.replace(MACRO_LINE, "")
            request = fprop.types_request(fprop.SOURCE_NAME, source, types_h, "sm_90")
            requests[index, steady] = dataclasses.replace(request, options=verbose)
    codes = spio.jit.compile_many(requests, progress=True, cache=False)
    reports = {}
    for key, code in codes.items():
        frames = _FRAME.findall(code.log)
        reports[key] = Build(
            registers=max(int(found) for found in _REGISTERS.findall(code.log)),
            stack=max(int(stack) for stack, _ in frames),
            spill_stores=max(int(stores) for _, stores in frames),
        )
    return reports


def _geomean(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{math.exp(sum(map(math.log, values)) / len(values)):.3f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slowest", type=int, default=45, help="the configs slowed most")
    parser.add_argument("--sampled", type=int, default=200, help="sampled from the rest")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    moved = sorted(
        (config for name in BEFORE_STEADY for config in moved_configs(name)),
        key=lambda config: config.ratio,
    )
    rest = moved[args.slowest :]
    sampled = random.Random(args.seed).sample(rest, min(args.sampled, len(rest)))
    chosen = moved[: args.slowest] + sampled
    reports = builds(chosen)
    groups: dict[str, list[float]] = {"spills more": [], "fewer blocks": [], "other": []}
    print("ratio pass layer config threads | steady: regs stack spills blocks | checked: ...")
    for index, config in enumerate(chosen):
        steady, checked = reports[index, True], reports[index, False]
        geometry = _spec(config).launch_geometry(config.row.params, config.row.config)
        blocks = [
            blocks_per_sm(build.registers, geometry.block, geometry.shared_mem)
            for build in (steady, checked)
        ]
        if steady.spill_stores > checked.spill_stores:
            group = "spills more"
        elif blocks[0] < blocks[1]:
            group = "fewer blocks"
        else:
            group = "other"
        groups[group].append(config.ratio)
        params = config.row.params
        layer = f"{params.n}x{params.c}x{params.h}x{params.w} {params.r}x{params.s} {params.dtype}"
        fields = dataclasses.astuple(config.row.config)[:7]
        print(
            f"{config.ratio:.3f} {config.pass_name} {layer} {fields} {geometry.block} | "
            f"{steady.registers} {steady.stack} {steady.spill_stores} {blocks[0]} | "
            f"{checked.registers} {checked.stack} {checked.spill_stores} {blocks[1]}  {group}"
        )
    for group, ratios in groups.items():
        print(f"{group}: {len(ratios)} configs, old over new {_geomean(ratios)}")


if __name__ == "__main__":
    main()
