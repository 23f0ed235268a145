#!/usr/bin/env bash
# Nsight Compute on one conv2d_gw8 pass's main kernel, as its launcher runs it on the GPU
# machine (spio.kernels.conv2d_gw8.run_once: the pass's default config there, or the fields
# given with --config): the full set of sections, at the GPU's own clocks (the device
# notes' METHOD.md: leave them alone), and two text reports of it:
#   OUT_DIR/NAME-details.txt  every section's table (throughputs, stalls, occupancy);
#   OUT_DIR/NAME-sass.csv     per SASS instruction: executions, warp stall samples by reason.
# The report itself is OUT_DIR/NAME.ncu-rep. The second launch is profiled (the first
# warms the caches and the GPU's clocks).
#
# Usage: tools/ncu-profile.sh OUT_DIR NAME PASS NxCxHxW [run_once options ...]
#   e.g. tools/ncu-profile.sh out w512 wgrad 512x256x14x14 --config producer=1
set -euo pipefail

out=${1:?usage: tools/ncu-profile.sh OUT_DIR NAME PASS NxCxHxW [run_once options]}
name=${2:?NAME of the report}
pass=${3:?PASS: fprop, dgrad or wgrad}
shape=${4:?NxCxHxW}
shift 4
python=${PYTHON:-python3}
mkdir -p "$out"

ncu --clock-control none --set full --import-source yes \
    -k "regex:^conv2d_gw8_${pass}\$" -s 1 -c 1 -f -o "$out/$name" \
    "$python" -m spio.kernels.conv2d_gw8.run_once "$pass" "$shape" --launches 3 "$@"
ncu -i "$out/$name.ncu-rep" --page details > "$out/$name-details.txt"
ncu -i "$out/$name.ncu-rep" --page source --csv --print-source sass > "$out/$name-sass.csv"
