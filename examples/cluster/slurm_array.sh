#!/usr/bin/env bash
# A Slurm array job that fits a data set with `sad fit`, one shard per task, into one shared
# folder; `sad results` merges the shards' tables when they are done:
#
#   sbatch examples/cluster/slurm_array.sh /shared/kodak /shared/kodak-16bpp
#   sad results /shared/kodak-16bpp -o /shared/kodak-16bpp/results.csv
#
# Each task fits the images whose file names hash to its shard (`--shard I/N`) and writes
# results.shard-I-of-N.csv; a task that is requeued (`scontrol requeue`, or a node lost) skips
# the images it finished and fits the one it was in from the start: outputs and rows are written
# whole or not at all.
#
# The #SBATCH lines are defaults: sbatch's own options override them, e.g. on a cluster without
# GPUs `sbatch --gpus=0 --cpus-per-task=1 --array=1-3 examples/cluster/slurm_array.sh IN OUT`.
# The environment (sbatch passes the submitting shell's on) sets the rest:
#   SAD         the `sad` binary (default: `sad` on the PATH)
#   SAD_DEVICE  its device (default: cuda)
#   SAD_JOBS    images a task fits at once (default: 4)
#   SAD_ITERS   iterations per image (default: the recipe's)
#   SAD_ARGS    other `sad fit` flags (default: --target-bpp 16)
#SBATCH --job-name=sad-fit
#SBATCH --array=1-8
#SBATCH --gpus=1
#SBATCH --cpus-per-task=4
#SBATCH --time=02:00:00
set -euo pipefail
images=${1:?usage: slurm_array.sh IMAGES_DIR OUT_DIR}
out=${2:?usage: slurm_array.sh IMAGES_DIR OUT_DIR}
read -r -a args <<<"${SAD_ARGS---target-bpp 16}"
if [ -n "${SAD_ITERS:-}" ]; then
  args+=(--iters "$SAD_ITERS")
fi
"${SAD:-sad}" --device "${SAD_DEVICE:-cuda}" fit "$images" "${args[@]}" --jobs "${SAD_JOBS:-4}" \
  --out-dir "$out" --shard "${SLURM_ARRAY_TASK_ID}/${SLURM_ARRAY_TASK_COUNT}"
