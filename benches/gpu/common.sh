# Sourced by the scripts that run after `run.sh` on the GPU machine: where `run.sh` put the
# reference build and our binaries, the output and work folders, and the photos.
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/sad-out}
WORK=${WORK:-/tmp/sad-work}
sad=${SAD:-/tmp/sad-bin/sad}
build=/tmp/sad-reference
reference="$build/backends/cuda/bin/sad_cuda"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
# The kernel cache run.sh filled, unless the caller names another.
export XDG_CACHE_HOME=${KERNEL_CACHE:-$WORK/cache}
mkdir -p "$OUT" "$WORK"
# The race's photos in $WORK (PHOTO.png), made from scikit-image's as fit_table.py makes them.
python3 -c "import sys; sys.path.insert(0, 'benches/gpu'); import fit_table, pathlib; fit_table.make_photos(pathlib.Path('$WORK'))"
# Sets `command` to a 4000-iteration fit of PHOTO at BPP by WHO (`ours`, which is run once first
# to fill the kernel cache, or `ref`), writing under DIR.
fit_command() {
  local who=$1 photo=$2 bpp=$3 dir=$4
  if [ "$who" = ours ]; then
    command=("$sad" --device cuda fit "$WORK/$photo.png" --target-bpp "$bpp" --iters 4000 --out-dir "$dir/out")
    "${command[@]}" >/dev/null 2>&1
  else
    command=("$reference" "$WORK/$photo.png" --target-bpp "$bpp" --iters 4000 --out-dir "$dir/ref-out")
  fi
}
