#!/usr/bin/env python3
"""Whose PSNR is off at 3840×2160? Both programs print a render's PSNR, the reference from one
f32 accumulator that every pixel adds into (`computePSNRKernel`, utils.cu), ours from Burn's
mean. This fits PHOTO at BPP with the reference, renders its sites file with both programs
(render-only, each saving its PNG), and computes both PNGs' PSNR against the photo in float64:
if the PNGs agree while the printed values differ, the difference is in the printing.

Usage: psnr_check.py --sad PATH --reference PATH --reference-root DIR --work DIR PHOTO:BPP...
"""

import sys
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).parent))
import fit_table  # noqa: E402


def psnr64(png: Path, photo: Path) -> float:
    a = np.asarray(Image.open(png).convert("RGB"), dtype=np.float64) / 255.0
    b = np.asarray(Image.open(photo).convert("RGB"), dtype=np.float64) / 255.0
    return float(20 * np.log10(1.0 / np.sqrt(np.mean((a - b) ** 2))))


def main():
    parser = fit_table.race_parser()
    parser.add_argument("runs", nargs="+", help="PHOTO:BPP, PHOTO one of fit_table.py's")
    args = parser.parse_args()
    photos = fit_table.make_photos(args.work)
    print("| sites file | printed PSNR ref / ours | PNG PSNR (float64) ref / ours | "
          "printed − PNG, ref / ours |")
    print("|---|---|---|---|", flush=True)
    for run in args.runs:
        name, bpp = run.split(":")
        photo = photos[name]
        fitted = fit_table.fit_reference(args, photo, float(bpp), args.work / f"chk-{name}-{bpp}")
        sites = fitted["sites_file"]
        ref_png = args.work / f"chk-{name}-{bpp}-ref.png"
        ours_png = args.work / f"chk-{name}-{bpp}-ours.png"
        env = dict(fit_table.os.environ, CUDA_MODULE_LOADING="EAGER")
        text, _ = fit_table.run([args.reference, "--render", str(sites), "--render-target",
                                 str(photo), "--out", str(ref_png)],
                                cwd=args.reference_root, env=env)
        ref_printed = fit_table.number(r"PSNR: ([\d.]+) dB", text)
        ours_printed = fit_table.render_ours(args, sites, photo, ours_png)["psnr"]
        ref_real, ours_real = psnr64(ref_png, photo), psnr64(ours_png, photo)
        print(f"| {name} {bpp} bpp | {ref_printed:.3f} / {ours_printed:.3f} | "
              f"{ref_real:.3f} / {ours_real:.3f} | {ref_printed - ref_real:+.3f} / "
              f"{ours_printed - ours_real:+.3f} |", flush=True)


if __name__ == "__main__":
    main()
