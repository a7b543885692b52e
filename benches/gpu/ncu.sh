#!/usr/bin/env bash
# On the GPU machine, after `benches/gpu/run.sh --no-tests --no-race` has built the reference and
# unpacked `sad`: GPU time per kernel of a stretch of steady-state launches of one fit, by us and
# by the reference, measured by Nsight Compute (each launch serialised and timed alone), so the
# two can be compared kernel by kernel, with each kernel's registers per unit. Caches are not
# flushed and clocks not locked between launches, as in a plain run.
#
# Usage: [SAD=binary] [WHO="ours ref"] bash benches/gpu/ncu.sh [PHOTO BPP SKIP COUNT]...
#   (default: chelsea 16 and astronaut 1, 600 launches after the first 2000)
set -euo pipefail
source "$(dirname "$0")/common.sh"
mkdir -p "$WORK/ncu"
[ $# -gt 0 ] || set -- chelsea 16 2000 600 astronaut 1 2000 600
while [ $# -ge 4 ]; do
  photo=$1 bpp=$2 skip=$3 count=$4
  shift 4
  for who in ${WHO:-ours ref}; do
    fit_command "$who" "$photo" "$bpp" "$WORK/ncu"
    echo "== $who: $photo $bpp bpp, launches $skip..$((skip + count))"
    (cd /tmp/sad-reference && CUDA_MODULE_LOADING=EAGER timeout 200 "$ncu" --csv --metrics gpu__time_duration.sum,launch__registers_per_thread --cache-control none --clock-control none \
      --launch-skip "$skip" --launch-count "$count" "${command[@]}" 2>/dev/null) | python3 -c '
import csv, sys
from collections import defaultdict
total, calls, registers = defaultdict(float), defaultdict(int), {}
rows = csv.reader(line for line in sys.stdin if line.startswith("\""))
header = next(rows)
name_col, metric_col = header.index("Kernel Name"), header.index("Metric Name")
value_col, unit_col = header.index("Metric Value"), header.index("Metric Unit")
scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}
for row in rows:
    name = row[name_col].split("(")[0].split("<")[0][:60]
    value = float(row[value_col].replace(",", ""))
    if row[metric_col] == "launch__registers_per_thread":
        registers[name] = int(value)
        continue
    total[name] += value * scale[row[unit_col]]
    calls[name] += 1
grand = sum(total.values())
for name, us in sorted(total.items(), key=lambda kv: -kv[1]):
    print(f"{us / 1e3:9.3f} ms {100 * us / grand:5.1f} % {calls[name]:6d} x {us / calls[name]:8.2f} us {registers.get(name, 0):4d} regs  {name}")
print(f"{grand / 1e3:9.3f} ms GPU time in {sum(calls.values())} launches")
' | tee "$OUT/ncu-$who-$photo-$bpp.txt"
  done
done
