#!/usr/bin/env bash
# On the GPU machine, after `benches/gpu/run.sh --no-tests --no-race`: both programs' printed
# render-only PSNR against their PNGs' PSNR computed in float64 (benches/gpu/psnr_check.py).
#
# Usage: bash benches/gpu/psnr_check.sh PHOTO:BPP...   (e.g. motorcycle-4k:1 coffee-1080p:16)
set -euo pipefail
source "$(dirname "$0")/common.sh"
python3 -u benches/gpu/psnr_check.py --sad "$sad" --reference "$reference" \
  --reference-root "$build" --work "$WORK" "$@" | tee "$OUT/psnr_check.md"
