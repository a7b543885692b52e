#!/usr/bin/env bash
# On the GPU machine, after `benches/gpu/run.sh` (reference built, `sad` unpacked): the reference
# and ours one after another on what a data set's photos need besides a plain fit.
#   1. `--mask`: chelsea (451×300) with a mask that keeps an ellipse around the cat's head, given
#      at half size (225×150) so that both programs scale it to the photo; 1 and 16 bpp. Each
#      program's printed PSNR counts the kept pixels only; times are the loops.
#   2. MAX_DIM: chelsea with MAX_DIM 400, so both scale the photo down to 400×266 before fitting
#      (the reference through its training_config.json, ours through --max-dim); the two scaled
#      renders' sizes, and each program's PSNR.
#
# Usage: [RUNS=2] bash benches/gpu/mask_race.sh
set -euo pipefail
source "$(dirname "$0")/common.sh"
dir="$WORK/mask"
mkdir -p "$dir"
python3 - "$WORK/chelsea.png" "$dir/mask.png" <<'PY'
import sys
from PIL import Image
photo = Image.open(sys.argv[1])
w, h = photo.size[0] // 2, photo.size[1] // 2
mask = Image.new("L", (w, h))
cx, cy, a, b = 0.45 * w, 0.45 * h, 0.3 * w, 0.4 * h
mask.putdata([255 if ((x - cx) / a) ** 2 + ((y - cy) / b) ** 2 <= 1 else 0
              for y in range(h) for x in range(w)])
mask.save(sys.argv[2])
print(f"mask {w}x{h}, keeps {sum(v > 0 for v in mask.getdata()) / (w * h):.1%}")
PY
field() { grep -o "$1: [0-9.]*" | head -1 | grep -o "[0-9.]*$"; }
psnr() { grep -o "PSNR: [0-9.]* dB" | tail -1 | grep -o "[0-9][0-9.]*" || echo "?"; }
for bpp in 1 16; do
  for run in $(seq "${RUNS:-2}"); do
    ref=$(cd "$build" && CUDA_MODULE_LOADING=EAGER "$reference" "$WORK/chelsea.png" --mask "$dir/mask.png" \
      --target-bpp "$bpp" --iters 4000 --log-freq 1000 --out-dir "$dir/ref")
    ours=$("$sad" --device cuda fit "$WORK/chelsea.png" --mask "$dir/mask.png" --target-bpp "$bpp" \
      --iters 4000 --log-freq 1000 --out-dir "$dir/ours")
    echo "mask, chelsea $bpp bpp run $run: reference $(echo "$ref" | field "Training time") s, $(echo "$ref" | psnr) dB;" \
      "ours $(echo "$ours" | field "Training time") s, $(echo "$ours" | psnr) dB ($(echo "$ours" | grep -o 'mask=[^|]*$'))"
  done
done
# MAX_DIM 400: the reference reads training_config.json from its working folder.
mkdir -p "$dir/maxdim"
python3 -c "import json; c = json.load(open('$build/training_config.json')); c['MAX_DIM'] = 400; json.dump(c, open('$dir/maxdim/training_config.json', 'w'))"
ref=$(cd "$dir/maxdim" && CUDA_MODULE_LOADING=EAGER "$reference" "$WORK/chelsea.png" --target-bpp 4 \
  --iters 4000 --log-freq 1000 --out-dir "$dir/maxdim/ref")
ours=$("$sad" --device cuda fit "$WORK/chelsea.png" --max-dim 400 --target-bpp 4 --iters 4000 \
  --log-freq 1000 --out-dir "$dir/maxdim/ours" 2>&1)
echo "$ours" | grep "scaled down" || true
python3 - "$dir/maxdim" <<PY
import sys, glob
from PIL import Image
root = sys.argv[1]
sizes = {who: Image.open(sorted(glob.glob(f"{root}/{who}/*.png"))[0]).size for who in ("ref", "ours")}
print(f"MAX_DIM 400, chelsea 4 bpp: reference {sizes['ref']} $(echo "$ref" | psnr) dB, ours {sizes['ours']} $(echo "$ours" | psnr) dB")
PY
