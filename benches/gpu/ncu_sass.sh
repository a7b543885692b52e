#!/usr/bin/env bash
# On the GPU machine, after `benches/gpu/run.sh --no-tests --no-race`: Nsight Compute's SASS view
# of one launch of one kernel (ours or the reference's) in the steady state of a 4000-iteration
# fit, summed per opcode (executed warp instructions and stall samples), with the hottest
# instructions listed: what a kernel's time goes to, instruction by instruction.
#
# Usage: [WHO=ours|ref] bash benches/gpu/ncu_sass.sh KERNEL_REGEX PHOTO BPP [SKIP]
#   e.g. bash benches/gpu/ncu_sass.sh render_backward chelsea 1 200
set -euo pipefail
source "$(dirname "$0")/common.sh"
kernel=$1 photo=$2 bpp=$3 skip=${4:-200}
who=${WHO:-ours}
mkdir -p "$WORK/ncu-sass"
fit_command "$who" "$photo" "$bpp" "$WORK/ncu-sass"
csv="$OUT/ncu-sass-$who-$kernel-$photo-$bpp.csv"
(cd /tmp/sad-reference && CUDA_MODULE_LOADING=EAGER timeout 300 "$ncu" --set full --import-source no \
  --kernel-name "regex:$kernel" --launch-skip "$skip" --launch-count 1 \
  --cache-control none --clock-control none --page source --print-source sass --csv \
  "${command[@]}" 2>/dev/null) | grep -v "^==PROF==" >"$csv" || true
echo "== $who: $kernel, $photo $bpp bpp: SASS per opcode ($csv)"
python3 - "$csv" <<'PY'
import csv, collections, sys
lines = open(sys.argv[1], errors="replace").read().splitlines()
start = next((i for i, l in enumerate(lines) if "Source" in l and "," in l), None)
if start is None:
    print("no source table:"); print("\n".join(lines[:20])); sys.exit()
rows = list(csv.DictReader(lines[start:]))
cols = rows[0].keys() if rows else []
def col(*words):
    return next((c for c in cols if all(w.lower() in c.lower() for w in words)), None)
src, execd, stall = col("Source"), col("Warp", "Executed"), col("Stall", "All")
execd = execd or col("Instructions Executed")
print("columns:", src, "|", execd, "|", stall)
def num(r, c):
    try: return float((r.get(c) or "0").replace(",", ""))
    except ValueError: return 0.0
per_op = collections.defaultdict(lambda: [0.0, 0.0, 0])
for r in rows:
    text = (r.get(src) or "").strip()
    op = text.split()[0] if text else "?"
    if op.startswith("@"): op = text.split()[1] if len(text.split()) > 1 else op
    op = op.split(".")[0] if not op.startswith("ATOMS") else ".".join(op.split(".")[:2])
    e = per_op[op]; e[0] += num(r, execd); e[1] += num(r, stall); e[2] += 1
total_e = sum(v[0] for v in per_op.values()) or 1; total_s = sum(v[1] for v in per_op.values()) or 1
print(f"{'opcode':<14}{'executed':>12}{'%':>7}{'stalls %':>10}{'static':>8}")
for op, (e, s, n) in sorted(per_op.items(), key=lambda kv: -kv[1][1])[:30]:
    print(f"{op:<14}{e:>12.0f}{100*e/total_e:>7.1f}{100*s/total_s:>10.1f}{n:>8}")
print("hottest instructions (stall samples):")
for r in sorted(rows, key=lambda r: -num(r, stall))[:25]:
    print(f"{100*num(r, stall)/total_s:6.2f}% {num(r, execd):>10.0f}  {(r.get(src) or '').strip()[:90]}")
PY
