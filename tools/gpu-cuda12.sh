#!/usr/bin/env bash
# Run GPU tests on the CUDA 12 stack on the GPU test machine, which ships only CUDA 13: the
# machine's packages (torch, cuda-core, cuda-pathfinder) with the wheels of .whl-cu12/ ahead
# of them (cuda-bindings 12, NVRTC and runtime headers 12.4, the floor of spio-jit's cu12
# extra; tools/fetch-gpu-wheels.sh downloads them), and the workspace installed editable
# and without dependencies. The tests fail unless NVRTC 12 and cuda-bindings 12 are the ones
# loaded (SPIO_JIT_TEST_EXPECT_CUDA_MAJOR).
#
# Carry .whl-cu12 alone: with .whl too, a run would carry more than the machine takes.
#
# Usage: tools/gpu-cuda12.sh OUT_DIR [pytest arguments; default: spio-jit's tests, spio-dims'
#        GPU and NVRTC tests and spio-torch's conv2d_gw8 tests, the slow ones left out]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: tools/gpu-cuda12.sh OUT_DIR [pytest arguments]}
shift
mkdir -p "$out"
cd "$root"
if ! compgen -G ".whl-cu12/*.whl" >/dev/null; then
    echo "no wheels in .whl-cu12/: run tools/fetch-gpu-wheels.sh first" >&2
    exit 2
fi

# The machine's interpreter is itself a virtual environment (torch's), so a new one on top of
# it would not see its packages: the CUDA 12 wheels go into a folder of their own that
# PYTHONPATH puts before the interpreter's site-packages instead.
python=${PYTHON:-python3}
site=${SPIO_CUDA12_SITE:-/tmp/spio-cuda12-site}
"$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$site" .whl-cu12/*.whl
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
# The workspace, as for the CUDA 13 runs (its build backend comes from the folder above);
# its environment.txt then names the CUDA 12 packages.
"$root/tools/gpu-install.sh" "$out" >/dev/null

export SPIO_JIT_TEST_EXPECT_CUDA_MAJOR=12
# .whl-cu12/ has no xgboost (the carry limit), so where the machine lacks it too the launchers
# take the heuristic's configs and the autotuning tests, whose shortlists come from the
# models, are left out: this run tests the CUDA stack, not the models.
models=1
if ! "$python" -c "import xgboost" 2>/dev/null; then
    export SPIO_CONFIG_SELECTION=heuristic
    models=0
fi
if [ $# -eq 0 ]; then
    set -- packages/spio-jit/tests packages/spio-dims/tests/gpu packages/spio-dims/tests/nvrtc \
        packages/spio-torch/tests/test_conv2d_gw8_gpu.py -m "not slow"
    if [ "$models" = 0 ]; then
        set -- "$@" -k "not autotun"
    fi
fi
"$python" -m spio.jit doctor 2>&1 | tee "$out/doctor-cuda12.txt"
exec "$python" -m pytest -p no:cacheprovider -q "$@"
