#!/usr/bin/env bash
# On the GPU machine, after `benches/gpu/run.sh --no-tests --no-race` (which builds the
# reference and unpacks our binaries): issue 11's data-set race, benches/gpu/dataset_bench.py.
#
# Usage: [REF_RUNS=2] bash benches/gpu/dataset_bench.sh [JOBS...]   (default: 1 4 8; an entry
#   J:--FLAG[=VALUE],... runs --jobs J with those `sad fit` flags, e.g.
#   4:--backward-strategy=plane-scan)
set -euo pipefail
source "$(dirname "$0")/common.sh"
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=(1 4 8)
python3 -u benches/gpu/dataset_bench.py --sad "$sad" --reference "$reference" \
  --reference-root "$build" --work "$WORK" --reference-runs "${REF_RUNS:-1}" --jobs "${jobs[@]}" | tee "$OUT/dataset_bench.md"
