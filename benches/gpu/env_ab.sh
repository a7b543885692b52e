#!/usr/bin/env bash
# On the GPU machine, after benches/gpu/run.sh: the reference, ours, and ours switched, one after
# another, RUNS times per photo and bits per pixel: loop times, ratios to the reference, and
# PSNR. The switch is `sad fit` flags (e.g. `--backward-strategy=table-only`: no plane sums;
# `--no-replay`: every iteration op by op; several joined by commas), an operator variable
# (`BURN_SAD_CHECKED_KERNELS=1`), or `SAD=PATH`, another build of `sad` (e.g. main's, to A/B a
# change). The switched runs keep their own kernel cache, so kernels compiled under one setting
# never serve the other.
#
# Usage: [RUNS=3] bash benches/gpu/env_ab.sh SWITCH [PHOTO:BPP]...
#   (default photos: chelsea:16 coffee:16 motorcycle:16 chelsea:1)
set -euo pipefail
source "$(dirname "$0")/common.sh"
switch=$1
shift
switched_sad=$sad
flags=()
env_switch=()
case "$switch" in
  SAD=*) switched_sad=${switch#SAD=} ;;
  --*) IFS=, read -r -a flags <<<"$switch" ;;
  *=*) env_switch=("$switch") ;;
esac
[ $# -gt 0 ] || set -- chelsea:16 coffee:16 motorcycle:16 chelsea:1
field() { grep -o "$1: [0-9.]*" | head -1 | grep -o "[0-9.]*$"; }
# The last PSNR a fit prints (the reference's at its last logged iteration, ours final).
psnr() { grep -o "PSNR: [0-9.]* dB" | tail -1 | grep -o "[0-9][0-9.]*" || echo "?"; }
for run_of in "$@"; do
  photo=${run_of%%:*}
  bpp=${run_of##*:}
  for run in $(seq "${RUNS:-3}"); do
    ref=$(cd "$build" && CUDA_MODULE_LOADING=EAGER backends/cuda/bin/sad_cuda "$WORK/$photo.png" \
      --target-bpp "$bpp" --iters 4000 --log-freq 1000 --out-dir "$WORK/ab-ref")
    ours=$("$sad" --device cuda fit "$WORK/$photo.png" --target-bpp "$bpp" --iters 4000 \
      --log-freq 1000 --out-dir "$WORK/ab-ours")
    switched=$(env "${env_switch[@]}" XDG_CACHE_HOME="$WORK/cache-${switch//[\/=,]/_}" "$switched_sad" \
      --device cuda fit "$WORK/$photo.png" --target-bpp "$bpp" --iters 4000 --log-freq 1000 \
      --out-dir "$WORK/ab-switched" "${flags[@]}")
    t_ref=$(echo "$ref" | field "Training time") t_ours=$(echo "$ours" | field "Training time")
    t_sw=$(echo "$switched" | field "Training time")
    p_ref=$(echo "$ref" | psnr)
    p_ours=$(echo "$ours" | psnr)
    p_sw=$(echo "$switched" | psnr)
    python3 -c "print(f'$photo $bpp bpp run $run: reference $t_ref s ($p_ref dB), ours $t_ours s ({$t_ours / $t_ref:.2f}, $p_ours dB), $switch $t_sw s ({$t_sw / $t_ref:.2f}, $p_sw dB)')"
  done
done
