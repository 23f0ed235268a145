#!/usr/bin/env bash
# Download into .whl/ the wheels tools/gpu-tests.sh installs on the GPU machine, which has
# no internet: the build backend for editable installs and the runtime dependencies its
# image lacks. The GPU machine runs CPython 3.12 on x86-64.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$root/.whl"
wheels=(
    hatchling==1.27.0 trove-classifiers==2025.9.11.17 editables==0.5
    platformdirs==4.5.0 xgboost-cpu==3.2.0
)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform any -d "$root/.whl" "${wheels[@]}"
ls -l "$root/.whl"
