#!/usr/bin/env bash
# On the GPU machine, after `benches/gpu/run.sh --no-race` (which unpacks our binaries and runs
# the CUDA test builds it finds): renders the cat fit of tests/data/sad with the CUDA build in
# the views the browser viewer shows (plain, zoomed, cells, tau, anisotropy, dots) and compares
# each PNG with the one the same command made elsewhere (EXPECTED_DIR/NAME.png, e.g. from wgpu
# on lavapipe: `bash benches/gpu/views_check.sh --make DIR` on the CPU machine writes them).
#
# Usage: bash benches/gpu/views_check.sh [--make] EXPECTED_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
make=0
if [ "${1:-}" = --make ]; then
  make=1
  shift
fi
expected=$1
sad=${SAD:-/tmp/sad-bin/sad}
[ "$make" = 1 ] && sad=${SAD:-target/debug/sad}
device=${DEVICE:-cuda}
[ "$make" = 1 ] && device=${DEVICE:-auto}
out=${OUT:-/tmp/sad-out}/views
mkdir -p "$out" "$expected"
sites=tests/data/sad/cat160x96_sites.txt
cases=(
  "plain|"
  "zoom4|--width 320 --height 192 --zoom 4 --centre 100,40"
  "cells|--view cells"
  "tau_zoom2|--width 200 --height 120 --view tau --zoom 2"
  "anisotropy|--view anisotropy"
  "dots|--view dots"
)
for case in "${cases[@]}"; do
  name=${case%%|*}
  read -r -a flags <<<"${case#*|}"
  dir=$out
  [ "$make" = 1 ] && dir=$expected
  "$sad" --device "$device" render "$sites" -o "$dir/$name.png" "${flags[@]}" >/dev/null
done
[ "$make" = 1 ] && exit 0
python3 - "$out" "$expected" "${cases[@]}" <<'PY'
import sys
import numpy as np
from PIL import Image
out, expected, cases = sys.argv[1], sys.argv[2], sys.argv[3:]
for case in cases:
    name = case.split("|")[0]
    a = np.asarray(Image.open(f"{out}/{name}.png").convert("RGB"), dtype=np.float64) / 255
    b = np.asarray(Image.open(f"{expected}/{name}.png").convert("RGB"), dtype=np.float64) / 255
    mse = float(np.mean((a - b) ** 2))
    psnr = "identical" if mse == 0 else f"{10 * np.log10(1 / mse):.2f} dB"
    differ = float(np.mean(np.any(a != b, axis=2)))
    print(f"{name}: {psnr} against the expected render, {differ:.2%} of pixels differ")
PY
