#!/usr/bin/env bash
# On the GPU machine, after benches/gpu/run.sh: races both trainers again on the dense photos
# (16 bpp), RUNS times each, to show how much one run's loop-time ratio moves.
#
# Usage: [RUNS=3] bash benches/gpu/repeat.sh [PHOTO]...   (default: chelsea coffee motorcycle)
set -euo pipefail
source "$(dirname "$0")/common.sh"
[ $# -gt 0 ] || set -- chelsea coffee motorcycle
loop() { grep -o "Training time: [0-9.]*" | grep -o "[0-9.]*$"; }
for photo in "$@"; do
  for run in $(seq "${RUNS:-3}"); do
    ref=$(cd "$build" && CUDA_MODULE_LOADING=EAGER backends/cuda/bin/sad_cuda "$WORK/$photo.png" \
      --target-bpp 16 --iters 4000 --log-freq 1000 --out-dir "$WORK/repeat-ref" | loop)
    ours=$("$sad" --device cuda fit "$WORK/$photo.png" --target-bpp 16 --iters 4000 \
      --log-freq 1000 --out-dir "$WORK/repeat-ours" | loop)
    python3 -c "print(f'$photo 16 bpp run $run: reference $ref s, ours $ours s, ratio {$ours / $ref:.2f}')"
  done
done
