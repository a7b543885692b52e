"""What each packed field's quantisation costs: for sites files fitted by our CUDA `sad`, renders
the file with one field (or a set of fields) quantised as the packed record stores it, and
prints the PSNR change against the unquantised render, plus a repeat of the plain render (the
render's own run-to-run spread). Quantisation here is numpy's in float64 then float32, close to
the library's (not bit-identical): it is for ranking the fields, not for the table.

Fields: `pos:B` (B-bit positions), `colour:11` (11/11/10 bits, the reference's) or `colour:10`,
`tau:B`, `radius:B`, `angle:B` (B bits over half a turn; the reference's 16 bits over a full
turn are `angle:15`), `aniso` (an IEEE half, the reference's) or `anisou:B` (B bits over the
file's range, ours). Renders run `PASSES` propagation passes (default 64).

Usage: python3 benches/gpu/packed_fields.py SAD PHOTO.png SITES.txt [SITES.txt ...]
(each sites file fitted on PHOTO)."""

import re
import subprocess
import sys
import tempfile
from pathlib import Path

import os

import numpy as np


def read(path):
    header, rows = [], []
    for line in Path(path).read_text().splitlines():
        if line.startswith("#"):
            header.append(line)
        elif line.strip():
            rows.append([float(v) for v in line.split()])
    size = next(h for h in header if "Image size" in h).split(":")[1].split()
    return header, np.array(rows, dtype=np.float64), int(size[0]), int(size[1])


def unorm(values, bits, low=None, high=None):
    levels = 2.0**bits - 1
    low = values.min() if low is None else low
    high = values.max() if high is None else high
    scale = max(np.float32(high - low), np.float32(1e-6))
    q = np.floor(np.clip((values - low) / scale, 0, 1) * levels + 0.5)
    return (np.float32(low) + np.float32(q / levels) * np.float32(scale)).astype(np.float64)


def quantised(rows, width, height, fields):
    out = rows.copy()
    for field in fields:
        name, _, bits = field.partition(":")
        bits = int(bits) if bits else 16
        if name == "pos":
            out[:, 0] = unorm(np.clip(out[:, 0], 0, width - 1), bits, 0, width - 1)
            out[:, 1] = unorm(np.clip(out[:, 1], 0, height - 1), bits, 0, height - 1)
        elif name == "colour":
            for c, b in zip((2, 3, 4), (bits, bits, bits - 1 if bits == 11 else bits)):
                out[:, c] = unorm(out[:, c], b)
        elif name == "tau":
            out[:, 5] = unorm(out[:, 5], bits)
        elif name == "radius":
            out[:, 6] = unorm(out[:, 6], bits)
        elif name == "angle":
            angle = np.mod(np.arctan2(out[:, 8], out[:, 7]), np.pi)
            q = np.mod(np.round(angle / np.pi * 2.0**bits), 2.0**bits)
            out[:, 7] = np.cos(q * np.pi / 2.0**bits)
            out[:, 8] = np.sin(q * np.pi / 2.0**bits)
        elif name == "aniso":
            out[:, 9] = out[:, 9].astype(np.float16).astype(np.float64)
        elif name == "anisou":
            out[:, 9] = unorm(out[:, 9], bits)
        else:
            raise SystemExit(f"unknown field {name}")
    return out


def write(path, header, rows):
    lines = header + [" ".join(f"{np.float32(v):.9g}" for v in row) for row in rows]
    Path(path).write_text("\n".join(lines) + "\n")


def psnr(sad, sites, photo, out):
    passes = os.environ.get("PASSES", "64")
    text = subprocess.run([sad, "--device", "cuda", "render", str(sites), "-o", str(out),
                           "--target", str(photo), "--passes", passes],
                          capture_output=True, text=True, check=True).stdout
    return float(re.findall(r"^PSNR: (\S+) dB$", text, re.M)[-1])


CASES = [
    ["pos:15"], ["pos:16"], ["pos:17"], ["colour:11"], ["colour:10"], ["tau:16"], ["tau:15"],
    ["radius:16"], ["angle:15"], ["angle:16"], ["aniso"], ["anisou:16"],
    # The reference's Metal record, and ours.
    ["pos:15", "colour:11", "tau:16", "radius:16", "angle:15", "aniso"],
    ["pos:17", "colour:10", "tau:15", "radius:16", "angle:16", "anisou:16"],
]


def main():
    sad, photo, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for sites in files:
            header, rows, width, height = read(sites)
            base = psnr(sad, sites, photo, tmp / "base.png")
            again = psnr(sad, sites, photo, tmp / "again.png")
            same = (tmp / "base.png").read_bytes() == (tmp / "again.png").read_bytes()
            print(f"{Path(sites).name}: {len(rows)} sites, {width}x{height}, plain {base:.4f} dB, "
                  f"again {again:.4f} dB ({'the same bytes' if same else 'other bytes'})")
            for case in CASES:
                write(tmp / "q_sites.txt", header, quantised(rows, width, height, case))
                value = psnr(sad, tmp / "q_sites.txt", photo, tmp / "q.png")
                print(f"  {'+'.join(case):48s} {value - base:+.4f} dB")


if __name__ == "__main__":
    main()
