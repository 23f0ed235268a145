#!/usr/bin/env bash
# Install the workspace on the GPU test machine (no internet there; it ships torch,
# cuda-bindings 13, cuda-core, cupy and NVRTC 13): the wheels carried in .whl/ (made here by
# tools/fetch-gpu-wheels.sh: the build backend and the few runtime dependencies the machine
# lacks), then the workspace packages from this checkout, editable and without
# dependencies. Writes OUT_DIR/install.log and OUT_DIR/environment.txt.
#
# The machine is handed back after the run, so installing into its interpreter is safe, and
# it leaves the packages importable for whatever the caller runs next (tests, benchmarks).
#
# Usage: tools/gpu-install.sh OUT_DIR
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: tools/gpu-install.sh OUT_DIR}
mkdir -p "$out"
cd "$root"

python=${PYTHON:-python3}
if compgen -G ".whl/*.whl" >/dev/null; then
    "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir .whl/*.whl
fi

editable=()
for package in packages/spio-*; do
    editable+=(-e "$package")
done
"$python" -m pip install -q --no-index --no-deps --no-build-isolation "${editable[@]}" \
    2>&1 | tee "$out/install.log"

{
    echo "== environment"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true
    "$python" - <<'PY'
import importlib.metadata as md
for name in ("torch", "cuda-bindings", "cuda-core", "cupy-cuda13x", "nvidia-cuda-nvrtc",
             "nvidia-cuda-nvrtc-cu12",
             "xgboost-cpu", "scikit-learn", "spio-dims", "spio-jit", "spio-kernels",
             "spio-perfmodel", "spio-torch"):
    try:
        print(f"{name} {md.version(name)}")
    except md.PackageNotFoundError:
        print(f"{name} (not installed)")
PY
} 2>&1 | tee "$out/environment.txt"
