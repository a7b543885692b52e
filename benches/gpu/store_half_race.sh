#!/usr/bin/env bash
# On the GPU machine, from the repository root: SsimMemory::StoreHalf against Store (and
# Recompute) in one command, next to fused-ssim timed on the same GPU. Builds fused-ssim from
# .ref/fused-ssim for sm_90 where it is not installed, times it (fused_ssim_baseline.py), then
# our CUDA build of the fused_ssim bench (`$BIN/fused_ssim.xz`) at 1080p and 4K, plain and
# L1 + SSIM, under each memory mode, twice in alternation so that drift shows; each run ends
# with the memory lines (bytes a training forward holds, train time per mode).
#
# Usage: BIN=dir bash benches/gpu/store_half_race.sh [ITERS]   (default 50)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/sad-out}
mkdir -p "$OUT"
iters=${1:-50}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
source benches/gpu/ssim_bench_bin.sh
fused_ssim_baseline "$iters"
grep -E '^(1x3x1080x1920|1x3x2160x3840|l1ssim-1x3x1080x1920|l1ssim-1x3x2160x3840) ' "$OUT/baseline.txt"
rows=(--only 1x3x1080x1920 --only 1x3x2160x3840 --only l1ssim-1x3x1080x1920 --only l1ssim-1x3x2160x3840)
for round in 1 2; do
  for memory in store store-half recompute; do
    echo "=== round $round, --memory $memory"
    BURN_SAD_DEVICE=cuda "$ssim_bench" --iters "$iters" --baseline "$OUT/baseline.txt" \
      --memory "$memory" --no-reference "${rows[@]}" | tee "$OUT/store_half_${memory}_$round.md"
  done
done
