#!/usr/bin/env bash
# On the GPU machine, after `benches/gpu/run.sh --no-tests --no-race` (reference built, `sad`
# unpacked): where the time outside the timed loop goes, for both programs.
#   1. The wall time of a one-iteration fit (cold kernel cache once, then warm), ours with our
#      `Start-up:` line, and the reference's.
#   2. With Nsight Systems, when the machine has it: the CUDA API calls of one warm start-up
#      (cuInit, context, module loads) and the GPU timeline of a render-only run, ours and the
#      reference's (kernel by kernel, with the gaps between them).
#
# Usage: bash benches/gpu/startup.sh [PHOTO]...   (default: chelsea astronaut)
set -uo pipefail
# Its own kernel cache, so that the first run shows the compile time.
KERNEL_CACHE="${WORK:-/tmp/sad-work}/startup-cache"
source "$(dirname "$0")/common.sh"
mkdir -p "$WORK/startup"
[ $# -gt 0 ] || set -- chelsea astronaut
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
wall() { local start end; start=$(date +%s.%N); "$@" >"$WORK/startup/last.txt" 2>&1; end=$(date +%s.%N); python3 -c "print(f'{$end - $start:.3f}')"; }

for photo in "$@"; do
  echo "== $photo: one-iteration fit, wall s"
  echo "ours, cold kernel cache: $(wall "$sad" --device cuda fit "$WORK/$photo.png" --iters 1 --out-dir "$WORK/startup/ours")"
  grep -E "Kernel warm-up|Start-up|Wall time" "$WORK/startup/last.txt"
  for run in 1 2 3; do
    echo "ours, warm: $(wall "$sad" --device cuda fit "$WORK/$photo.png" --iters 1 --out-dir "$WORK/startup/ours")"
    grep -E "Start-up|Wall time" "$WORK/startup/last.txt"
    echo "reference: $(cd "$build" && CUDA_MODULE_LOADING=EAGER wall "$reference" "$WORK/$photo.png" --iters 1 --out-dir "$WORK/startup/ref")"
    grep -E "Total time" "$WORK/startup/last.txt"
  done
  echo "ours, warm, 4000 iterations at 1 bpp: $(wall "$sad" --device cuda fit "$WORK/$photo.png" --target-bpp 1 --iters 4000 --log-freq 1000 --out-dir "$WORK/startup/ours")"
  grep -E "Start-up|Training time|Wall time" "$WORK/startup/last.txt"
  echo "reference, 4000 iterations at 1 bpp: $(cd "$build" && CUDA_MODULE_LOADING=EAGER wall "$reference" "$WORK/$photo.png" --target-bpp 1 --iters 4000 --log-freq 1000 --out-dir "$WORK/startup/ref-$photo")"
  grep -E "Training time|Total time" "$WORK/startup/last.txt"
done

[ -n "$nsys" ] || { echo "no nsys on this machine"; exit 0; }
photo=$1
trace() { # NAME COMMAND...: CUDA API summary and the GPU trace of one run
  local name=$1; shift
  "$nsys" profile -t cuda,osrt -o "$WORK/startup/$name" --force-overwrite true "$@" >/dev/null 2>&1
  "$nsys" stats -q -r cuda_api_sum --format csv "$WORK/startup/$name.nsys-rep" 2>/dev/null \
    | python3 -c '
import csv, sys
rows = [r for r in csv.reader(sys.stdin) if len(r) > 8]
print("   total ms    calls  API")
for r in rows[1:16]:
    print(f"{float(r[1]) / 1e6:11.1f} {r[2]:>8}  {r[8]}")'
  "$nsys" stats -q -r cuda_gpu_trace --format csv "$WORK/startup/$name.nsys-rep" 2>/dev/null \
    > "$WORK/startup/$name-gpu.csv"
}
gaps() { # the last N kernels of a GPU trace: start, duration and gap before each, in µs
  python3 - "$1" "$2" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r.get("Name")]
rows = rows[-int(sys.argv[2]):]
last_end = None
busy = 0.0
for r in rows:
    start, dur = float(r["Start (ns)"]), float(r["Duration (ns)"])
    gap = 0.0 if last_end is None else (start - last_end) / 1e3
    busy += dur
    print(f"{(start - float(rows[0]['Start (ns)'])) / 1e3:10.1f} {dur / 1e3:8.1f} {gap:8.1f}  {r['Name'][:70]}")
    last_end = start + dur
span = (last_end - float(rows[0]["Start (ns)"])) / 1e3
print(f"{len(rows)} operations: span {span:.1f} us, busy {busy / 1e3:.1f} us")
PY
}
echo "== nsys: ours, warm start-up of a one-iteration fit ($photo)"
trace ours-fit "$sad" --device cuda fit "$WORK/$photo.png" --iters 1 --out-dir "$WORK/startup/ours"
echo "== nsys: reference, one-iteration fit ($photo)"
(cd "$build" && CUDA_MODULE_LOADING=EAGER trace ref-fit "$reference" "$WORK/$photo.png" --iters 1 --out-dir "$WORK/startup/ref")
for bpp in 1 16; do
  sites="$WORK/startup/ref-$photo-$bpp/${photo}_sites.txt"
  (cd "$build" && CUDA_MODULE_LOADING=EAGER "$reference" "$WORK/$photo.png" --target-bpp $bpp --iters 4000 --out-dir "$WORK/startup/ref-$photo-$bpp" >/dev/null)
  echo "== nsys: ours, render-only, $photo $bpp bpp (the last 60 GPU operations: at, took, gap, us)"
  trace ours-render-$bpp "$sad" --device cuda render "$sites" -o "$WORK/startup/r.png" --target "$WORK/$photo.png"
  gaps "$WORK/startup/ours-render-$bpp-gpu.csv" 60
  echo "== nsys: reference, render-only, $photo $bpp bpp"
  (cd "$build" && CUDA_MODULE_LOADING=EAGER trace ref-render-$bpp "$reference" --render "$sites" --render-target "$WORK/$photo.png")
  gaps "$WORK/startup/ref-render-$bpp-gpu.csv" 40
done
