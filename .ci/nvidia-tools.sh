#!/bin/sh
# NVIDIA's ptxas, cuobjdump, nvdisasm and libdevice for the CUDA kernel report, from their PyPI
# wheels (no CUDA toolkit or GPU needed), pinned, into a folder of their own. Idempotent.
# `--bin` prints the folder that holds the three tools (for PATH), `--cuda-path` the toolkit root
# that holds nvvm/libdevice (for CUDA_PATH: CubeCL's NVPTX path links it for math functions),
# instead of installing.
set -eu
version=13.5.37
dir="${XDG_DATA_HOME:-$HOME/.local/share}/burn-sad/nvidia-tools-$version"
root="$dir/nvidia/cu13"
case "${1:-}" in
  --bin) echo "$root/bin"; exit 0 ;;
  --cuda-path) echo "$root"; exit 0 ;;
esac
installed() {
  [ -x "$root/bin/ptxas" ] && [ -x "$root/bin/cuobjdump" ] && [ -x "$root/bin/nvdisasm" ] \
    && [ -e "$root/nvvm/libdevice/libdevice.10.bc" ]
}
installed && exit 0
rm -rf "$dir"
python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps \
  --target "$dir" "nvidia-cuda-nvcc==$version" "nvidia-cuda-cuobjdump==$version" \
  "nvidia-cuda-nvdisasm==$version" "nvidia-nvvm==$version"
installed
