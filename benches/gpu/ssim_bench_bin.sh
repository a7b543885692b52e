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
