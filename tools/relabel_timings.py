"""Relabel config times and shipped models from one version of a pass's kernels to another.

    python tools/relabel_timings.py --pass wgrad --old 1af8572f5019 [--new DIGEST]

Only for a change that leaves what every config compiles to and how it launches as it was,
so that the timings still describe the kernels: a heuristic's rule, a comment, a docstring
(the sources digest covers whole files; see CONTRIBUTING, "Changing a kernel"). Show that
first, for example by hashing the generated types header and the launch geometry of a
sample of configs before and after the change. Rewrites, in place, the `kernel` column of
the pass's rows in packages/spio-perfmodel/data/*/seed*/conv2d_gw8_configs_<pass>.csv and
the `kernel` of the pass's shipped models; --new defaults to the pass's digest now.
"""

from __future__ import annotations

import argparse
import csv
import io
from pathlib import Path

from spio.kernels.conv2d_gw8.sources_digest import PASS_FILES, sources_digest
from spio.perfmodel._model import LatencyModel
from spio.perfmodel._shipped import models_dir

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "packages" / "spio-perfmodel" / "data"


def relabel_csv(path: Path, pass_name: str, old: str, new: str) -> int:
    """Rewrite the kernel column of path's rows of pass_name timed with old; return how many.
    Every other byte stays as it was (the kernel and pass_name columns are neighbours, and a
    digest is hex, so the pair is found as text)."""
    with path.open(newline="") as file:  # keep each line's ending as it is
        lines = file.read().splitlines(keepends=True)
    header = next(csv.reader(io.StringIO(lines[0]))) if lines else []
    if "kernel" not in header[:-1] or header[header.index("kernel") + 1] != "pass_name":
        raise ValueError(f"{path}: kernel and pass_name are not neighbouring columns")
    before, after = f",{old},{pass_name},", f",{new},{pass_name},"
    changed = sum(before in line for line in lines[1:])
    if changed:
        with path.open("w", newline="") as file:
            file.write(lines[0] + "".join(line.replace(before, after, 1) for line in lines[1:]))
    return changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pass", dest="pass_name", required=True, choices=sorted(PASS_FILES))
    parser.add_argument("--old", required=True, help="the digest the rows and models carry")
    parser.add_argument("--new", help="the digest to give them (default: the pass's now)")
    args = parser.parse_args()
    new = args.new or sources_digest(args.pass_name)
    if new == args.old:
        raise SystemExit(f"--old and the new digest are both {new}: nothing to relabel")
    for path in sorted(DATA.glob(f"*/seed*/conv2d_gw8_configs_{args.pass_name}.csv")):
        count = relabel_csv(path, args.pass_name, args.old, new)
        print(f"{path.relative_to(ROOT)}: {count} rows")
    for path in sorted(models_dir().glob(f"*/{args.pass_name}.ubj")):
        model = LatencyModel.load(path)
        if model.kernel == args.old:
            model.kernel = new
            model.save(path)
            print(f"{path.relative_to(ROOT)}: kernels {args.old} -> {new}")


if __name__ == "__main__":
    main()
