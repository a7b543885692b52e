#!/usr/bin/env python3
"""Issue 37's probe set: photos where a fit of ours may sit under the reference's PSNR, fitted
RUNS times by each trainer, with both PSNR curves and both site counts.

The photos are made as a new user's Kodak-size set would be: a scikit-image colour photo scaled
with Lanczos (by at least what covers 768×512; the name gives the scale) and cropped to 768×512
at the centre. Smooth portraits and skies come first, where the gap showed.

For each photo and each VARIANT (a name and `sad fit` flags that both trainers take, e.g. a
schedule with pruning off; `default:` with no flags, the shipped config, is the only one unless
others are named; a variant's own `--target-bpp` or `--no-budget` replaces BPP; flags after a
second colon go to ours alone, e.g. `--seed 1`), both trainers fit RUNS times at
BPP bits per pixel and 4000 iterations, logging every LOG iterations. Prints a table per
variant (photo, each run's final PSNR and live sites for both, the difference of the means,
and the reference's own spread), then per photo the mean PSNR curves side by side (iteration,
reference, ours, difference, live sites). Raw logs stay in WORK/probe/logs, and each variant's
last fit of each photo by each trainer (render and sites file) in WORK/probe/kept.

Usage: probe_set.py --sad PATH --reference PATH --reference-root DIR --work DIR [--runs 3]
  [--seeds] [--bpp 16] [--log-freq 250] [--photos NAME...] [--variant NAME:FLAG,FLAG...]...
"""

import os
import re
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import fit_table  # noqa: E402  (run, race_parser)

WIDTH, HEIGHT = 768, 512
# (name, scikit-image photo, Lanczos scale): each scale covers 768×512, cropped at the centre.
PHOTOS = (
    ("astronaut-1.5", "astronaut", 1.5),
    ("astronaut-1.6", "astronaut", 1.6),
    ("rocket-1.2", "rocket", 1.2),
    ("rocket-1.5", "rocket", 1.5),
    ("retina-1.0", "retina", 1.0),
    ("chelsea-1.71", "chelsea", 1.71),
    ("coffee-1.3", "coffee", 1.3),
    ("immunohistochemistry-1.5", "immunohistochemistry", 1.5),
)
LOG_LINE = re.compile(r"^Iter +(\d+) \| PSNR: ([\d.]+) dB \| Active: (\d+)")


def make_photos(out: Path, names=None) -> dict:
    from PIL import Image
    from skimage import data

    out.mkdir(parents=True, exist_ok=True)
    photos = {}
    for name, source, scale in PHOTOS:
        if names and name not in names:
            continue
        image = Image.fromarray(getattr(data, source)()).convert("RGB")
        size = (round(image.width * scale), round(image.height * scale))
        if size[0] < WIDTH or size[1] < HEIGHT:
            raise SystemExit(f"{name}: {scale}× of {image.width}×{image.height} does not cover "
                             f"{WIDTH}×{HEIGHT}")
        if scale != 1.0:
            image = image.resize(size, Image.LANCZOS)
        left, top = (image.width - WIDTH) // 2, (image.height - HEIGHT) // 2
        path = out / f"{name}.png"
        image.crop((left, top, left + WIDTH, top + HEIGHT)).save(path)
        photos[name] = (path, scale)
    return photos


def curve(text: str) -> list:
    """(iteration, PSNR, live sites) of every log line."""
    points = []
    for line in text.splitlines():
        found = LOG_LINE.match(line.strip())
        if found:
            points.append((int(found[1]), float(found[2]), int(found[3])))
    if not points:
        raise SystemExit(f"no log lines in:\n{text}")
    return points


def fit(args, who, photo, flags, out, ours_only=()):
    if who == "ref":
        # The reference turns its budget solver off with a target of 0.
        flags = [g for f in flags for g in (["--target-bpp", "0"] if f == "--no-budget" else [f])]
    budgeted = "--target-bpp" in flags or "--no-budget" in flags
    budget = [] if budgeted else ["--target-bpp", str(args.bpp)]
    common = [*budget, "--iters", "4000", "--log-freq", str(args.log_freq), "--out-dir",
              str(out), *flags]
    if who == "ref":
        env = dict(os.environ, CUDA_MODULE_LOADING="EAGER")
        text, _ = fit_table.run([args.reference, str(photo), *common],
                                cwd=args.reference_root, env=env)
    else:
        text, _ = fit_table.run([args.sad, "--device", "cuda", "fit", str(photo), *common,
                                 *ours_only])
    points = curve(text)
    # The last log line is the last iteration's; its PSNR is what each trainer reports.
    return {"psnr": points[-1][1], "sites": points[-1][2], "curve": points, "text": text}


def main():
    parser = fit_table.race_parser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bpp", type=float, default=16)
    parser.add_argument("--log-freq", type=int, default=250)
    parser.add_argument("--photos", nargs="*")
    parser.add_argument("--seeds", action="store_true",
                        help="our run k fits with --seed k (its R2 start and candidate lists "
                             "shifted), a draw of its own as each of the reference's runs is")
    parser.add_argument("--variant", action="append", default=[],
                        help="NAME:FLAG,FLAG...[:FLAG,FLAG...] (flags both trainers take, "
                             "`--no-budget` being the reference's `--target-bpp 0`; then flags "
                             "for ours alone, e.g. `--seed,1`); default: `default:`, the "
                             "shipped config")
    args = parser.parse_args()
    variants = []
    for spec in args.variant or ["default:"]:
        name, _, flags = spec.partition(":")
        flags, _, ours_only = flags.partition(":")
        split = [[f for f in re.split(r"[,=]", part) if f] for part in (flags, ours_only)]
        variants.append((name, *split))
    work = args.work / "probe"
    photos = make_photos(work, args.photos)
    logs = work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    # One untimed fit fills our kernel cache for this size.
    first = next(iter(photos.values()))[0]
    fit_table.run([args.sad, "--device", "cuda", "fit", str(first), "--iters", "1",
                   "--out-dir", str(work / "warm")])

    for variant, flags, ours_only in variants:
        mine = f"; ours also {' '.join(ours_only)}" if ours_only else ""
        seeds = f", ours with seeds 0–{args.runs - 1}" if args.seeds else ""
        print(f"\n### {variant} ({' '.join(flags) or 'shipped config'}{mine}), {args.bpp:g} bpp, "
              f"{args.runs} runs each{seeds}\n")
        print("| photo (scale) | reference PSNR dB | ours PSNR dB | ours − ref, means | "
              "ref spread | sites ref | sites ours |")
        print("|---|---|---|---|---|---|---|", flush=True)
        curves = {}
        deltas = []
        for name, (photo, scale) in photos.items():
            fits = {"ref": [], "ours": []}
            for run in range(args.runs):
                for who in ("ref", "ours"):
                    seed = ["--seed", str(run)] if args.seeds and who == "ours" else []
                    result = fit(args, who, photo, flags, work / f"{who}-{name}",
                                 [*ours_only, *seed])
                    fits[who].append(result)
                    (logs / f"{variant}-{name}-{who}-{run}.txt").write_text(result["text"])
            ref = [f["psnr"] for f in fits["ref"]]
            ours = [f["psnr"] for f in fits["ours"]]
            delta = statistics.mean(ours) - statistics.mean(ref)
            deltas.append((name, delta, ours[0], min(ref), max(ref)))
            sites_ref = sorted({f["sites"] for f in fits["ref"]})
            sites_ours = sorted({f["sites"] for f in fits["ours"]})
            print(f"| {name} ({scale:.2f}×) | {' '.join(f'{p:.2f}' for p in ref)} | "
                  f"{' '.join(f'{p:.2f}' for p in ours)} | {delta:+.3f} | "
                  f"{max(ref) - min(ref):.2f} | {'/'.join(map(str, sites_ref))} | "
                  f"{'/'.join(map(str, sites_ours))} |", flush=True)
            curves[name] = fits
            for who in ("ref", "ours"):
                # Each variant's last fit of the photo, for a closer look (sites, render).
                kept = work / "kept" / f"{variant}-{who}-{name}"
                shutil.rmtree(kept, ignore_errors=True)
                shutil.copytree(work / f"{who}-{name}", kept)
        outside = [d for d in deltas if not d[3] <= d[2] <= d[4]]
        print(f"\nmean of the photos' differences: {statistics.mean(d[1] for d in deltas):+.3f} dB; "
              f"our first run outside the reference's range on {len(outside)} of {len(deltas)}"
              + "".join(f", {d[0]} ({d[2]:.2f} against {d[3]:.2f}–{d[4]:.2f})" for d in outside),
              flush=True)
        for name, fits in curves.items():
            print(f"\n{variant}, {name}: mean PSNR per logged iteration")
            print("| iter | ref dB | ours dB | ours − ref | ref live | ours live |")
            print("|---|---|---|---|---|---|")
            length = min(len(f["curve"]) for f in fits["ref"] + fits["ours"])
            for i in range(length):
                iteration = fits["ref"][0]["curve"][i][0]
                ref = statistics.mean(f["curve"][i][1] for f in fits["ref"])
                ours = statistics.mean(f["curve"][i][1] for f in fits["ours"])
                print(f"| {iteration} | {ref:.2f} | {ours:.2f} | {ours - ref:+.2f} | "
                      f"{fits['ref'][0]['curve'][i][2]} | {fits['ours'][0]['curve'][i][2]} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
