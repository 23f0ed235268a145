#!/usr/bin/env bash
# Run Spio's GPU tier on the GPU test machine: install the workspace (tools/gpu-install.sh),
# then run tools/gpu_tier.py, the same tier definition `nox -s gpu` uses.
#
# Usage: tools/gpu-tests.sh OUT_DIR [extra pytest arguments]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: tools/gpu-tests.sh OUT_DIR [pytest args]}
shift
"$root/tools/gpu-install.sh" "$out"
cd "$root"
exec "${PYTHON:-python3}" tools/gpu_tier.py --out "$out" "$@"
