#!/usr/bin/env bash
# On the GPU machine, after `benches/gpu/run.sh --no-tests --no-race`: issue 37's probe set,
# Kodak-size crops of upscaled scikit-image photos fitted several times by both trainers, with
# their PSNR curves and site counts (benches/gpu/probe_set.py).
#
# Usage: bash benches/gpu/probe_set.sh [--runs 3] [--bpp 16] [--log-freq 250] [--photos NAME...]
#   [--variant NAME:FLAG,FLAG...]...
set -euo pipefail
source "$(dirname "$0")/common.sh"
python3 -u benches/gpu/probe_set.py --sad "$sad" --reference "$reference" \
  --reference-root "$build" --work "$WORK" "$@" | tee -a "$OUT/probe_set.md"
