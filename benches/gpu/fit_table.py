#!/usr/bin/env python3
"""Race `sad fit` and `sad render` against the reference SAD CUDA trainer on one GPU.

For each photo and bits-per-pixel target, both trainers fit the same PNG with the shipped
config (4000 iterations, log every 1000); the table gives the loop time each prints
("Training time"), the ratio ours / reference, PSNR and site counts. Then each sites file the
reference wrote is rendered by both in render-only mode (candidate build and render times,
PSNR against the photo), and a profile of one fit gives per-phase times.

Photos come from scikit-image's data module: chelsea 451×300, astronaut 512², coffee 600×400,
the left image of stereo_motorcycle 741×500, plus two made from them: coffee upscaled with
Lanczos to 1920 wide and centre-cropped to 1920×1080, and the motorcycle upscaled to 3840 wide
and centre-cropped to 3840×2160.

Usage: fit_table.py --sad PATH --reference PATH --reference-root DIR --work DIR [--quick]
"""

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path


def make_photos(out: Path) -> dict:
    from PIL import Image
    from skimage import data

    def save(name, image):
        path = out / f"{name}.png"
        image.save(path)
        return path

    def upscaled(array, width, height):
        image = Image.fromarray(array)
        scale = max(width / image.width, height / image.height)
        size = (round(image.width * scale), round(image.height * scale))
        image = image.resize(size, Image.LANCZOS)
        left, top = (image.width - width) // 2, (image.height - height) // 2
        return image.crop((left, top, left + width, top + height))

    motorcycle = data.stereo_motorcycle()[0]
    return {
        "chelsea": save("chelsea", Image.fromarray(data.chelsea())),
        "astronaut": save("astronaut", Image.fromarray(data.astronaut())),
        "coffee": save("coffee", Image.fromarray(data.coffee())),
        "motorcycle": save("motorcycle", Image.fromarray(motorcycle)),
        "coffee-1080p": save("coffee-1080p", upscaled(data.coffee(), 1920, 1080)),
        "motorcycle-4k": save("motorcycle-4k", upscaled(motorcycle, 3840, 2160)),
    }


def run(command, cwd=None, env=None):
    """Runs a command; returns (stdout, wall seconds). Fails loudly."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"failed ({done.returncode}): {' '.join(map(str, command))}")
    return done.stdout, wall


def number(pattern, text, default=None):
    found = re.findall(pattern, text)
    if not found:
        if default is not None:
            return default
        raise SystemExit(f"no match for {pattern!r} in:\n{text}")
    return float(found[-1])


def fit_reference(args, photo, bpp, out):
    env = dict(os.environ, CUDA_MODULE_LOADING="EAGER")
    command = [args.reference, str(photo), "--target-bpp", str(bpp), "--iters", "4000",
               "--log-freq", "1000", "--out-dir", str(out)]
    text, wall = run(command, cwd=args.reference_root, env=env)
    return {
        "loop": number(r"Training time: ([\d.]+) s", text),
        "total": number(r"Total time: ([\d.]+) s", text),
        "psnr": number(r"Iter +\d+ \| PSNR: ([\d.]+) dB", text),
        "sites": int(number(r"Active: (\d+)/", text)),
        "wall": wall,
        "sites_file": out / f"{photo.stem}_sites.txt",
    }


def fit_ours(args, photo, bpp, out, extra=(), env=None, iters=4000):
    command = [args.sad, "--device", "cuda", "fit", str(photo), "--target-bpp", str(bpp),
               "--iters", str(iters), "--log-freq", "1000", "--out-dir", str(out), *extra]
    text, wall = run(command, env=env)
    return {
        "loop": number(r"Training time: ([\d.]+) s", text),
        "psnr": number(r"PSNR: ([\d.]+) dB", text),
        "sites": int(number(r"Sites: (\d+)", text)),
        "warm_up": number(r"Kernel warm-up: ([\d.]+) s", text),
        "wall": wall,
        "text": text,
    }


def render_reference(args, sites, photo):
    env = dict(os.environ, CUDA_MODULE_LOADING="EAGER")
    text, _ = run([args.reference, "--render", str(sites), "--render-target", str(photo)],
                  cwd=args.reference_root, env=env)
    return {
        "build": number(r"Candidate build: ([\d.]+) ms", text),
        "render": number(r"Render: ([\d.]+) ms", text),
        "psnr": number(r"PSNR: ([\d.]+) dB", text),
    }


def render_ours(args, sites, photo, out, env=None):
    text, _ = run([args.sad, "--device", "cuda", "render", str(sites), "-o", str(out),
                   "--target", str(photo)], env=env)
    return {
        "build": number(r"Candidate build: ([\d.]+) ms", text),
        "render": number(r"Render: ([\d.]+) ms", text),
        "psnr": number(r"PSNR: ([\d.]+) dB", text),
    }


def race_parser():
    """The arguments every race script takes: both programs, the reference's build folder (its
    working directory) and a work folder."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sad", required=True)
    parser.add_argument("--reference", required=True)
    parser.add_argument("--reference-root", required=True)
    parser.add_argument("--work", required=True, type=Path)
    return parser


def main():
    parser = race_parser()
    parser.add_argument("--quick", action="store_true", help="only the 512² photo")
    parser.add_argument("--no-extras", action="store_true", help="no profile, no A/B runs")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    photos = make_photos(args.work)
    if args.quick:
        photos = {"astronaut": photos["astronaut"]}

    # The first run of a fresh binary compiles its kernels; time it, then run warm.
    first = fit_ours(args, photos["astronaut"], 1, args.work / "first")
    print(f"first run (cold kernel cache): wall {first['wall']:.2f} s, "
          f"kernel warm-up {first['warm_up']:.2f} s, loop {first['loop']:.2f} s", flush=True)
    # Launch variants depend on the image's size (the backward's occupancy hint), not on the
    # budget, so each photo compiles its own on its first fit: one untimed one-iteration fit per
    # photo leaves the table's runs a warm cache, as a user's second fit of a photo has.
    for name, photo in photos.items():
        fit_ours(args, photo, 1, args.work / f"warm-{name}", iters=1)

    print("\n| photo | bpp | ref loop s | ours loop s | ratio | ref PSNR | ours PSNR | "
          "ref sites | ours sites | ref total s | ref wall s | ours wall s (warm cache) | "
          "wall / ref total | wall / ref wall |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|", flush=True)
    rows = []
    for name, photo in photos.items():
        for bpp in (1, 16):
            ref = fit_reference(args, photo, bpp, args.work / f"ref-{name}-{bpp}")
            ours = fit_ours(args, photo, bpp, args.work / f"ours-{name}-{bpp}")
            rows.append((name, bpp, ref, ours))
            print(f"| {name} | {bpp} | {ref['loop']:.2f} | {ours['loop']:.2f} | "
                  f"{ours['loop'] / ref['loop']:.2f} | {ref['psnr']:.2f} | {ours['psnr']:.2f} | "
                  f"{ref['sites']} | {ours['sites']} | {ref['total']:.2f} | {ref['wall']:.2f} | "
                  f"{ours['wall']:.2f} | {ours['wall'] / ref['total']:.2f} | "
                  f"{ours['wall'] / ref['wall']:.2f} |", flush=True)
    ref_sum = sum(r[2]["loop"] for r in rows)
    ours_sum = sum(r[3]["loop"] for r in rows)
    ratios = [r[3]["loop"] / r[2]["loop"] for r in rows]
    print(f"\ntotal loop: reference {ref_sum:.2f} s, ours {ours_sum:.2f} s, "
          f"ratio {ours_sum / ref_sum:.3f}; worst run {max(ratios):.2f}; "
          f"mean PSNR difference {sum(r[3]['psnr'] - r[2]['psnr'] for r in rows) / len(rows):+.3f} dB",
          flush=True)

    wall_ours = sum(r[3]["wall"] for r in rows)
    print(f"total wall time (process start to exit, warm kernel cache): reference "
          f"{sum(r[2]['wall'] for r in rows):.2f} s (its printed totals: "
          f"{sum(r[2]['total'] for r in rows):.2f} s), ours {wall_ours:.2f} s", flush=True)

    print("\n| sites file (reference fit) | ref build ms | ours build ms | ratio | ref render ms | "
          "ours render ms | ratio | ref PSNR | ours PSNR |")
    print("|---|---|---|---|---|---|---|---|---|", flush=True)
    for name, bpp, ref, _ in rows:
        a = render_reference(args, ref["sites_file"], photos[name])
        b = render_ours(args, ref["sites_file"], photos[name], args.work / f"render-{name}-{bpp}.png")
        print(f"| {name} {bpp} bpp | {a['build']:.3f} | {b['build']:.3f} | "
              f"{b['build'] / a['build']:.2f} | {a['render']:.3f} | {b['render']:.3f} | "
              f"{b['render'] / max(a['render'], 1e-6):.2f} | {a['psnr']:.2f} | {b['psnr']:.2f} |",
              flush=True)

    if args.no_extras:
        return
    prof = fit_ours(args, photos["astronaut"], 16, args.work / "profile", extra=["--profile"])
    phases = prof["text"].split("Phase times:")[1].split("Saved:")[0]
    print(f"\nprofile, astronaut 16 bpp (synchronised per phase, loop {prof['loop']:.2f} s):"
          f"{phases}", flush=True)

    # Start-up: the wall time of a one-iteration fit, both programs, warm caches.
    for name in ("chelsea", "astronaut"):
        if name not in photos:
            continue
        ref_walls, our_walls = [], []
        for _ in range(3):
            ref_walls.append(run([args.reference, str(photos[name]), "--iters", "1", "--out-dir",
                                  str(args.work / "start-ref")], cwd=args.reference_root,
                                 env=dict(os.environ, CUDA_MODULE_LOADING="EAGER"))[1])
            our_walls.append(run([args.sad, "--device", "cuda", "fit", str(photos[name]),
                                  "--iters", "1", "--out-dir", str(args.work / "start-ours")])[1])
        print(f"\nstart-up, {name}, 1 iteration, wall s (3 runs): reference "
              f"{' '.join(f'{w:.2f}' for w in ref_walls)}; ours "
              f"{' '.join(f'{w:.2f}' for w in our_walls)}", flush=True)

    # Launch modes, each measured on fits and renders of the same command (not with --quick,
    # whose one photo is none of theirs).
    if any(name not in photos for name, _ in AB_RUNS):
        return
    print("\n| variant | " + " | ".join(f"{n} {b} bpp loop s" for n, b in AB_RUNS)
          + " | " + " | ".join(f"{n} {b} bpp build ms" for n, b in AB_RUNS) + " |")
    print("|---|" + "---|" * (2 * len(AB_RUNS)), flush=True)
    for label, env in AB_VARIANTS:
        run_env = dict(os.environ, **env)
        fits, builds = [], []
        for name, bpp in AB_RUNS:
            fits.append(fit_ours(args, photos[name], bpp, args.work / "ab", env=run_env)["loop"])
            sites = args.work / f"ref-{name}-{bpp}" / f"{photos[name].stem}_sites.txt"
            builds.append(render_ours(args, sites, photos[name], args.work / "ab.png",
                                      env=run_env)["build"])
        print(f"| {label} | " + " | ".join(f"{t:.2f}" for t in fits) + " | "
              + " | ".join(f"{t:.3f}" for t in builds) + " |", flush=True)


AB_RUNS = (("chelsea", 16), ("coffee", 16), ("motorcycle-4k", 1))
AB_VARIANTS = (
    ("default (unchecked launches)", {}),
    ("bounds-checked launches (BURN_SAD_CHECKED_KERNELS=1)", {"BURN_SAD_CHECKED_KERNELS": "1"}),
)


if __name__ == "__main__":
    main()
