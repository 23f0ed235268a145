#!/usr/bin/env bash
# Time again, on the GPU machine, the rows of one GPU's latency data that a change to some
# configs' code left on older digests (spio-perfmodel retime), so that the models can be
# trained with them. Installs the workspace (tools/gpu-install.sh) when it is not importable.
#
# Usage: tools/gpu-retime.sh OUT_DIR PASS:DIGEST [PASS:DIGEST ...]
#   OUT_DIR gets retimed/conv2d_gw8_configs_<pass>.csv (today's digests) and a log; a run that
#   stops at the machine's time limit resumes from those CSVs (carry them back in OUT_DIR).
#   PASS:DIGEST: a pass and the older digest of the rows to retime, e.g. the H200's steady-walk
#   rows of the fifty-ninth session, fprop:5b198f8d8c7f dgrad:5570a02c1209 (2150 and 1224
#   rows: about 400 and 230 s on an H200).
# GPU_FOLDER (environment): the data folder of the machine's GPU, default nvidia_h200.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: tools/gpu-retime.sh OUT_DIR PASS:DIGEST [PASS:DIGEST ...]"
out=${1:?$usage}
shift
jobs=("$@")
if [ ${#jobs[@]} -eq 0 ]; then
    echo "$usage" >&2
    exit 2
fi
python=${PYTHON:-python3}
mkdir -p "$out"
cd "$root"
"$python" -c "import spio.perfmodel, spio.kernels" 2>/dev/null || tools/gpu-install.sh "$out"

export SPIO_JIT_PROGRESS=0 PYTHONUNBUFFERED=1
data=packages/spio-perfmodel/data/${GPU_FOLDER:-nvidia_h200}
for job in "${jobs[@]}"; do
    pass=${job%%:*}
    digest=${job#*:}
    "$python" -m spio.perfmodel._cli retime "$data"/seed*/conv2d_gw8_configs_"$pass".csv \
        --pass "$pass" --kernel "$digest" --out "$out/retimed" 2>&1 | tee -a "$out/retime.log"
done
