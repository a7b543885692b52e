#!/usr/bin/env bash
# On the GPU machine, from the repository root: our SSIM train and infer times for one or more
# bench rows under each strip layout given (the bench's `--layout fwd_rows,fwd_strips,bwd_rows,
# bwd_strips`, see `SsimLayout`; strips are halved where the cube's buffer would not fit the device's shared memory), from the CUDA build
# of the fused_ssim bench (`$BIN/fused_ssim.xz`), to choose the defaults on a new GPU.
#
# Usage: BIN=dir bash benches/gpu/ssim_layouts.sh ROW_KEY[,ROW_KEY...] LAYOUT...
#   e.g. ssim_layouts.sh 1x3x2160x3840,1x3x1080x1920 66,1,11,2 44,2,11,2 33,2,33,2
set -euo pipefail
cd "$(dirname "$0")/../.."
source benches/gpu/ssim_bench_bin.sh
rows=$1
shift
echo "| layout | row | train ms | infer ms |"
echo "|---|---|---|---|"
for layout in "$@"; do
  for row in ${rows//,/ }; do
    BURN_SAD_DEVICE=cuda "$ssim_bench" --only "$row" --layout "$layout" \
      --iters 50 --no-reference | awk -v l="$layout" -F'|' '$2 ~ /x/ {print "| " l " |" $2 "|" $3 "|" $4 "|"}'
  done
done
