#!/usr/bin/env python3
"""Issue 11's data-set race on one GPU: 24 photos of Kodak's size (768×512), 16 bpp, 4000
iterations, the shipped config. The reference fits them one after another, a process per image,
as its Kodak script does; ours fits the folder with `sad fit DIR --jobs J` for each J given.
Prints wall time, images/s, mean PSNR and the ratio of each run's wall time to the reference's,
and how many images are more than 0.1 dB under the reference's PSNR. For each of our runs it
also prints the busiest threads of the `sad` process (CPU seconds over wall seconds, sampled
from /proc): CubeCL's device threads (DSU-… and DSD-…) dispatch every job's launches, so one
near 1.0 says the run is bound by the host, not by the GPU.

The photos: every colour photo scikit-image ships (astronaut, chelsea, coffee, rocket, both
stereo_motorcycle views, and immunohistochemistry, retina and hubble_deep_field where the
installed version has them), each scaled with Lanczos to cover 768×512 at 1, 1.25 and 1.5 times
that scale and cropped to 768×512 at the centre (the 1×), the top-left and the bottom-right
(the others), taken in turn until there are 24.

Usage: dataset_bench.py --sad PATH --reference PATH --reference-root DIR --work DIR [--jobs 1 4 8]
  [--reference-runs N]
  (a --jobs entry J:--FLAG[=VALUE],... runs --jobs J with those `sad fit` flags, e.g.
  4:--backward-strategy=plane-scan or 4:--no-replay; with
  --reference-runs 2 the reference fits the set again, and its second pass gets a row of its
  own: how many images identical fits put more than 0.1 dB apart)
"""

import csv
import re
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import fit_table  # noqa: E402  (run, number, fit_reference)

WIDTH, HEIGHT, COUNT = 768, 512, 24


def sources():
    from skimage import data

    found = []
    for name in ["astronaut", "chelsea", "coffee", "rocket", "stereo_motorcycle",
                 "immunohistochemistry", "retina", "hubble_deep_field"]:
        try:
            image = getattr(data, name)()
        except Exception as error:  # not shipped with this version, or fetched from the web
            print(f"(no {name}: {type(error).__name__})", file=sys.stderr)
            continue
        views = image if name == "stereo_motorcycle" else (image,)
        for i, view in enumerate(views[:2]):
            if view.ndim == 3 and view.shape[2] == 3:
                found.append((f"{name}{i}" if name == "stereo_motorcycle" else name, view))
    return found


def make_photos(out: Path) -> list:
    from PIL import Image

    out.mkdir(parents=True, exist_ok=True)
    photos = []
    found = sources()
    for k in range(COUNT):
        name, array = found[k % len(found)]
        zoom = 1.0 + 0.25 * (k // len(found) % 3)
        image = Image.fromarray(array)
        scale = max(WIDTH / image.width, HEIGHT / image.height) * zoom
        size = (round(image.width * scale), round(image.height * scale))
        image = image.resize(size, Image.LANCZOS)
        spare_x, spare_y = image.width - WIDTH, image.height - HEIGHT
        left, top = [(spare_x // 2, spare_y // 2), (0, 0), (spare_x, spare_y)][k // len(found) % 3]
        path = out / f"photo{k:02d}_{name}.png"
        image.crop((left, top, left + WIDTH, top + HEIGHT)).save(path)
        photos.append(path)
    return photos


def thread_ticks(pid: int) -> dict:
    """CPU clock ticks (user + system) of each live thread of `pid`, keyed by thread id, with
    the thread's name."""
    ticks = {}
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return ticks
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as stat:
                text = stat.read()
        except OSError:
            continue  # the thread ended between the listing and the read
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text[text.rindex(")") + 2:].split()
        # After the name: state is field 3 of stat(5); utime and stime are fields 14 and 15.
        ticks[tid] = (name, int(fields[11]) + int(fields[12]))
    return ticks


def run_sampling_threads(command, env):
    """Runs a command like fit_table.run, sampling its threads' CPU time every 0.2 s; returns
    (stdout, wall seconds, [(thread name, CPU s / wall s)] busiest first). A thread that ends
    between samples loses at most its last 0.2 s."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, env=env, stdout=out, stderr=err, text=True)
        seen = {}
        # The wall time to 0.02 s; the threads every 0.2 s.
        polls = 0
        while process.poll() is None:
            if polls % 10 == 0:
                seen.update(thread_ticks(process.pid))
            polls += 1
            time.sleep(0.02)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        text = out.read()
        if process.returncode != 0:
            sys.stderr.write(text + err.read())
            raise SystemExit(f"failed ({process.returncode}): {' '.join(map(str, command))}")
    per_tick = os.sysconf("SC_CLK_TCK")
    busy = sorted(((name, ticks / per_tick / wall) for name, ticks in seen.values()),
                  key=lambda pair: -pair[1])
    return text, wall, busy


def main():
    parser = fit_table.race_parser()
    # Each entry: J, or J:--FLAG[=VALUE][,--FLAG...] to run `--jobs J` with those `sad fit`
    # flags (an A/B of a strategy, e.g. 4:--backward-strategy=plane-scan).
    parser.add_argument("--jobs", nargs="+", default=["1", "4", "8"])
    parser.add_argument("--bpp", type=float, default=16)
    # 2: the reference fits the set twice, for the spread of identical fits' PSNR.
    parser.add_argument("--reference-runs", type=int, default=1)
    args = parser.parse_args()
    photos = make_photos(args.work / "dataset")
    print(f"{len(photos)} photos of {WIDTH}×{HEIGHT} in {args.work / 'dataset'}", flush=True)

    # The kernel cache first (a whole fit of one photo: every phase of the schedule, at the
    # photos' size), so that no run below pays for compilation.
    def warm(flags=()):
        fit_table.run([args.sad, "--device", "cuda", "fit", str(photos[0]), "--iters", "4000",
                       "--target-bpp", str(args.bpp), "--out-dir", str(args.work / "dataset-warm"),
                       *flags])

    warm()

    def fit_set_by_reference():
        start = time.perf_counter()
        fits = {p.name: fit_table.fit_reference(args, p, args.bpp, args.work / "dataset-ref")
                for p in photos}
        return fits, time.perf_counter() - start

    def spread(psnrs):
        """(images under the reference's first pass by more than 0.1 dB, images over it by
        more than 0.1 dB, the lowest difference)."""
        deltas = [psnrs[p.name] - reference[p.name]["psnr"] for p in photos]
        return sum(d < -0.1 for d in deltas), sum(d > 0.1 for d in deltas), min(deltas)

    reference, ref_wall = fit_set_by_reference()
    ref_total = sum(r["total"] for r in reference.values())
    ref_psnr = statistics.mean(r["psnr"] for r in reference.values())
    print("\n| run | wall s | images/s | mean PSNR dB | wall / reference wall | "
          "under ref − 0.1 dB | over ref + 0.1 dB | worst ΔPSNR dB |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| reference, one process per image | {ref_wall:.2f} | {len(photos) / ref_wall:.3f} | "
          f"{ref_psnr:.3f} | 1.00 | – | – | – |  (its printed totals: {ref_total:.2f} s)",
          flush=True)
    # The reference again: how far identical fits of one image land from each other.
    for run in range(2, args.reference_runs + 1):
        again, wall = fit_set_by_reference()
        psnrs = {name: fit["psnr"] for name, fit in again.items()}
        under, over, worst = spread(psnrs)
        print(f"| reference, pass {run} | {wall:.2f} | {len(photos) / wall:.3f} | "
              f"{statistics.mean(psnrs.values()):.3f} | {wall / ref_wall:.2f} | "
              f"{under} of {len(photos)} | {over} of {len(photos)} | {worst:+.3f} |", flush=True)
    for index, entry in enumerate(args.jobs, start=1):
        jobs, _, switches = entry.partition(":")
        # Flags part at commas that start another flag, so a value may hold commas
        # (`--devices=cuda:0,cuda:1`).
        flags = [flag for flag in re.split(r",(?=--)", switches) if flag]
        # One folder an entry (dataset-ours-2-8: the second entry, --jobs 8), so that two
        # entries' results.csv can be compared image by image afterwards.
        out = args.work / f"dataset-ours-{index}-{jobs}"
        if flags:
            warm(flags)  # a flag may select other kernel variants: compile them first
        command = [args.sad, "--device", "cuda", "fit", str(args.work / "dataset"),
                   "--target-bpp", str(args.bpp), "--iters", "4000", "--log-freq", "1000",
                   "--jobs", jobs, "--force", "--out-dir", str(out), *flags]
        text, wall, busy = run_sampling_threads(command, dict(os.environ))
        with open(out / "results.csv") as table:
            rows = {row["name"]: row for row in csv.DictReader(table)}
        psnrs = {p.name: float(rows[p.name]["psnr"]) for p in photos}
        under, over, worst = spread(psnrs)
        label = f"--jobs {jobs}" + (f", {switches}" if switches else "")
        print(f"| ours, {label} | {wall:.2f} | {len(photos) / wall:.3f} | "
              f"{statistics.mean(psnrs.values()):.3f} | {wall / ref_wall:.3f} | "
              f"{under} of {len(photos)} | {over} of {len(photos)} | {worst:+.3f} |", flush=True)
        print("  busiest threads (CPU s / wall s): "
              + ", ".join(f"{name} {share:.2f}" for name, share in busy[:8]), flush=True)


if __name__ == "__main__":
    main()
