# Sourced by the SSIM scripts: unpacks the CUDA build of the fused_ssim bench from
# `$BIN/fused_ssim.xz` (default .bin) into $ssim_bench, every time, so that a later BIN is never
# served an earlier build.
ssim_bench=/tmp/fused_ssim_bench
xz -dc "${BIN:-.bin}/fused_ssim.xz" >"$ssim_bench"
chmod +x "$ssim_bench"
