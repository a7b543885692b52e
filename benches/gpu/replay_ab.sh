#!/usr/bin/env bash
# On the GPU machine, after benches/gpu/run.sh: the reference, ours, and ours with every
# iteration run op by op (BURN_SAD_REPLAY=0), one after another, RUNS times per photo and bits
# per pixel, to show what replaying the recorded steady iterations buys (loop times, ratios to
# the reference).
#
# Usage: [RUNS=3] bash benches/gpu/replay_ab.sh [PHOTO:BPP]...   (default: chelsea:16 coffee:16 motorcycle:16 chelsea:1)
set -euo pipefail
source "$(dirname "$0")/common.sh"
[ $# -gt 0 ] || set -- chelsea:16 coffee:16 motorcycle:16 chelsea:1
loop() { grep -o "Training time: [0-9.]*" | grep -o "[0-9.]*$"; }
for run_of in "$@"; do
  photo=${run_of%%:*}
  bpp=${run_of##*:}
  for run in $(seq "${RUNS:-3}"); do
    ref=$(cd "$build" && CUDA_MODULE_LOADING=EAGER backends/cuda/bin/sad_cuda "$WORK/$photo.png" \
      --target-bpp "$bpp" --iters 4000 --log-freq 1000 --out-dir "$WORK/ab-ref" | loop)
    ours=$("$sad" --device cuda fit "$WORK/$photo.png" --target-bpp "$bpp" --iters 4000 \
      --log-freq 1000 --out-dir "$WORK/ab-ours" | loop)
    plain=$(BURN_SAD_REPLAY=0 "$sad" --device cuda fit "$WORK/$photo.png" --target-bpp "$bpp" \
      --iters 4000 --log-freq 1000 --out-dir "$WORK/ab-plain" | loop)
    python3 -c "print(f'$photo $bpp bpp run $run: reference $ref s, ours $ours s ({$ours / $ref:.2f}), op by op $plain s ({$plain / $ref:.2f})')"
  done
done
