#!/usr/bin/env bash
# On the GPU machine, from the repository root: Nsight Compute's detailed sections (speed of
# light, memory and compute workload, occupancy, warp stalls, launch statistics) for one launch
# of each of our SSIM kernels at one shape, from the CUDA build of the fused_ssim bench
# (`$BIN/fused_ssim.xz`, as ssim_race.sh takes it): what bounds the forward and the backward.
# With SASS=1, the SASS source page instead, summed per opcode (benches/gpu/sass_summary.py).
#
# Usage: BIN=dir [SASS=1] [LAYOUT=FR,FS,BR,BS] [DTYPE=f16|bf16] bash benches/gpu/ssim_ncu.sh [ROW_KEY [KERNEL_REGEX...]]
#   (default: 1x3x2160x3840, kernels ssim_forward and ssim_backward; the forward's launch is a
#   training one, with its partial maps; `infer:ssim_forward` takes an inference launch; DTYPE
#   loads the images in that dtype, the bench's `--dtype`)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/sad-out}
mkdir -p "$OUT"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
source benches/gpu/ssim_bench_bin.sh
ssim_row_and_list 1x3x2160x3840 ssim_forward ssim_backward infer:ssim_forward -- "$@"
kernels=("${items[@]}")
# The bench times 3 warm-up and ITERS training steps, then as many inference steps.
iters=6
layout=()
[ -n "${LAYOUT:-}" ] && layout=(--layout "$LAYOUT")
[ -n "${DTYPE:-}" ] && layout+=(--dtype "$DTYPE")
for entry in "${kernels[@]}"; do
  kernel=${entry#infer:}
  skip=4
  [ "$entry" != "$kernel" ] && skip=$(( iters + 3 + 4 ))
  echo "== ours: $kernel at $row, launch $skip of that kernel"
  report=$OUT/ssim-ncu-${entry/:/-}-$row${DTYPE:+-$DTYPE}$([ "${SASS:-0}" = 1 ] && echo -sass).txt
  page=(--set full)
  [ "${SASS:-0}" = 1 ] && page=(--set full --page source --print-source sass --csv)
  BURN_SAD_DEVICE=cuda timeout 300 "$ncu" "${page[@]}" --import-source no \
    --kernel-name "regex:$kernel" --launch-skip "$skip" --launch-count 1 \
    --cache-control none --clock-control none \
    "$ssim_bench" --only "$row" --iters "$iters" --no-reference "${layout[@]}" 2>/dev/null \
    | grep -v "^==PROF==" >"$report" || true
  if [ "${SASS:-0}" = 1 ]; then
    python3 benches/gpu/sass_summary.py "$report"
  else
    grep -E "Grid Size|Block Size|Registers Per|Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Executed Ipc A|Shared Memory Configuration|L1/TEX Hit|Bank|Stall|Warp Cycles Per Issued|No Eligible|One or More Eligible" \
      "$report" | head -40
  fi
done
