#!/usr/bin/env bash
# Check a candidate latency model on the GPU machine before it ships: train it from
# config-times CSVs, then time its choices beside the shipped model's and the heuristic's in
# one process (spio-perfmodel compare --model), on the named layers and on a campaign's
# fresh layers.
#
# Installs the workspace (tools/gpu-install.sh, its logs in /tmp so that OUT_DIR keeps few
# files) and writes into OUT_DIR: candidate_<pass>.ubj, train.txt, compare_named.txt/.csv
# and compare_campaign.txt/.csv.
#
# Usage: tools/gpu-candidate-check.sh OUT_DIR PASS CSV...
#   CSV...: the rows to train on (e.g. the GPU's data folder's seed*/ files and a new
#   campaign's), as `spio-perfmodel train` takes them.
# Environment:
#   TRAIN_ARGS    more options for train (e.g. "--gpu 'NVIDIA H200' --pool"; default none)
#   CHECK_SHAPES  the named layers (default: the targets' seven)
#   CHECK_LAYERS  fresh campaign layers (default 16), CHECK_SEED their seed (default 14:
#                 no shipped model trained on it)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: tools/gpu-candidate-check.sh OUT_DIR PASS CSV..."
out=${1:?$usage}
pass=${2:?$usage}
shift 2
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
shapes=${CHECK_SHAPES:-"32x64x64x64 64x128x32x32 64x64x64x64 512x256x14x14 32x1024x16x16 128x1024x16x16 256x256x14x14"}
python=${PYTHON:-python3}
mkdir -p "$out"

"$root/tools/gpu-install.sh" /tmp/spio-install >/dev/null
cd "$root"
export SPIO_JIT_PROGRESS=0 PYTHONUNBUFFERED=1
model="$out/candidate_$pass.ubj"
eval "extra=(${TRAIN_ARGS:-})"
"$python" -m spio.perfmodel._cli train "$@" --pass "$pass" "${extra[@]}" --out "$model" \
    2>&1 | tee "$out/train.txt"
read -r -a named <<<"$shapes"
"$python" -m spio.perfmodel._cli compare --passes "$pass" --model "$model" \
    --shapes "${named[@]}" --out "$out/compare_named.csv" 2>&1 | tee "$out/compare_named.txt"
"$python" -m spio.perfmodel._cli compare --passes "$pass" --model "$model" \
    --layers "${CHECK_LAYERS:-16}" --seed "${CHECK_SEED:-14}" \
    --out "$out/compare_campaign.csv" 2>&1 | tee "$out/compare_campaign.txt"
