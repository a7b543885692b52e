#!/usr/bin/env python3
"""Issue 9's render-only fidelity bar, with the spread it needs: the reference fits each photo
of the race (fit_table.py's photos, 1 and 16 bpp), then renders each sites file it wrote in
render-only mode RUNS times, and ours renders it RUNS times too. Both builds race (the jump
flood's seeding: where sites share a cell, one wins), so one render against one render cannot
settle 0.05 dB. Prints, per file, each program's mean, lowest and highest render-only PSNR and
the difference of the means.

Usage: fidelity.py --sad PATH --reference PATH --reference-root DIR --work DIR [--runs 5]
"""

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import fit_table  # noqa: E402


def main():
    parser = fit_table.race_parser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--photos", nargs="*", help="names of fit_table.py's photos (default all)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    photos = fit_table.make_photos(args.work)
    if args.photos:
        photos = {name: photos[name] for name in args.photos}
    print(f"| sites file (reference fit) | ref mean (min–max) dB | ours mean (min–max) dB | "
          f"ours − ref, means | within 0.05 dB |")
    print("|---|---|---|---|---|", flush=True)
    within = 0
    rows = 0
    for name, photo in photos.items():
        for bpp in (1, 16):
            fitted = fit_table.fit_reference(args, photo, bpp, args.work / f"fid-{name}-{bpp}")
            sites = fitted["sites_file"]
            ref = [fit_table.render_reference(args, sites, photo)["psnr"]
                   for _ in range(args.runs)]
            ours = [fit_table.render_ours(args, sites, photo, args.work / "fid.png")["psnr"]
                    for _ in range(args.runs)]
            delta = statistics.mean(ours) - statistics.mean(ref)
            ok = abs(delta) <= 0.05
            within += ok
            rows += 1
            print(f"| {name} {bpp} bpp | {statistics.mean(ref):.3f} ({min(ref):.2f}–{max(ref):.2f}) "
                  f"| {statistics.mean(ours):.3f} ({min(ours):.2f}–{max(ours):.2f}) | "
                  f"{delta:+.3f} | {'yes' if ok else 'no'} |", flush=True)
    print(f"\n{within} of {rows} files within 0.05 dB of the reference's mean "
          f"({args.runs} renders each)")


if __name__ == "__main__":
    main()
