"""Nsight Compute's SASS source page of one launch (CSV, as `SASS=1 bash benches/gpu/ncu_detail.sh`
writes it), summed per opcode (warp instructions executed, share of the stall samples, static
count), then the 25 instructions that gathered the most stall samples.

Usage: python3 benches/gpu/sass_summary.py FILE.csv
"""
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
