#!/usr/bin/env bash
# On the GPU machine, from the repository root: two CUDA builds of the fused_ssim bench raced in
# one command beside fused-ssim (built from .ref/fused-ssim for sm_90 where it is not
# installed): `$BASE_BIN/fused_ssim.xz` (the build before a kernel change) and
# `$BIN/fused_ssim.xz` (after it), at 1080p and 4K, SSIM and L1 + SSIM, train and infer, in
# alternation, three rounds, so that drift shows; each run's table has its ratios to fused-ssim.
# The second build's runs also time SsimMemory::StoreHalf.
#
# Usage: BASE_BIN=dir BIN=dir bash benches/gpu/ssim_buffer_race.sh [ITERS]   (default 50)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/sad-out}
mkdir -p "$OUT"
iters=${1:-50}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
source benches/gpu/ssim_bench_bin.sh
fused_ssim_baseline "$iters"
keys='^(1x3x1080x1920|1x3x2160x3840|l1ssim-1x3x1080x1920|l1ssim-1x3x2160x3840) '
grep -E "$keys" "$OUT/baseline.txt"
xz -dc "$BASE_BIN/fused_ssim.xz" >/tmp/fused_ssim_base && chmod +x /tmp/fused_ssim_base
xz -dc "$BIN/fused_ssim.xz" >/tmp/fused_ssim_new && chmod +x /tmp/fused_ssim_new
rows=(--only 1x3x1080x1920 --only 1x3x2160x3840 --only l1ssim-1x3x1080x1920 --only l1ssim-1x3x2160x3840)
for round in 1 2 3; do
  for build in base new; do
    echo "=== round $round, build $build"
    BURN_SAD_DEVICE=cuda "/tmp/fused_ssim_$build" --iters "$iters" --baseline "$OUT/baseline.txt" \
      --no-reference "${rows[@]}" | grep -E '^\|' | tee "$OUT/buffer_${build}_$round.md"
  done
done
echo "=== new build, --memory store-half"
BURN_SAD_DEVICE=cuda /tmp/fused_ssim_new --iters "$iters" --baseline "$OUT/baseline.txt" \
  --memory store-half --no-reference "${rows[@]}" | tee "$OUT/buffer_new_store_half.md"
