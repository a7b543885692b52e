#!/usr/bin/env bash
# On the GPU machine, after `benches/gpu/run.sh --no-tests --no-race`: Nsight Compute's detailed
# sections (speed of light, memory and compute workload, occupancy, warp stall reasons, source
# counters) for one launch of one kernel in the steady state of a 4000-iteration fit, ours or
# the reference's, to see what bounds a kernel before changing it.
#
# Usage: [WHO=ours|ref] bash benches/gpu/ncu_detail.sh KERNEL_REGEX PHOTO BPP [SKIP]
#   e.g. bash benches/gpu/ncu_detail.sh render_backward chelsea 16 200
#   (SKIP: launches of that kernel to pass over first, default 200)
set -euo pipefail
source "$(dirname "$0")/common.sh"
kernel=$1 photo=$2 bpp=$3 skip=${4:-200}
mkdir -p "$WORK/ncu-detail"
fit_command "${WHO:-ours}" "$photo" "$bpp" "$WORK/ncu-detail"
echo "== ${WHO:-ours}: $kernel, $photo $bpp bpp, launch $skip of that kernel"
(cd /tmp/sad-reference && CUDA_MODULE_LOADING=EAGER timeout 300 "$ncu" --set full --import-source no \
  --kernel-name "regex:$kernel" --launch-skip "$skip" --launch-count 1 \
  --cache-control none --clock-control none "${command[@]}" 2>/dev/null) |
  grep -v "^==PROF==" | tee "$OUT/ncu-detail-${WHO:-ours}-$kernel-$photo-$bpp.txt"
