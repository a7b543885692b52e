#!/usr/bin/env bash
# On the GPU machine, from the repository root: where one row's train and infer steps go, for
# each input dtype, from the CUDA build of the fused_ssim bench (`$BIN/fused_ssim.xz`, as
# ssim_race.sh takes it):
# - the bench's `--dispatch` line: the host's time to queue a step against the step's time;
# - the same with serialised launches (`CUDA_LAUNCH_BLOCKING=1`): every launch's host and
#   device time in a row;
# - Nsight Compute's duration of every kernel of two train and two infer steps (after the
#   bench's warm-up), in launch order: what the device runs, kernel by kernel.
# A dtype whose kernels take the same time but whose steps take longer loses the difference
# outside the kernels (the runtime's launch or memory path).
#
# Usage: BIN=dir bash benches/gpu/ssim_steps.sh [ROW_KEY [DTYPE...]]
#   (default: 1x3x1080x1920, f32 f16)
set -euo pipefail
cd "$(dirname "$0")/../.."
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
source benches/gpu/ssim_bench_bin.sh
ssim_row_and_list 1x3x1080x1920 f32 f16 -- "$@"
dtypes=("${items[@]}")
for dtype in "${dtypes[@]}"; do
  for blocking in 0 1; do
    echo "== $row $dtype, CUDA_LAUNCH_BLOCKING=$blocking"
    CUDA_LAUNCH_BLOCKING=$blocking BURN_SAD_DEVICE=cuda "$ssim_bench" --iters 300 --no-reference \
      --dispatch --dtype "$dtype" --only "$row" | grep '^dispatch'
  done
  echo "== $row $dtype: kernels of the last train and infer steps (ns, name)"
  BURN_SAD_DEVICE=cuda "$ncu" --metrics gpu__time_duration.sum --csv \
    "$ssim_bench" --only "$row" --iters 2 --no-reference --dtype "$dtype" 2>/dev/null \
    | python3 -c '
import csv, sys
rows = list(csv.DictReader(line for line in sys.stdin if line.startswith("\"")))
for r in rows[-20:]:
    print(r["Metric Value"], r["Kernel Name"][:100])'
done
