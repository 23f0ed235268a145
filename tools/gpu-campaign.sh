#!/usr/bin/env bash
# Collect latency-model data on the GPU machine: a campaign of sampled layers timed with the
# benchmark (spio-perfmodel collect), then each pass's held-out evaluation.
#
# Installs the workspace (tools/gpu-install.sh), so it runs on a bare machine, and first runs
# the campaign's GPU test, a small campaign end to end, as a check. The CSVs, the benchmark's table and the evaluations land in OUT_DIR; an
# interrupted campaign resumes from the CSVs already there.
#
# Usage: tools/gpu-campaign.sh OUT_DIR [LAYERS [CONFIGS [SEED [BATCH ...]]]]
#   LAYERS layers (default 24), CONFIGS sampled configs per pass and layer besides the
#   default (default 40), SEED of the layer sample (default 0), BATCH ...: the batch sizes to
#   sample (default 1 to 512; e.g. 256 512 for a campaign of large batches).
# CAMPAIGN_PASSES (environment): the passes to time, default "fprop dgrad wgrad"; after a
#   change to one pass's kernels only that pass needs new data (its sources digest changed).
# CAMPAIGN_AS_LAUNCHED=1 (environment): time each tile as the launcher runs it (collect
#   --as-launched: wgrad's walk and producer warps), rows of launch "launcher".
# CAMPAIGN_CHANNELS, CAMPAIGN_SIDES (environment): the channel counts and image sides to
#   sample (collect --channels, --sides), e.g. "96 160 192 320 384 768" and
#   "10 12 13 20 24 40 48", the widths and sides no shipped model has timed; default the
#   campaigns' 64 to 1024 channels and 7 to 112 sides.
# CAMPAIGN_WHERE (environment): conditions on the configs' fields that narrow the sample
#   (collect --where), e.g. "block_p=4,8 prefetch=6": a campaign aimed at a corner of the
#   space that the models mispredict; each layer's default is still timed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: tools/gpu-campaign.sh OUT_DIR [LAYERS [CONFIGS [SEED [BATCH ...]]]]}
layers=${2:-24}
configs=${3:-40}
seed=${4:-0}
batches=()
if [ $# -gt 4 ]; then
    batches=(--batches "${@:5}")
fi
read -r -a passes <<<"${CAMPAIGN_PASSES:-fprop dgrad wgrad}"
as_launched=()
if [ "${CAMPAIGN_AS_LAUNCHED:-0}" = 1 ]; then
    as_launched=(--as-launched)
fi
sample=()
if [ -n "${CAMPAIGN_CHANNELS:-}" ]; then
    read -r -a channels <<<"$CAMPAIGN_CHANNELS"
    sample+=(--channels "${channels[@]}")
fi
if [ -n "${CAMPAIGN_SIDES:-}" ]; then
    read -r -a sides <<<"$CAMPAIGN_SIDES"
    sample+=(--sides "${sides[@]}")
fi
narrow=()
if [ -n "${CAMPAIGN_WHERE:-}" ]; then
    read -r -a where <<<"$CAMPAIGN_WHERE"
    narrow=(--where "${where[@]}")
fi
python=${PYTHON:-python3}
mkdir -p "$out"

"$root/tools/gpu-install.sh" "$out"
cd "$root"
"$python" -m pytest -q -m gpu -p no:cacheprovider packages/spio-perfmodel/tests/test_collect_gpu.py

export SPIO_JIT_PROGRESS=0 PYTHONUNBUFFERED=1
"$python" -m spio.perfmodel._cli layers --layers "$layers" --seed "$seed" "${batches[@]}" \
    "${sample[@]}" | tee "$out/layers.txt"
"$python" -m spio.perfmodel._cli collect --out "$out/data" --layers "$layers" \
    --configs "$configs" --seed "$seed" --passes "${passes[@]}" "${batches[@]}" \
    "${sample[@]}" "${as_launched[@]}" "${narrow[@]}" 2>&1 | tee "$out/collect.log"
for pass in "${passes[@]}"; do
    "$python" -m spio.perfmodel._cli evaluate "$out/data/conv2d_gw8_configs_$pass.csv" \
        --pass "$pass" --folds 6 2>&1 | tee "$out/evaluate_$pass.txt"
done
