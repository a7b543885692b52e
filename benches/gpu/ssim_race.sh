#!/usr/bin/env bash
# On the GPU machine, from the repository root: the README's SSIM tables in one command.
# Builds fused-ssim from a fetched copy (.ref/fused-ssim, kept out of git) for sm_90, installs
# pytorch-msssim from a wheel in .whl/ where one is there (the GPU machine has no internet),
# times both with benches/fused_ssim_baseline.py, then our CUDA build of the fused_ssim bench
# (`$BIN/fused_ssim.xz`, built on a CPU machine with `cargo bench --no-run --bench fused_ssim
# --no-default-features --features cuda`) against those times, with its roofline lines.
#
# Usage: BIN=dir [LAYOUT=FR,FS,BR,BS] bash benches/gpu/ssim_race.sh [ITERS]   (default 50;
#   LAYOUT times our kernels under that `SsimLayout`, the bench's `--layout`)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/sad-out}
mkdir -p "$OUT"
iters=${1:-50}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for wheel in .whl/pytorch_msssim-*.whl; do
  [ -e "$wheel" ] && python3 -m pip install -q --no-deps "$wheel"
done
source benches/gpu/ssim_bench_bin.sh
fused_ssim_baseline "$iters"
cat "$OUT/baseline.txt"
layout=()
[ -n "${LAYOUT:-}" ] && layout=(--layout "$LAYOUT")
BURN_SAD_DEVICE=cuda "$ssim_bench" --iters "$iters" --baseline "$OUT/baseline.txt" "${layout[@]}" \
  | tee "$OUT/ssim_table.md"
# Half-precision inputs against the same (f32) fused-ssim times, with each dtype's value on the
# photos of tests/data against f32; each run ends with the memory lines (held bytes and train
# time per SsimMemory mode).
for dtype in f16 bf16; do
  BURN_SAD_DEVICE=cuda "$ssim_bench" --iters "$iters" --baseline "$OUT/baseline.txt" "${layout[@]}" \
    --dtype "$dtype" --only 1x3x1080x1920 --only 1x3x2160x3840 | tee "$OUT/ssim_table_$dtype.md"
done
