#!/usr/bin/env bash
# A Slurm array job that fits a data set with `sad fit`, one shard per task, into one shared
# folder; `sad results` merges the shards' tables when they are done:
#
#   sbatch examples/cluster/slurm_array.sh /shared/kodak /shared/kodak-16bpp
#   sad results /shared/kodak-16bpp -o /shared/kodak-16bpp/results.csv
#
# Each task fits the images whose file names hash to its shard (`--shard I/N`) and writes
# results.shard-I-of-N.csv; a task that is requeued skips what it already finished.
#SBATCH --job-name=sad-fit
#SBATCH --array=1-8
#SBATCH --gpus=1
#SBATCH --cpus-per-task=4
#SBATCH --time=02:00:00
set -euo pipefail
images=${1:?usage: slurm_array.sh IMAGES_DIR OUT_DIR}
out=${2:?usage: slurm_array.sh IMAGES_DIR OUT_DIR}
sad --device cuda fit "$images" --target-bpp 16 --jobs 4 --out-dir "$out" \
  --shard "${SLURM_ARRAY_TASK_ID}/${SLURM_ARRAY_TASK_COUNT}"
