#!/usr/bin/env bash
# On a machine of two GPUs, after `benches/gpu/run.sh --no-tests --no-race` (which builds the
# reference and unpacks our `sad`): issue 65's measurements in one command.
#
# 1. The data-set bench (24 photos of 768×512 at 16 bpp, the reference one process per image, as
#    dataset_bench.sh) with `sad fit DIR --jobs J --devices cuda:0` and then
#    `--devices cuda:0,cuda:1`: wall times, the two-GPU run over the one-GPU run, and every
#    image's PSNR in both runs side by side (the fits are deterministic per seed: they should
#    be equal).
# 2. `multi_device_ssim` (burn-train's multi-device Learner with `ssim_l1_loss`) on one GPU and on
#    two: each run's loss per epoch and training time, and the two-GPU time over the one-GPU.
#
# Usage: BIN=dir [JOBS=8] [EPOCHS=6] bash benches/gpu/two_gpus.sh
#   `$BIN/multi_device_ssim.xz`: the CUDA build of the example, on a machine with Rust:
#   `cargo build --release --features train --no-default-features --features cuda
#   --example multi_device_ssim` (target/release/examples/multi_device_ssim), `xz -T2 -6`.
set -euo pipefail
source "$(dirname "$0")/common.sh"
jobs=${JOBS:-8}
epochs=${EPOCHS:-6}
nvidia-smi -L
gpus=$(nvidia-smi -L | grep -c '^GPU ')
if [ "$gpus" -lt 2 ]; then
  echo "two_gpus.sh: this machine has $gpus GPU(s); it needs two" >&2
  exit 1
fi

python3 -u benches/gpu/dataset_bench.py --sad "$sad" --reference "$reference" \
  --reference-root "$build" --work "$WORK" --jobs "$jobs:--devices=cuda:0" \
  "$jobs:--devices=cuda:0,cuda:1" | tee "$OUT/two_gpus_dataset.md"
python3 - "$WORK/dataset-ours-1-$jobs/results.csv" "$WORK/dataset-ours-2-$jobs/results.csv" \
  "$OUT/two_gpus_dataset.md" <<'PY' | tee -a "$OUT/two_gpus_dataset.md"
import csv, re, sys
one, two, table = sys.argv[1:4]
rows = lambda path: {r["name"]: float(r["psnr"]) for r in csv.DictReader(open(path))}
a, b = rows(one), rows(two)
print("\n| image | PSNR dB, cuda:0 | PSNR dB, cuda:0,cuda:1 | difference |")
print("|---|---|---|---|")
for name in sorted(a):
    print(f"| {name} | {a[name]:.4f} | {b.get(name, float('nan')):.4f} | {b.get(name, 0) - a[name]:+.4f} |")
walls = [float(m.group(1)) for m in re.finditer(r"^\| ours, [^|]* \| ([0-9.]+) \|", open(table).read(), re.M)]
if len(walls) >= 2:
    print(f"\nwall time: one GPU {walls[-2]:.2f} s, two GPUs {walls[-1]:.2f} s, "
          f"two / one = {walls[-1] / walls[-2]:.3f} (target ≤ 0.55)")
print(f"images with different PSNR: {sum(abs(b.get(n, 0) - a[n]) > 0 for n in a)} of {len(a)}")
PY

xz -dc "${BIN:-.bin}/multi_device_ssim.xz" >/tmp/multi_device_ssim
chmod +x /tmp/multi_device_ssim
for devices in cuda:0 cuda:0,cuda:1; do
  echo "== multi_device_ssim --devices $devices --epochs $epochs"
  /tmp/multi_device_ssim --devices "$devices" --epochs "$epochs" | tee "$OUT/learner-${devices//[:,]/_}.txt"
done
python3 - "$OUT/learner-cuda_0.txt" "$OUT/learner-cuda_0_cuda_1.txt" <<'PY' | tee "$OUT/two_gpus_learner.md"
import re, sys
def read(path):
    text = open(path).read()
    losses = [float(x) for x in re.findall(r"mean training loss ([0-9.]+)", text)]
    steps, seconds = re.search(r"(\d+) optimizer steps in ([0-9.]+) s", text).groups()
    return losses, int(steps), float(seconds)
(l1, n1, s1), (l2, n2, s2) = read(sys.argv[1]), read(sys.argv[2])
print("| epoch | loss, one GPU | loss, two GPUs |")
print("|---|---|---|")
for epoch, (x, y) in enumerate(zip(l1, l2), start=1):
    print(f"| {epoch} | {x:.4f} | {y:.4f} |")
print(f"\ntraining time (every epoch): one GPU {s1:.2f} s in {n1} steps, two GPUs {s2:.2f} s "
      f"in {n2} steps, two / one = {s2 / s1:.3f} (target ≤ 0.6)")
PY
