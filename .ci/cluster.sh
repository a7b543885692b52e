#!/usr/bin/env bash
# CI step `cluster`: the data-set array job under a real Slurm. Starts a one-node cluster (munged,
# slurmctld and slurmd, written for this host's name, CPUs and memory, everything under one
# scratch folder), submits examples/cluster/slurm_array.sh as shipped, with its GPU request,
# CPUs, array size, device and iterations overridden from sbatch's command line and the
# environment, over real photos from tests/data and one file that is not an image, and checks:
# the shards' tables name every image exactly once and no image was fitted by two tasks; a task
# killed mid-fit (`scancel --signal=KILL`, then `scontrol requeue`) skips what it had finished,
# refits the image it was in, and leaves no partial output or duplicate row; the bad file gets
# its error row and the rest of its shard is fitted; `sad results` merges the shards into the
# table of a single-process `sad fit DIR` of the same set. Every daemon it started is stopped by
# its process id; on a failure the scheduler's logs are printed.
#
# Usage: bash .ci/cluster.sh SAD   (the debug `sad` binary, as the `browser` step leaves it)
set -euo pipefail
cd "$(dirname "$0")/.."
sad=$(realpath "$1")
data=$PWD/tests/data
work=$(mktemp -d)
chmod 755 "$work"
conf=$work/slurm.conf
export SLURM_CONF=$conf

fail() {
  echo "cluster: $*" >&2
  exit 1
}
say() { echo "cluster [${SECONDS} s]: $*"; }

# Stops what this script started, by the process ids its daemons wrote; on a failure first
# prints the scheduler's logs and the tasks' outputs.
finish() {
  local status=$?
  if [ "$status" -ne 0 ]; then
    for log in "$work"/*.log "$work"/out/slurm-*.out; do
      [ -e "$log" ] && { echo "=== $log"; tail -40 "$log"; } >&2
    done
  fi
  local pids=()
  for daemon in slurmd slurmctld munged; do
    [ -s "$work/$daemon.pid" ] && pids+=("$(cat "$work/$daemon.pid")")
  done
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
  done
  [ "$status" -ne 0 ] || rm -rf "$work"
  exit "$status"
}
trap finish EXIT

# The rows of results table $1, its header left out.
table_rows() { tail -n +2 "$1"; }

# Waits up to $2 seconds for the command `$1` to succeed.
wait_for() {
  local deadline=$((SECONDS + $2))
  until eval "$1"; do
    [ "$SECONDS" -lt "$deadline" ] || fail "timed out waiting for: $1"
    sleep 0.2
  done
}

# The Kubernetes example's command, run by a shell as the Job runs it for each completion index
# (with `$$` as Kubernetes passes `$`) against a stand-in `sad` that prints its shard: every
# shard of 8 once.
mkdir -p "$work/bin"
printf '#!/bin/sh\nfor a; do case $prev in --shard) echo "$a";; esac; prev=$a; done\n' >"$work/bin/sad"
chmod +x "$work/bin/sad"
k8s_command=$(awk '/args:/ { on = 1; next } on && /- >-/ { next } on && /^ *[a-z]+:/ { exit } on { printf "%s ", $0 }' \
  examples/cluster/k8s_indexed_job.yaml | sed 's/\$\$/$/g')
shards=$(for index in 0 1 2 3 4 5 6 7; do
  JOB_COMPLETION_INDEX=$index PATH="$work/bin:$PATH" sh -c "$k8s_command"
done | sort | tr '\n' ' ')
[ "$shards" = "1/8 2/8 3/8 4/8 5/8 6/8 7/8 8/8 " ] || fail "the Kubernetes Job's shards: $shards"
say "the Kubernetes Job's 8 pods take shards 1/8 … 8/8"

# The cluster: munge's own daemon on a socket of ours, then the controller and the node. A
# requeued job waits for its killed credential to expire: `cred_expire` (120 s by default).
host=$(hostname -s)
memory=$(awk '/MemTotal/ { print int($2 / 1024 * 0.9) }' /proc/meminfo)
cpus=$(nproc)
mkdir -p "$work/state" "$work/spool" "$work/out"
chown munge: "$work"
runuser -u munge -- munged --socket="$work/munge.socket" --pid-file="$work/munged.pid" \
  --log-file="$work/munged.log" --seed-file="$work/munged.seed"
cat >"$conf" <<EOF
ClusterName=ci
SlurmctldHost=$host(127.0.0.1)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge.socket,cred_expire=5
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ReturnToService=2
JobRequeue=1
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -f "$conf"
slurmd -f "$conf"
wait_for '[ "$(sinfo -h -o %t 2>/dev/null)" = idle ]' 30
say "one node, $cpus CPUs, $memory MB"

# The set: seven real photos (fitted at 64 px on the long side) and a file that is not an
# image; by file name, shard 1 holds astronaut, chelsea and coffee_degraded, shard 2
# chelsea_degraded and not_a_png, shard 3 astro64, cat160x96 and coffee.
set_dir=$work/photos
mkdir -p "$set_dir"
for photo in astronaut chelsea coffee chelsea_degraded coffee_degraded; do
  cp "$data/$photo.png" "$set_dir/"
done
cp "$data/sad/astro64.png" "$data/sad/cat160x96.png" "$set_dir/"
echo "not a PNG" >"$set_dir/not_a_png.png"
images=$(find "$set_dir" -type f | grep -c '')
good=$((images - 1))
fit_args="--max-dim 64 --target-bpp 4 --sites 128 --max-sites 128 --prune-start 60 --prune-end 160 --seed 7"
iters=200

# The array job, three tasks on a machine without GPUs: sbatch's options override the script's.
out=$work/out
job=$(SAD="$sad" SAD_DEVICE=auto SAD_JOBS=1 SAD_ITERS=$iters SAD_ARGS="$fit_args" \
  sbatch --parsable --array=1-3 --gpus=0 --cpus-per-task=1 --output="$out/slurm-%A_%a.out" \
  examples/cluster/slurm_array.sh "$set_dir" "$out")
say "array job $job submitted"

# Task 1 (three photos) is killed as soon as it has finished its first image: in the middle of
# its second (each takes about a second).
task_log=$out/slurm-${job}_1.out
wait_for "grep -q 'PSNR .* sites' '$task_log' 2>/dev/null" 120
scancel --signal=KILL "${job}_1"
wait_for "! squeue -h -j '${job}_1' -t RUNNING,COMPLETING | grep -q ." 30
finished=$(grep -c 'PSNR .* sites' "$task_log" || true)
[ "$finished" -ge 1 ] && [ "$finished" -le 2 ] || fail "task 1 finished $finished of 3 images before the kill"
shard_csv=$out/results.shard-1-of-3.csv
[ "$(table_rows "$shard_csv" | grep -c '')" -eq "$finished" ] \
  || fail "the killed task's table does not hold its $finished finished rows"
say "task 1 killed after $finished of its 3 images"
wait_for "scontrol requeue '${job}_1' 2>/dev/null" 30

# Every task done (the requeued one included): the cluster's queue empty.
wait_for '[ -z "$(squeue -h)" ]' 240
for task in 1 2 3; do
  grep -q "^This run:" "$out/slurm-${job}_$task.out" || fail "task $task did not finish its shard"
done
[ "$(grep -c "done before .*skipped" "$out/slurm-${job}_1.out")" -eq "$finished" ] \
  || fail "the requeued task did not skip the $finished images it had finished"

# The shards: every image named once, by exactly one shard; none fitted by two tasks.
rows=$(for task in 1 2 3; do table_rows "$out/results.shard-$task-of-3.csv"; done | cut -d, -f1 | sort)
count=$(echo "$rows" | grep -c '')
[ "$count" -eq "$images" ] || fail "the shards' tables hold $count rows, not $images"
[ -z "$(echo "$rows" | uniq -d)" ] || fail "named twice: $(echo "$rows" | uniq -d)"
for task in 1 2 3; do
  grep -ho '^[^ :]*\.png: PSNR' "$out/slurm-${job}_$task.out" | sort -u
done | sort | uniq -d | grep . && fail "an image was fitted by two tasks"
for task in 1 2 3; do
  [ "$(table_rows "$out/results.shard-$task-of-3.csv" | grep -c '')" -ge 2 ] \
    || fail "shard $task holds fewer than two images"
done

# The killed image: refitted whole, no partial output left, no output without its row.
leftovers=$(find "$out" -name '*.partial')
[ -z "$leftovers" ] || fail "partial outputs left: $leftovers"
for name in $(echo "$rows" | grep -v not_a_png); do
  stem=${name%.png}
  [ -s "$out/$stem.png" ] && [ -s "$out/${stem}_sites.txt" ] || fail "$name has no outputs"
done
grep -q '^not_a_png.png,' "$out/results.shard-2-of-3.csv" || fail "the bad file has no row"
grep '^not_a_png.png,' "$out/results.shard-2-of-3.csv" | grep -q 'not a PNG or JPEG' \
  || fail "the bad file's row holds no error"
say "every image once, the killed one refitted, the bad file's error in its row"

# The merged table against a single process over the same set.
"$sad" results "$out" -o "$work/merged.csv" >/dev/null 2>"$work/results.err"
single=$work/single
# shellcheck disable=SC2086 # the flags, split
"$sad" fit "$set_dir" --jobs 1 --iters "$iters" $fit_args --out-dir "$single" \
  >"$work/single.log" 2>&1 || true
grep -q "^This run: $good fitted, 1 failed" "$work/single.log" || fail "the single run: $(tail -3 "$work/single.log")"
python3 - "$work/merged.csv" "$single/results.csv" <<'EOF'
import csv, sys
def rows(path):
    with open(path, newline="") as f:
        return {row["name"]: row for row in csv.DictReader(f)}
merged, single = rows(sys.argv[1]), rows(sys.argv[2])
if sorted(merged) != sorted(single):
    sys.exit(f"cluster: merged images {sorted(merged)} != single run's {sorted(single)}")
worst = 0.0
for name, a in merged.items():
    b = single[name]
    for key in ("width", "height", "sites", "iterations"):
        if a[key] != b[key]:
            sys.exit(f"cluster: {name}: {key} {a[key]} merged, {b[key]} single")
    if bool(a["error"]) != bool(b["error"]):
        sys.exit(f"cluster: {name}: error '{a['error']}' merged, '{b['error']}' single")
    if not a["error"]:
        worst = max(worst, abs(float(a["psnr"]) - float(b["psnr"])))
# The spread of one seed's fits between runs on lavapipe is below this.
if worst > 0.05:
    sys.exit(f"cluster: PSNR differs by {worst:.4f} dB between the merged and the single run")
print(f"cluster: merged table = single run's ({len(merged)} rows, PSNR within {worst:.4f} dB)")
EOF
