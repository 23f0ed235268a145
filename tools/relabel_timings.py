"""Relabel config times and shipped models from one version of a pass's kernels to another.

    python tools/relabel_timings.py --pass wgrad --old 1af8572f5019 [--new DIGEST]

Only for a change that leaves what every config compiles to and how it launches as it was,
so that the timings still describe the kernels: a heuristic's rule, a comment, a docstring
(the sources digest covers whole files; see CONTRIBUTING, "Changing a kernel"). Show that
first, for example by hashing the generated types header and the launch geometry of a
sample of configs before and after the change. Rewrites, in place, the `kernel` column of
the pass's rows in packages/spio-perfmodel/data/*/seed*/conv2d_gw8_configs_<pass>.csv and
the `kernel` of the pass's shipped models; --new defaults to the pass's digest now.

--unless-defining MACRO relabels only the rows whose config's generated types header (as the
sources generate it now) does not define MACRO: for a change that alters the code of just
the configs that a new macro of the header marks (fprop's CONV2D_GW8_SHORT_LAST_CHUNK, say).
Those rows keep the old digest, which training (`spio-perfmodel train --kernel`) then leaves
out, until a campaign times them again. The shipped models are relabelled whole: what they
chose runs as before or, where it is a marked config, faster (what such a change is for),
and the configs they know as timed on their training layers were timed. Say in the pass's
notes that their trees' times of the marked configs describe the code before.

--unless-evened relabels only the rows that do not time a tile as launched (the `launch`
column "launcher") whose chunks the launcher now cuts evenly (even_chunks): for a change of
the launcher's placement that runs those tiles another way, while every config given to a
kernel still runs as it did.
"""

from __future__ import annotations

import argparse
import csv
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spio.kernels.conv2d_gw8 import dgrad_spec, fprop_spec, wgrad_types
from spio.kernels.conv2d_gw8.even_chunks import even_chunks
from spio.kernels.conv2d_gw8.sources_digest import PASS_FILES, sources_digest
from spio.perfmodel._data import _row
from spio.perfmodel._model import LatencyModel
from spio.perfmodel._shipped import models_dir

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "packages" / "spio-perfmodel" / "data"


#: Each pass's generated types header of (params, config).
GENERATE_TYPES: dict[str, Callable[[Any, Any], str]] = {
    "fprop": fprop_spec.generate_types,
    "dgrad": dgrad_spec.generate_types,
    "wgrad": wgrad_types.generate_types,
}


def accepted_row(record: dict[str, str]) -> Any:
    """The ConfigTime of a CSV record, or None where today's kernel no longer accepts its
    config (such rows are left as they are)."""
    try:
        return _row(dict(record))
    except (KeyError, ValueError):
        return None


def defines(row: Any, macro: str) -> bool:
    """Whether the config of a row (accepted_row) generates a types header that defines
    macro."""
    header = GENERATE_TYPES[row.pass_name](row.params, row.config)
    return any(
        line == f"#define {macro}" or line.startswith(f"#define {macro} ")
        for line in header.splitlines()
    )


def launched_evened(row: Any) -> bool:
    """Whether a row (accepted_row) times its tile as launched and the launcher now cuts that
    tile's row chunks evenly."""
    params = dgrad_spec.to_fprop_params(row.params) if row.pass_name == "dgrad" else row.params
    return row.launch == "launcher" and even_chunks(params, row.config) != row.config


def relabel_csv(
    path: Path,
    pass_name: str,
    old: str,
    new: str,
    unless_defining: str | None = None,
    unless_evened: bool = False,
) -> int:
    """Rewrite the kernel column of path's rows of pass_name timed with old, but for those
    whose config's types header defines unless_defining and, with unless_evened, those
    launched_evened says; return how many. Every other byte stays as it was (the kernel and
    pass_name columns are neighbours, and a digest is hex, so the pair is found as text)."""
    with path.open(newline="") as file:  # keep each line's ending as it is
        lines = file.read().splitlines(keepends=True)
    header = next(csv.reader(io.StringIO(lines[0]))) if lines else []
    if "kernel" not in header[:-1] or header[header.index("kernel") + 1] != "pass_name":
        raise ValueError(f"{path}: kernel and pass_name are not neighbouring columns")
    before, after = f",{old},{pass_name},", f",{new},{pass_name},"

    def relabels(line: str) -> bool:
        if before not in line:
            return False
        if unless_defining is None and not unless_evened:
            return True
        row = accepted_row(dict(zip(header, next(csv.reader(io.StringIO(line))), strict=True)))
        if row is None or (unless_evened and launched_evened(row)):
            return False
        return unless_defining is None or not defines(row, unless_defining)

    relabelled = [relabels(line) for line in lines[1:]]
    if any(relabelled):
        body = (
            line.replace(before, after, 1) if relabel else line
            for line, relabel in zip(lines[1:], relabelled, strict=True)
        )
        with path.open("w", newline="") as file:
            file.write(lines[0] + "".join(body))
    return sum(relabelled)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pass", dest="pass_name", required=True, choices=sorted(PASS_FILES))
    parser.add_argument("--old", required=True, help="the digest the rows and models carry")
    parser.add_argument("--new", help="the digest to give them (default: the pass's now)")
    parser.add_argument(
        "--unless-defining",
        metavar="MACRO",
        help="leave the rows whose config's types header defines MACRO on the old digest",
    )
    parser.add_argument(
        "--unless-evened",
        action="store_true",
        help="leave the rows of tiles timed as launched whose chunks the launcher now evens",
    )
    args = parser.parse_args()
    new = args.new or sources_digest(args.pass_name)
    if new == args.old:
        raise SystemExit(f"--old and the new digest are both {new}: nothing to relabel")
    for path in sorted(DATA.glob(f"*/seed*/conv2d_gw8_configs_{args.pass_name}.csv")):
        count = relabel_csv(
            path, args.pass_name, args.old, new, args.unless_defining, args.unless_evened
        )
        print(f"{path.relative_to(ROOT)}: {count} rows")
    for path in sorted(models_dir().glob(f"*/{args.pass_name}.ubj")):
        model = LatencyModel.load(path)
        if model.kernel == args.old:
            model.kernel = new
            model.save(path)
            print(f"{path.relative_to(ROOT)}: kernels {args.old} -> {new}")


if __name__ == "__main__":
    main()
