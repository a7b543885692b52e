#!/usr/bin/env bash
# On the GPU machine, from the repository root: the CUDA kernel report's counts against what the
# GPU executes. Nsight Compute counts the thread instructions executed by one launch of each SSIM
# kernel at the 4K row of the fused_ssim bench (a training forward, the backward, an inference
# forward), per output pixel; then the report runs here too, on this machine's ptxas, to print its
# per-pixel counts beside them (the report's `ssim_forward.train`, `ssim_backward` and
# `ssim_forward.infer` rows). The check: each within 10 % of Nsight's.
#
# Usage: BIN=dir bash benches/gpu/kernel_report_check.sh
#   `$BIN/fused_ssim.xz`: the CUDA build of the fused_ssim bench (as ssim_race.sh takes it);
#   `$BIN/kernel_report.xz`: the CUDA build of the kernel_report bench (optional). Both may be
#   dev-profile builds: the kernels are compiled at run time the same way either way.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/sad-out}
mkdir -p "$OUT"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
source benches/gpu/ssim_bench_bin.sh
row=1x3x2160x3840
pixels=$((3 * 2160 * 3840))
iters=6
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "kernel,launch,thread instructions,warp instructions,per pixel (thread),per pixel (warp x 32)" \
  | tee "$OUT/kernel_report_check.csv"
for entry in ssim_forward ssim_backward infer:ssim_forward; do
  kernel=${entry#infer:}
  skip=4
  [ "$entry" != "$kernel" ] && skip=$((iters + 3 + 4))
  BURN_SAD_DEVICE=cuda timeout 300 "$ncu" --csv --metrics \
    smsp__thread_inst_executed.sum,smsp__inst_executed.sum \
    --kernel-name "regex:$kernel" --launch-skip "$skip" --launch-count 1 \
    "$ssim_bench" --only "$row" --iters "$iters" --no-reference 2>/dev/null \
    | grep -v "^==PROF==" >"$OUT/ncu-$kernel-$skip.csv" || true
  python3 - "$OUT/ncu-$kernel-$skip.csv" "$entry" "$pixels" <<'PY' | tee -a "$OUT/kernel_report_check.csv"
import csv, sys
path, entry, pixels = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = open(path, errors="replace").read().splitlines()
start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
values = {}
if start is not None:
    for r in csv.DictReader(lines[start:]):
        values[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
thread = values.get("smsp__thread_inst_executed.sum", 0.0)
warp = values.get("smsp__inst_executed.sum", 0.0)
print(f"{entry},{path},{thread:.0f},{warp:.0f},{thread / pixels:.1f},{32 * warp / pixels:.1f}")
PY
done
if [ -e "${BIN:-.bin}/kernel_report.xz" ]; then
  xz -dc "${BIN:-.bin}/kernel_report.xz" >/tmp/kernel_report
  chmod +x /tmp/kernel_report
  cuda_bin=$(dirname "$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)")
  /tmp/kernel_report --only ssim_ --ptxas "$cuda_bin/ptxas" --cuobjdump "$cuda_bin/cuobjdump" \
    --baseline benches/kernel_report/baseline.tsv | tee "$OUT/kernel_report.md" || true
fi
