#!/usr/bin/env bash
# Check candidate latency models on the GPU machine before they ship: train one per pass from
# config-times CSVs, then time their choices beside the shipped model's and the heuristic's in
# one process (spio-perfmodel compare --model), on named layers of each filter size and on a
# campaign's fresh layers, and pool every run into one verdict (compare --from): the
# geometric-mean speed-up over the shipped choice with its 95% bootstrap interval. Ship only
# where the interval clears 1.0.
#
# Installs the workspace (tools/gpu-install.sh, its logs in /tmp so that OUT_DIR keeps few
# files: the device tool brings back at most eight) and writes into OUT_DIR:
# candidate_<pass>.ubj per pass, train.txt, compare.txt (every run's table, then the pooled
# verdict) and compare_<run>.csv per run.
#
# Usage: tools/gpu-candidate-check.sh OUT_DIR PASSES CSV...
#   PASSES: one pass or several joined by commas ("fprop,dgrad"): each run times them all in
#   one process, which takes less of the machine's time than a check per pass (two passes
#   of 47 layers ran in about 350 s on an H200).
#   CSV...: the rows to train on (e.g. the GPU's data folder's seed*/ files and a new
#   campaign's), as `spio-perfmodel train` takes them; each pass trains on its own rows of
#   them.
# Environment:
#   TRAIN_ARGS      more options for train (default none). Each pass trains on the rows of
#                   today's kernels (--kernel, the pass's sources digest), the kernels the
#                   comparison runs; a --kernel here overrides it
#   CHECK_SHAPES    3 x 3 layers (default: the targets' seven and seven of network widths)
#   CHECK_SHAPES_5  5 x 5 layers, padding 2 (default: twelve of 64 to 1024 channels)
#   CHECK_SHAPES_7  7 x 7 layers, padding 3 (default: fourteen of 64 to 768 channels)
#                   (compare's filter options hold for a whole run: one run per size; the
#                   defaults beyond the targets are the sixty-third session's held-out
#                   layers; set a list to "none" to skip its run)
#   CHECK_LAYERS    fresh campaign layers (default 16), CHECK_SEED their seed (default 14:
#                   no shipped model trained on it); the layers of the training CSVs are
#                   left out
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: tools/gpu-candidate-check.sh OUT_DIR PASSES CSV..."
out=${1:?$usage}
IFS=, read -r -a passes <<<"${2:?$usage}"
shift 2
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
shapes3=${CHECK_SHAPES:-"32x64x64x64 64x128x32x32 64x64x64x64 512x256x14x14 32x1024x16x16 \
128x1024x16x16 256x256x14x14 16x768x10x10 64x96x10x10 64x512x14x14 64x96x56x56 \
128x160x28x28 32x192x56x56 64x160x56x56"}
shapes5=${CHECK_SHAPES_5:-"64x160x28x28 32x320x14x14 16x96x56x56 128x192x28x28 8x1024x14x14 \
64x96x56x56 16x320x28x28 128x160x14x14 8x768x14x14 32x384x7x7 2x384x48x48 8x256x28x28"}
shapes7=${CHECK_SHAPES_7:-"2x512x56x56 16x256x32x32 32x192x28x28 128x96x56x56 8x384x14x14 \
64x768x7x7 32x96x56x56 64x384x14x14 16x768x7x7 4x384x28x28 128x192x20x20 64x512x7x7 \
256x64x14x14 16x64x32x32"}
python=${PYTHON:-python3}
mkdir -p "$out"
# Absolute paths: the runs below work from the checkout's root.
csvs=()
for csv in "$@"; do
    csvs+=("$(cd "$(dirname "$csv")" && pwd)/$(basename "$csv")")
done
out=$(cd "$out" && pwd)

"$root/tools/gpu-install.sh" /tmp/spio-install >/dev/null
cd "$root"
export SPIO_JIT_PROGRESS=0 PYTHONUNBUFFERED=1
eval "extra=(${TRAIN_ARGS:-})"
models=()
: >"$out/train.txt"
for pass in "${passes[@]}"; do
    models+=("$out/candidate_$pass.ubj")
    kernel=$("$python" -c "from spio.kernels.conv2d_gw8.sources_digest import sources_digest
print(sources_digest('$pass'))")
    "$python" -m spio.perfmodel._cli train "${csvs[@]}" --pass "$pass" --kernel "$kernel" \
        "${extra[@]}" --out "${models[-1]}" 2>&1 | tee -a "$out/train.txt"
done

# The verdict pools compare_*.csv: an earlier check's in the same OUT_DIR must not join it.
rm -f "$out"/compare_*.csv
: >"$out/compare.txt"
run() {  # run NAME COMPARE-OPTIONS...: one compare run, its table appended to compare.txt
    local name=$1
    shift
    echo "== $name" >>"$out/compare.txt"
    "$python" -m spio.perfmodel._cli compare --passes "${passes[@]}" --model "${models[@]}" "$@" \
        --out "$out/compare_$name.csv" 2>&1 | tee -a "$out/compare.txt"
}
read -r -a named3 <<<"$shapes3"
read -r -a named5 <<<"$shapes5"
read -r -a named7 <<<"$shapes7"
[ "$shapes3" = none ] || run 3x3 --shapes "${named3[@]}"
[ "$shapes5" = none ] || run 5x5 --shapes "${named5[@]}" --r 5 --s 5 --pad 2
[ "$shapes7" = none ] || run 7x7 --shapes "${named7[@]}" --r 7 --s 7 --pad 3
run campaign --layers "${CHECK_LAYERS:-16}" --seed "${CHECK_SEED:-14}" --exclude "${csvs[@]}" \
    || echo "campaign: no run (above); the verdict pools the named runs" | tee -a "$out/compare.txt"
echo "== every run pooled" >>"$out/compare.txt"
"$python" -m spio.perfmodel._cli compare --from "$out"/compare_*.csv | grep -E "^($(IFS='|'; echo "${passes[*]}")): " \
    | tee -a "$out/compare.txt"
