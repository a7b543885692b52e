#!/usr/bin/env bash
# On the GPU machine, from the repository root: CubeCL's memory-manager log and the names of the
# kernels it runs, around a few steps of one row of the fused_ssim bench (`$BIN/fused_ssim.xz`,
# as ssim_race.sh takes it), for each input dtype, into $OUT/mem-DTYPE.log and
# $OUT/kernels-DTYPE.log; then a summary: the allocations by size and the kernel launches by
# name over the whole run (warm-up, timed steps, and the bench's memory and dtype lines). What a
# dtype runs or allocates that another does not (a copy kernel, an allocation of an input's
# size) shows here, where Nsight Compute's kernel filter hides it.
#
# Usage: BIN=dir bash benches/gpu/ssim_logs.sh [ROW_KEY [DTYPE...]]
#   (default: 1x3x1080x1920, f32 f16)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/sad-out}
mkdir -p "$OUT"
source benches/gpu/ssim_bench_bin.sh
ssim_row_and_list 1x3x1080x1920 f32 f16 -- "$@"
dtypes=("${items[@]}")
for dtype in "${dtypes[@]}"; do
  # CubeCL reads cubecl.toml from the working directory.
  dir=$(mktemp -d)
  cat >"$dir/cubecl.toml" <<TOML
[memory.logger]
level = "full"
file = "$OUT/mem-$dtype.log"
[profiling.logger]
level = "minimal"
file = "$OUT/kernels-$dtype.log"
TOML
  (cd "$dir" && BURN_SAD_DEVICE=cuda "$ssim_bench" --iters 6 --no-reference --dtype "$dtype" \
    --only "$row" >/dev/null)
  echo "== $row $dtype: allocations over the whole run (count, size)"
  grep 'Reserved memory' "$OUT/mem-$dtype.log" | sed 's/.*Reserved memory //; s/ using.*//' \
    | sort | uniq -c | sort -rn | head -12
  echo "== $row $dtype: kernel launches over the whole run (count, name)"
  sed 's/^Executing //' "$OUT/kernels-$dtype.log" | sort | uniq -c | sort -rn | head -16
done
