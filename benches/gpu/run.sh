#!/usr/bin/env bash
# On the GPU machine, from the repository root: builds the reference SAD CUDA trainer from a
# fetched copy of LuckyIYI/SAD (default .ref/sad, kept out of git), unpacks our CUDA binaries
# (.bin/*.xz, built on a CPU machine, see benches/gpu/README.md), runs the CUDA build of the
# integration tests found there (`it_test`: its SAD modules, every backward strategy the H200
# runs among them), then, if `sad` is there, benches/gpu/fit_table.py. What it
# prints is also saved under $OUT. The reference build is kept in /tmp for later calls.
#
# Usage: bash benches/gpu/run.sh [--quick] [--no-extras] [--no-tests] [--no-race]   (binaries in .bin, or BIN=dir)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/sad-out}
REF=${REF:-.ref/sad}
WORK=${WORK:-/tmp/sad-work}
mkdir -p "$OUT" "$WORK"
quick=()
tests=1
race=1
for arg in "$@"; do
  case "$arg" in
    --quick) quick+=(--quick) ;;
    --no-extras) quick+=(--no-extras) ;;
    --no-tests) tests=0 ;;
    --no-race) race=0 ;;
    *) echo "unknown argument $arg" >&2; exit 2 ;;
  esac
done

# The test binaries find their data under the path they were built in.
if [ ! -e /work/main/tests/data ]; then
  mkdir -p /work
  ln -sfn "$PWD" /work/main
fi

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader

build=/tmp/sad-reference
reference="$build/backends/cuda/bin/sad_cuda"
if [ ! -x "$reference" ]; then
  echo "== reference: build (sm_90)"
  rm -rf "$build"
  cp -r "$REF" "$build"
  # The copy targets sm_86 and passes GCC warnings to nvcc; build for the H200 instead.
  sed -i 's/CUDA_ARCHITECTURES "86"/CUDA_ARCHITECTURES "90"/; s/-Wall -Wextra -Wno-unused-parameter //' \
    "$build/backends/cuda/CMakeLists.txt"
  cmake -S "$build/backends/cuda" -B "$build/backends/cuda/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build/backends/cuda/build" -j "$(nproc)" >/dev/null
fi

echo "== ours: unpack"
bin=/tmp/sad-bin
mkdir -p "$bin"
for packed in "${BIN:-.bin}"/*.xz; do
  name=$(basename "$packed" .xz)
  xz -dc "$packed" >"$bin/$name"
  chmod +x "$bin/$name"
done
# A fresh machine: the kernel cache starts empty, so the first run shows the compile time.
export XDG_CACHE_HOME="$WORK/cache"

if [ "$tests" = 1 ] && [ -e "$bin/it_test" ]; then
  echo "== the SAD integration tests on CUDA"
  BURN_SAD_DEVICE=cuda "$bin/it_test" --test-threads 1 ${TESTS:-sad_fit:: sad_step:: sad_render:: \
    sad_candidates:: sad_files:: sad_views:: sad_replay:: sad_mask::} 2>&1 | tail -n 40 \
    | tee -a "$OUT/tests.txt"
fi

[ -x "$bin/sad" ] && [ "$race" = 1 ] || exit 0
echo "== race"
python3 -u benches/gpu/fit_table.py --sad "$bin/sad" --reference "$reference" \
  --reference-root "$build" --work "$WORK" "${quick[@]}" 2>&1 | tee "$OUT/fit_table.md"
