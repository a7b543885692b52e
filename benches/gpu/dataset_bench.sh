#!/usr/bin/env bash
# On the GPU machine, after `benches/gpu/run.sh --no-tests --no-race` (which builds the
# reference and unpacks our binaries): issue 11's data-set race, benches/gpu/dataset_bench.py.
#
# Usage: [REF_RUNS=2] bash benches/gpu/dataset_bench.sh [JOBS...]   (default: 1 4 8; an entry
#   J:NAME=VALUE,... runs --jobs J with those environment variables set, e.g. 4:BURN_SAD_REPLAY=0)
set -euo pipefail
source "$(dirname "$0")/common.sh"
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=(1 4 8)
python3 -u benches/gpu/dataset_bench.py --sad "$sad" --reference "$reference" \
  --reference-root "$build" --work "$WORK" --reference-runs "${REF_RUNS:-1}" --jobs "${jobs[@]}" | tee "$OUT/dataset_bench.md"
