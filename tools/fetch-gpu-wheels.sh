#!/usr/bin/env bash
# Download into .whl/ the wheels tools/gpu-tests.sh installs on the GPU machine, which has
# no internet: the build backend for editable installs and the runtime dependencies its
# image lacks. The GPU machine runs CPython 3.12 on x86-64. Also, into .whl-cu12/, the CUDA 12
# stack at spio-jit's cu12 floor (cuda-bindings 12, NVRTC and the runtime headers 12.4) that
# tools/gpu-cuda12.sh runs the GPU tests on there: the machine itself ships only CUDA 13.
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

mkdir -p "$root/.whl-cu12"
# With the build backend and platformdirs again, but not xgboost: the checkout and both
# folders would pass the 64 MiB that a GPU run may carry.
cuda12=(
    "cuda-bindings>=12.8,<13" "nvidia-cuda-nvrtc-cu12~=12.4.0" "nvidia-cuda-runtime-cu12~=12.4.0"
    hatchling==1.27.0 trove-classifiers==2025.9.11.17 editables==0.5 platformdirs==4.5.0
)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform any -d "$root/.whl-cu12" "${cuda12[@]}"
# As published these wheels take 32 MiB, which with the checkout (35 MiB) passes the 64 MiB a
# GPU run may carry. Recompressed with LZMA (the same files, so the same RECORD hashes; pip
# reads any zip method Python's zipfile does) they take 23 MiB.
python3 - "$root/.whl-cu12" <<'PY'
import pathlib
import sys
import zipfile

for wheel in sorted(pathlib.Path(sys.argv[1]).glob("*.whl")):
    with zipfile.ZipFile(wheel) as source:
        if all(item.compress_type == zipfile.ZIP_LZMA for item in source.infolist()):
            continue
        repacked = wheel.with_name(wheel.name + ".lzma")
        with zipfile.ZipFile(repacked, "w") as target:
            for item in source.infolist():
                target.writestr(item, source.read(item), compress_type=zipfile.ZIP_LZMA)
    repacked.replace(wheel)
PY
ls -l "$root/.whl-cu12"
