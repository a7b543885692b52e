# Sourced by the SSIM scripts: unpacks the CUDA build of the fused_ssim bench from
# `$BIN/fused_ssim.xz` (default .bin) into $ssim_bench, every time, so that a later BIN is never
# served an earlier build.
ssim_bench=/tmp/fused_ssim_bench
xz -dc "${BIN:-.bin}/fused_ssim.xz" >"$ssim_bench"
chmod +x "$ssim_bench"

# ssim_row_and_list DEFAULT_ROW DEFAULT_ITEM... -- ARG...: the scripts' arguments `[ROW_KEY
# [ITEM...]]`: sets `row` to the first ARG (else DEFAULT_ROW) and the array `items` to the
# others (else the DEFAULT_ITEMs).
ssim_row_and_list() {
  local defaults=()
  row=$1
  shift
  while [ "$1" != -- ]; do
    defaults+=("$1")
    shift
  done
  shift
  if [ $# -gt 0 ]; then
    row=$1
    shift
  fi
  items=("$@")
  [ ${#items[@]} -gt 0 ] || items=("${defaults[@]}")
}

# Installs fused-ssim from the fetched copy in .ref/fused-ssim (kept out of git), built for sm_90,
# unless it is installed already; then times it into $OUT/baseline.txt with ITERS iterations.
fused_ssim_baseline() {
  if ! python3 -c "import fused_ssim" 2>/dev/null; then
    rm -rf /tmp/fused-ssim-build
    cp -r .ref/fused-ssim /tmp/fused-ssim-build
    (cd /tmp/fused-ssim-build && CUDA_ARCHITECTURES=90 python3 -m pip install --no-build-isolation -q . 2>&1 | tail -3)
  fi
  python3 benches/fused_ssim_baseline.py "$1" >"$OUT/baseline.txt"
}
