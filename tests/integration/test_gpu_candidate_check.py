"""tools/gpu-candidate-check.sh without a GPU: a stand-in interpreter takes the install, the
training and the timed compare runs, and the real `compare --from` pools what they wrote,
so the runs per filter size, what the campaign leaves out and the verdict are checked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "gpu-candidate-check.sh"

#: Each timed run writes a row per pass: its first named layer (or a fixed one for the
#: campaign), the candidate 1.1x the shipped choice.
_FAKE_COMPARE = """
import sys
from spio.perfmodel import _compare
from spio.perfmodel._data import parse_layer_key
args = sys.argv[1:]
out = args[args.index("--out") + 1]
shape = args[args.index("--shapes") + 1] if "--shapes" in args else "16x64x32x32"
r = args[args.index("--r") + 1] if "--r" in args else "3"
pad = args[args.index("--pad") + 1] if "--pad" in args else "1"
key = shape + ("" if r == "3" else f" {r}x{r} pad {' '.join([pad] * 4)}")
first = args.index("--passes") + 1
passes = args[first:args.index("--model")]
layer = parse_layer_key(key)
rows = [_compare.Comparison(layer, p, "h", "c", "model", 6, 5, 20, "s", 5.5) for p in passes]
_compare.write_csv(rows, out)
print("a table")
"""


def _stand_in(tmp_path: Path) -> Path:
    fake = tmp_path / "fake_compare.py"
    fake.write_text(_FAKE_COMPARE)
    log = tmp_path / "calls.txt"
    python = tmp_path / "python"
    python.write_text(
        f"""#!/usr/bin/env bash
echo "$*" >> {log}
case "$1 $2" in "-m pip") exit 0 ;; esac
[ "$1" = - ] && {{ cat >/dev/null; exit 0; }}
[ "$1" = -c ] && {{ echo "digest-of-${{2: -8:5}}"; exit 0; }}  # sources_digest('PASS')
shift 2  # -m spio.perfmodel._cli
case "$1" in
train) while [ "$1" != --out ]; do shift; done; touch "$2"; echo trained ;;
compare) if [ "$2" = --from ]; then exec {sys.executable} -m spio.perfmodel._cli "$@"; fi
         exec {sys.executable} {fake} "$@" ;;
esac
"""
    )
    python.chmod(0o755)
    return python


def _run(tmp_path: Path, passes: str = "fprop", **env: str) -> tuple[Path, list[str]]:
    (tmp_path / "data").mkdir()
    times = []
    for name in passes.split(","):
        times.append(tmp_path / "data" / f"conv2d_gw8_configs_{name}.csv")
        times[-1].write_text("")
    out = tmp_path / "out"
    environment = {**os.environ, "PYTHON": str(_stand_in(tmp_path)), **env}
    subprocess.run(
        ["bash", str(SCRIPT), str(out), passes, *map(str, times)],
        cwd=tmp_path, env=environment, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return out, (tmp_path / "calls.txt").read_text().splitlines()


def test_one_run_per_filter_size_and_one_verdict_over_them(tmp_path: Path) -> None:
    out, calls = _run(tmp_path)
    # Few enough files for the device tool to bring back (eight at most).
    assert sorted(path.name for path in out.iterdir()) == [
        "candidate_fprop.ubj", "compare.txt", "compare_3x3.csv", "compare_5x5.csv",
        "compare_7x7.csv", "compare_campaign.csv", "train.txt",
    ]  # fmt: skip
    (train,) = [call for call in calls if " train " in call]
    assert "--pass fprop --kernel digest-of-fprop --out" in train
    runs = [call for call in calls if " compare " in call and "--from" not in call]
    assert len(runs) == 4
    assert "--shapes 32x64x64x64" in runs[0]
    assert "--r" not in runs[0]
    assert "--r 5 --s 5 --pad 2" in runs[1]
    assert "64x160x28x28" in runs[1]
    assert "--r 7 --s 7 --pad 3" in runs[2]
    assert "128x96x56x56" in runs[2]
    # The campaign leaves out the layers the candidate trained on.
    assert f"--exclude {tmp_path}/data/conv2d_gw8_configs_fprop.csv" in runs[3]
    verdict = (out / "compare.txt").read_text().splitlines()
    assert verdict[-3] == "== every run pooled"
    assert verdict[-2].startswith("fprop: chosen over heuristic 1.200x (geometric mean of 4 layers")
    assert verdict[-1].startswith(
        "fprop: chosen over the shipped model's choice 1.100x (geometric mean of 4 layers"
    )


def test_a_list_set_to_none_skips_its_run(tmp_path: Path) -> None:
    out, calls = _run(tmp_path, CHECK_SHAPES_5="none", CHECK_SHAPES="8x64x16x16")
    assert not (out / "compare_5x5.csv").exists()
    runs = [call for call in calls if " compare " in call and "--from" not in call]
    assert len(runs) == 3
    assert "--shapes 8x64x16x16 --out" in runs[0]
    assert "geometric mean of 3 layers" in (out / "compare.txt").read_text().splitlines()[-1]


def test_several_passes_train_a_model_each_and_share_every_run(tmp_path: Path) -> None:
    out, calls = _run(tmp_path, "fprop,dgrad", TRAIN_ARGS="--launch tile")
    assert sorted(path.name for path in out.iterdir()) == [
        "candidate_dgrad.ubj", "candidate_fprop.ubj", "compare.txt", "compare_3x3.csv",
        "compare_5x5.csv", "compare_7x7.csv", "compare_campaign.csv", "train.txt",
    ]  # fmt: skip
    trains = [call for call in calls if " train " in call]
    assert [call.split(" --pass ")[1].split(" --out")[0] for call in trains] == [
        "fprop --kernel digest-of-fprop --launch tile",
        "dgrad --kernel digest-of-dgrad --launch tile",
    ]
    runs = [call for call in calls if " compare " in call and "--from" not in call]
    assert len(runs) == 4
    models = f"--model {out}/candidate_fprop.ubj {out}/candidate_dgrad.ubj"
    assert all(f"--passes fprop dgrad {models}" in run for run in runs)
    verdict = (out / "compare.txt").read_text().splitlines()
    assert [line.split(":")[0] for line in verdict[-4:]] == ["fprop", "fprop", "dgrad", "dgrad"]
    assert all("(geometric mean of 4 layers" in line for line in verdict[-4:])
    assert "shipped model's choice 1.100x" in verdict[-3]
