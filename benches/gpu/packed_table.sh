#!/usr/bin/env bash
# On the GPU machine, from the repository root: the README's packed table. Fits each race photo
# (fit_table.py's six) at 1 and 16 bpp with our CUDA `sad` (`$BIN/sad.xz`, default .bin; 4000
# iterations, the text format), writes the packed file (`sad convert`), renders the text file and
# the packed one, and prints per run the bytes per site on disk of each format, the fit's own
# PSNR and both renders' PSNR against the photo. The renders run 64 propagation passes
# (`PASSES`): with the default 16, two renders of one dense file differed by up to 1 dB on the
# H200 (the seeding of the candidate lists races, as the reference's does), which would hide
# the quantisation's cost.
#
# Usage: BIN=dir bash benches/gpu/packed_table.sh [PHOTO...]   (default: all six)
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p /tmp/sad-bin
xz -dc "${BIN:-.bin}/sad.xz" >/tmp/sad-bin/sad
chmod +x /tmp/sad-bin/sad
source benches/gpu/common.sh
photos=("$@")
PASSES=${PASSES:-64}
[ ${#photos[@]} -gt 0 ] || photos=(chelsea astronaut coffee motorcycle coffee-1080p motorcycle-4k)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
psnr() { sed -n 's/^PSNR: \(.*\) dB$/\1/p' | tail -1; }
table="$OUT/packed_table.md"
{
  echo "| photo | size | bpp | sites | text B/site | packed B/site | fit PSNR | render text | render packed | Δ dB |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
} | tee "$table"
for photo in "${photos[@]}"; do
  for bpp in 1 16; do
    dir="$WORK/packed/$photo-$bpp"
    mkdir -p "$dir"
    "$sad" --device cuda fit "$WORK/$photo.png" --target-bpp "$bpp" --iters 4000 \
      --out-dir "$dir" >"$dir/fit.log" 2>&1
    text="$dir/${photo}_sites.txt"
    packed="$dir/${photo}_sites.sadp"
    "$sad" convert "$text" "$packed" >/dev/null
    fit=$(psnr <"$dir/fit.log")
    a=$("$sad" --device cuda render "$text" --passes "$PASSES" -o "$dir/text.png" \
      --target "$WORK/$photo.png" | psnr)
    c=$("$sad" --device cuda render "$packed" --passes "$PASSES" -o "$dir/file.png" \
      --target "$WORK/$photo.png" | psnr)
    sites=$(sed -n 's/^# Total sites: //p' "$text")
    size=$(sed -n 's/^# Image size: //p' "$text" | tr ' ' x)
    python3 - "$photo" "$size" "$bpp" "$sites" "$(stat -c %s "$text")" "$(stat -c %s "$packed")" "$fit" "$a" "$c" <<'PY' | tee -a "$table"
import sys
photo, size, bpp, sites, text, packed, fit, a, c = sys.argv[1:]
sites = int(sites)
print(f"| {photo} | {size} | {bpp} | {sites} | {int(text) / sites:.1f} | {int(packed) / sites:.2f} "
      f"| {float(fit):.2f} | {float(a):.4f} | {float(c):.4f} | {float(c) - float(a):+.4f} |")
PY
  done
done
