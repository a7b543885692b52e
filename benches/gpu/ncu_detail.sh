#!/usr/bin/env bash
# On the GPU machine, after `benches/gpu/run.sh --no-tests --no-race`: Nsight Compute's detailed
# sections (speed of light, memory and compute workload, occupancy, warp stall reasons, source
# counters) for one launch of one kernel, ours or the reference's, to see what bounds a kernel
# before changing it: in the steady state of a 4000-iteration fit of PHOTO at BPP, or in a
# render-only run of a sites file (e.g. one of render_bench.sh's synthetic sets). With SASS=1,
# the SASS source page instead, summed per opcode with the hottest instructions
# (benches/gpu/sass_summary.py): what the kernel's time goes to, instruction by instruction.
#
# Usage: [WHO=ours|ref] [SASS=1] bash benches/gpu/ncu_detail.sh KERNEL_REGEX PHOTO BPP [SKIP]
#        [WHO=ours|ref] [SASS=1] bash benches/gpu/ncu_detail.sh KERNEL_REGEX FILE_sites.txt [SKIP]
#   e.g. bash benches/gpu/ncu_detail.sh render_backward chelsea 16 200
#        bash benches/gpu/ncu_detail.sh candidate_pass /tmp/sad-work/render-bench/512_131072_sites.txt 20
#   (SKIP: launches of that kernel to pass over first, default 200 in a fit, 0 in a render)
set -euo pipefail
source "$(dirname "$0")/common.sh"
kernel=$1
mkdir -p "$WORK/ncu-detail"
who=${WHO:-ours}
case "$2" in
  *_sites.txt)
    sites=$2 skip=${3:-0} label=$(basename "$2" _sites.txt)
    if [ "$who" = ours ]; then
      command=("$sad" --device cuda render "$sites" -o "$WORK/ncu-detail/ours.png")
      "${command[@]}" >/dev/null 2>&1
    else
      command=("$reference" --render "$sites" --out "$WORK/ncu-detail/ref.png")
    fi ;;
  *)
    photo=$2 bpp=$3 skip=${4:-200} label="$2-$3"
    fit_command "$who" "$photo" "$bpp" "$WORK/ncu-detail" ;;
esac
echo "== $who: $kernel, $label, launch $skip of that kernel"
page=()
[ "${SASS:-0}" = 1 ] && page=(--page source --print-source sass --csv)
profile() {
  (cd "$build" && CUDA_MODULE_LOADING=EAGER timeout 300 "$ncu" --set full --import-source no \
    --kernel-name "regex:$kernel" --launch-skip "$skip" --launch-count 1 \
    --cache-control none --clock-control none "${page[@]}" "${command[@]}" 2>/dev/null) |
    grep -v "^==PROF=="
}
if [ "${SASS:-0}" = 1 ]; then
  csv="$OUT/ncu-sass-$who-$kernel-$label.csv"
  profile >"$csv" || true
  python3 "$(dirname "$0")/sass_summary.py" "$csv"
else
  profile | tee "$OUT/ncu-detail-$who-$kernel-$label.txt"
fi
