#!/usr/bin/env bash
# On the GPU machine, after `benches/gpu/run.sh --no-tests --no-race`: issue 9's render-only
# fidelity, several renders of each file by both programs (benches/gpu/fidelity.py).
#
# Usage: [RUNS=5] bash benches/gpu/fidelity.sh [PHOTO...]   (fit_table.py's photo names)
set -euo pipefail
source "$(dirname "$0")/common.sh"
python3 -u benches/gpu/fidelity.py --sad "$sad" --reference "$reference" \
  --reference-root "$build" --work "$WORK" --runs "${RUNS:-5}" --photos "$@" \
  | tee "$OUT/fidelity.md"
