#!/usr/bin/env bash
# CI step `gl-adapter`: the machines a newcomer may have. With the Vulkan driver hidden, wgpu's
# adapter is Mesa's OpenGL one (no f32 atomics in storage buffers); with Mesa's EGL hidden too,
# there is no adapter at all. On each, every command either works, with its value checked, or
# refuses in one line with exit 1: never a panic (exit 101), never a half-written output.
#
# Usage: bash .ci/gl-adapter.sh SAD FIXTURE   (the debug `sad` binary, and the downstream
#   fixture built against the packaged crates, as the `browser` and `downstream` steps leave them)
set -euo pipefail
cd "$(dirname "$0")/.."
sad=$1
fixture=$2
data=tests/data
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

gl() { env VK_ICD_FILENAMES=/nonexistent.json VK_DRIVER_FILES=/nonexistent.json "$@"; }
no_adapter() { gl env __EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent.json "$@"; }
fail() {
  echo "gl-adapter: $*" >&2
  exit 1
}

# run NAME EXPECTED_CODE COMMAND...: runs COMMAND with its output in $work/NAME.{out,err}, and
# fails unless it exits with EXPECTED_CODE.
run() {
  local name=$1 expected=$2 code=0
  shift 2
  "$@" >"$work/$name.out" 2>"$work/$name.err" || code=$?
  if [ "$code" -ne "$expected" ]; then
    cat "$work/$name.out" "$work/$name.err" >&2
    fail "$name exited with $code, not $expected"
  fi
}

# refused NAME PATTERN: the run NAME wrote exactly one line, an `error:` line matching PATTERN.
refused() {
  local lines
  lines=$(cat "$work/$1.out" "$work/$1.err" | grep -c '')
  [ "$lines" -eq 1 ] && grep -q "^error: .*$2" "$work/$1.err" \
    || { cat "$work/$1.out" "$work/$1.err" >&2; fail "$1 did not refuse in one line naming '$2'"; }
}

# near NAME VALUE EXPECTED TOLERANCE: |VALUE − EXPECTED| ≤ TOLERANCE.
near() {
  awk -v v="$2" -v e="$3" -v t="$4" 'BEGIN { d = v - e; if (d < 0) d = -d; exit !(d <= t) }' \
    || fail "$1: $2, expected $3 ± $4"
  echo "$1: $2 (expected $3 ± $4)"
}

# The float64 SSIM of chelsea against its degraded copy (same padding, exact Gaussian).
expected=$(awk '$1 == "chelsea" { print $2 }' "$data/expected.txt")

# The GL adapter is there: `wgpu-cpu` opens it, and SSIM runs on it.
run ssim-gl 0 gl "$sad" --device wgpu-cpu ssim "$data/chelsea.png" "$data/chelsea_degraded.png"
grep -q "^device: wgpu, CPU adapter" "$work/ssim-gl.err" "$work/ssim-gl.out" \
  || fail "no GL adapter with the Vulkan driver hidden (setup installs Mesa's EGL)"
near "ssim on the GL adapter" "$(tail -1 "$work/ssim-gl.out")" "$expected" 1e-5

# The render runs there, and gives the Vulkan device's PSNR against the photo.
sites="$data/sad/astro128_sites.txt"
photo="$data/sad/astro128.png"
run render-vk 0 "$sad" render "$sites" --target "$photo" --out "$work/vk.png"
run render-gl 0 gl "$sad" --device wgpu-cpu render "$sites" --target "$photo" --out "$work/gl.png"
psnr() { tail -1 "$work/$1.out" | sed -n 's/^PSNR: \([0-9.]*\) dB$/\1/p'; }
near "render on the GL adapter, dB" "$(psnr render-gl)" "$(psnr render-vk)" 0.01

# Training needs f32 atomics: asked for by name, the GL adapter is refused in one line before
# anything is written; `auto` passes over it with a warning and fits on Flex.
fit=(fit "$data/sad/astro64.png" --iters 20 --sites 64 --max-sites 64)
run fit-gl 1 gl "$sad" --device wgpu-cpu "${fit[@]}" --out-dir "$work/fit-gl"
refused fit-gl "cannot run the SAD training kernels"
[ ! -e "$work/fit-gl" ] || fail "the refused fit wrote $(ls "$work/fit-gl")"
run fit-auto 0 gl "$sad" "${fit[@]}" --out-dir "$work/fit-auto"
grep -q "^warning: wgpu, CPU adapter skipped: .*SAD training" "$work/fit-auto.err" \
  || fail "auto did not say why it passed over the GL adapter"
grep -q "device=Flex" "$work/fit-auto.out" || fail "auto did not fit on Flex"
[ -s "$work/fit-auto/astro64_sites.txt" ] && [ -s "$work/fit-auto/astro64.png" ] \
  || fail "the fit on Flex wrote no outputs"
echo "fit: refused on the GL adapter by name, fitted on Flex by auto"

# The library, through the downstream fixture: `select_device` refuses the GL adapter named in
# one line before any work (the fixture fits too); `auto` passes over it and runs everything.
run fixture-gl 1 gl env BURN_SAD_DEVICE=wgpu-cpu "$fixture" "$data"
refused fixture-gl "cannot run the SAD training kernels"
run fixture-auto 0 gl env BURN_SAD_DEVICE=auto "$fixture" "$data"
grep -q "^fit: " "$work/fixture-auto.out" || fail "the fixture did not fit on auto"
echo "downstream fixture: refused on the GL adapter by name, ran everything on auto"

# No adapter at all: the CLI falls back to Flex with a warning, with the same value.
run ssim-none 0 no_adapter "$sad" ssim "$data/chelsea.png" "$data/chelsea_degraded.png"
grep -q "^warning: no GPU or wgpu adapter found; running on Flex" "$work/ssim-none.err" \
  || fail "no warning of the fallback to Flex"
near "ssim with no adapter (Flex)" "$(tail -1 "$work/ssim-none.out")" "$expected" 1e-5
