#!/usr/bin/env bash
# On the GPU machine, after `benches/gpu/run.sh --no-tests --no-race` with the CUDA build of the
# `sad_render` bench in the binaries folder (`sad_render_bench`): issue 9's render-only table.
# The bench writes its synthetic site sets (512² to 2048², 32 768 and 131 072 sites), the
# reference renders each (`sad_cuda --render FILE`, its `Candidate build` and `Render`), and the
# bench runs again with those times as its baseline, printing ours, theirs and the ratios.
#
# With SWITCH=NAME=VALUE (e.g. SWITCH=BURN_SAD_CHECKED_KERNELS=1) the bench then runs again with that
# environment switch set, and once more without it, against the same baseline, for an A/B of
# the switch in one command; SWITCH="A=1 B=2" runs once with each setting in turn (each with a
# kernel cache of its own).
#
# Usage: [SWITCH="NAME=VALUE ..."] bash benches/gpu/render_bench.sh
set -euo pipefail
source "$(dirname "$0")/common.sh"
bench=/tmp/sad-bin/sad_render_bench
sets="$WORK/render-bench"
mkdir -p "$sets"
"$bench" --write-sites "$sets" > "$OUT/render_bench_first.md"
baseline="$sets/baseline.txt"
echo "# side sites candidate_ms render_ms (the reference's)" > "$baseline"
for file in "$sets"/*_sites.txt; do
  name=$(basename "$file" _sites.txt)
  side=${name%_*} count=${name#*_}
  printed=$(cd "$build" && CUDA_MODULE_LOADING=EAGER "$reference" --render "$file" --out "$sets/$name.png")
  line=$(echo "$printed" | grep -o "Candidate build: [0-9.]* ms | Render: [0-9.]* ms")
  build_ms=$(echo "$line" | sed -E 's/Candidate build: ([0-9.]+) ms.*/\1/')
  render_ms=$(echo "$line" | sed -E 's/.*Render: ([0-9.]+) ms/\1/')
  echo "$side $count $build_ms $render_ms" >> "$baseline"
done
"$bench" --baseline "$baseline" | tee "$OUT/render_bench.md"
if [ -n "${SWITCH:-}" ]; then
  for setting in $SWITCH; do
    echo "== with $setting"
    # Its own kernel cache: a switch may change how a kernel compiles, not its cache key.
    XDG_CACHE_HOME="$WORK/cache-$setting" env "$setting" "$bench" --baseline "$baseline" |
      tee "$OUT/render_bench_switched-$setting.md"
  done
  echo "== without, again"
  "$bench" --baseline "$baseline" | tee "$OUT/render_bench_again.md"
fi
