#!/usr/bin/env bash
# On the GPU machine, after `benches/gpu/run.sh --no-tests --no-race`: GPU time of every launch of
# a render-only run, ours and the reference's, in launch order, from Nsight Compute (each launch
# serialised and timed alone), so the sum of a phase's kernels can be set against the phase's
# printed time (a phase that prints much more than its kernels' sum waits on the host).
#
# Usage: bash benches/gpu/ncu_render.sh [PHOTO BPP | FILE_sites.txt]...   (default: chelsea 1
# astronaut 16). A sites file (e.g. one of render_bench.sh's synthetic sets) is rendered as it is,
# with no fit and no target.
set -uo pipefail
source "$(dirname "$0")/common.sh"
mkdir -p "$WORK/ncu-render"
[ $# -gt 0 ] || set -- chelsea 1 astronaut 16
listing() {
  python3 -c '
import csv, sys
rows = csv.reader(line for line in sys.stdin if line.startswith("\""))
header = next(rows)
id_col, name_col = header.index("ID"), header.index("Kernel Name")
metric_col, value_col, unit_col = header.index("Metric Name"), header.index("Metric Value"), header.index("Metric Unit")
scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}
launches = {}
for row in rows:
    if row[metric_col] != "gpu__time_duration.sum":
        continue
    launches[int(row[id_col])] = (row[name_col].split("(")[0].split("<")[0][:50], float(row[value_col].replace(",", "")) * scale[row[unit_col]])
run, total = None, 0.0
for index in sorted(launches):
    name, us = launches[index]
    print(f"{index:4d} {us:9.2f} us  {name}")
print(f"{sum(us for _, us in launches.values()) / 1e3:.3f} ms in {len(launches)} launches")
'
}
# Every launch of both programs rendering `sites` (extra arguments of ours after it).
time_launches() {
  local sites=$1 label=$2
  shift 2
  echo "== ours: $label, every launch"
  "$ncu" --csv --metrics gpu__time_duration.sum --cache-control none --clock-control none \
    "$sad" --device cuda render "$sites" -o "$WORK/ncu-render/r.png" 2>/dev/null | listing | tee -a "$OUT/ncu-render.txt"
  echo "== reference: $label, every launch"
  (cd "$build" && CUDA_MODULE_LOADING=EAGER "$ncu" --csv --metrics gpu__time_duration.sum --cache-control none --clock-control none \
    "$reference" --render "$sites" --out "$WORK/ncu-render/ref.png" 2>/dev/null) | listing | tee -a "$OUT/ncu-render.txt"
}
while [ $# -ge 1 ]; do
  case "$1" in
    *_sites.txt)
      sites=$1
      shift
      "$sad" --device cuda render "$sites" -o "$WORK/ncu-render/r.png" | tee -a "$OUT/ncu-render.txt"
      (cd "$build" && CUDA_MODULE_LOADING=EAGER "$reference" --render "$sites" --out "$WORK/ncu-render/ref.png") | grep -E "Candidate" | tee -a "$OUT/ncu-render.txt"
      time_launches "$sites" "$(basename "$sites")"
      continue ;;
  esac
  photo=$1 bpp=$2
  shift 2
  fitted="$WORK/ncu-render/ref-$photo-$bpp"
  (cd "$build" && CUDA_MODULE_LOADING=EAGER "$reference" "$WORK/$photo.png" --target-bpp "$bpp" --iters 4000 --out-dir "$fitted" >/dev/null)
  sites="$fitted/${photo}_sites.txt"
  "$sad" --device cuda render "$sites" -o "$WORK/ncu-render/r.png" --target "$WORK/$photo.png" | tee -a "$OUT/ncu-render.txt"
  (cd "$build" && CUDA_MODULE_LOADING=EAGER "$reference" --render "$sites" --render-target "$WORK/$photo.png") | grep -E "Candidate|PSNR" | tee -a "$OUT/ncu-render.txt"
  time_launches "$sites" "$photo $bpp bpp"
done
