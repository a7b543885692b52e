#!/usr/bin/env bash
# On the GPU machine, after benches/gpu/run.sh has built the reference and unpacked `sad`:
# where the time of a fit goes, kernel by kernel (CubeCL's profiler: GPU time of every launch),
# and how much of an iteration is fixed cost (a 64×64 crop, where the GPU has almost nothing to
# do, by us and by the reference).
#
# Usage: bash benches/gpu/kernels.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/sad-out}
WORK=${WORK:-/tmp/sad-work}
sad=/tmp/sad-bin/sad
reference=/tmp/sad-reference/backends/cuda/bin/sad_cuda
mkdir -p "$OUT" "$WORK/kernels"
export XDG_CACHE_HOME="$WORK/cache"
python3 -c "import sys; sys.path.insert(0, 'benches/gpu'); import fit_table, pathlib; fit_table.make_photos(pathlib.Path('$WORK'))"

# Sums the per-launch GPU times of CubeCL's profile log by kernel name.
summarise() {
  python3 - "$1" <<'PY'
import re, sys
from collections import defaultdict
total, count = defaultdict(float), defaultdict(int)
units = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"\| ([\d.]+)(ns|µs|us|ms|s)\s+\| (.*)", line.strip())
    if m:
        name = re.sub(r"<.*", "", m.group(3)).split("::")[-1][:60]
        total[name] += float(m.group(1)) * units[m.group(2)]
        count[name] += 1
grand = sum(total.values())
for name, ms in sorted(total.items(), key=lambda kv: -kv[1]):
    print(f"{ms:10.2f} ms {100 * ms / max(grand, 1e-9):5.1f} % {count[name]:7d} x {ms / count[name] * 1e3:9.1f} µs  {name}")
print(f"{grand:10.2f} ms total GPU time")
PY
}

for case in "astronaut 16 300" "motorcycle-4k 1 120"; do
  set -- $case
  log="$WORK/kernels/$1-$2.log"
  rm -f "$log"
  CUBECL_DEBUG_LOG="$log" CUBECL_DEBUG_OPTION=profile-medium \
    "$sad" --device cuda fit "$WORK/$1.png" --target-bpp "$2" --iters "$3" --log-freq 1000 \
    --prune-start 20 --prune-freq 20 --out-dir "$WORK/kernels" >/dev/null
  echo "== GPU time by kernel: $1, $2 bpp, $3 iterations (pruning every 20 from 20)"
  summarise "$log" | tee "$OUT/kernels-$1-$2.txt"
  # Registers, spills and local memory of the kernels, as ptxas reports them.
  python3 - "$log" "$WORK/kernels/$1.ptx" <<'PY'
import sys
text = open(sys.argv[1], errors="replace").read()
start = text.find(".version")
print("PTX found" if start >= 0 else "no PTX in the log")
if start >= 0:
    open(sys.argv[2], "w").write(text[start:])
PY
done

echo "== fixed cost per iteration: 64×64 crop, 4000 iterations, 256 sites"
python3 - "$WORK/tiny.png" <<'PY'
import sys
from PIL import Image
from skimage import data
Image.fromarray(data.astronaut()[180:244, 200:264]).save(sys.argv[1])
PY
ours=$("$sad" --device cuda fit "$WORK/tiny.png" --sites 1024 --max-sites 1024 --target-bpp 8 --out-dir "$WORK/tiny" | grep "Training time")
ref=$(cd /tmp/sad-reference && CUDA_MODULE_LOADING=EAGER "$reference" "$WORK/tiny.png" --sites 1024 \
  --max-sites 1024 --target-bpp 8 --out-dir "$WORK/tiny-ref" | grep "Training time")
echo "ours: $ours | reference: $ref" | tee "$OUT/fixed-cost.txt"
