"""Regenerates the real-photo fixtures and their expected SSIM values.

Source photos: scikit-image's `skimage/data/` (astronaut.png: NASA, public domain;
coffee.png: Rachel Michetti, CC0; chelsea.png: Stefan van der Walt, CC0), taken from the
scikit-image 0.26.0 wheel on PyPI. Only small crops are vendored.

Usage: python3 make_fixtures.py /path/to/skimage/data
Writes the crops, a degraded copy of each, and expected.txt with float64 SSIM values computed
here with NumPy alone (zero-padded "same" and unpadded "valid"), independently of the crate:
once with the exact Gaussian window and once with fused-ssim's float32 tap literals, which the
crate uses by default and which shift SSIM by up to about 1e-5 on flat regions.
"""
import sys
import numpy as np
from PIL import Image

CROPS = {
    # name: (file, left, top, width, height)
    "astronaut": ("astronaut.png", 180, 40, 120, 97),
    "coffee": ("coffee.png", 250, 120, 101, 77),
    "chelsea": ("chelsea.png", 140, 60, 128, 128),
    # Large enough for 5-scale MS-SSIM with an 11-tap window (smaller side > 160).
    "astronaut_ms": ("astronaut.png", 150, 20, 200, 176),
}
MS_WEIGHTS = [0.0448, 0.2856, 0.3001, 0.2363, 0.1333]


def degrade(img, seed):
    """Box blur plus Gaussian noise, rounded back to 8 bits."""
    rng = np.random.default_rng(seed)
    f = img.astype(np.float64)
    padded = np.pad(f, ((1, 1), (1, 1), (0, 0)), mode="edge")
    blur = sum(padded[dy:dy + f.shape[0], dx:dx + f.shape[1]] for dy in range(3) for dx in range(3)) / 9
    noisy = blur + rng.normal(0, 8, size=f.shape)
    return np.clip(np.round(noisy), 0, 255).astype(np.uint8)


# fused-ssim's float32 tap literals (centre last), widened to float64.
REFERENCE_TAPS = np.array(
    [0.001028380123898387, 0.0075987582094967365, 0.036000773310661316,
     0.10936068743467331, 0.21300552785396576, 0.26601171493530273], dtype=np.float32
).astype(np.float64)


def gaussian(radius=5, sigma=1.5, reference_taps=False):
    if reference_taps:
        return np.concatenate([REFERENCE_TAPS, REFERENCE_TAPS[:-1][::-1]])
    k = np.arange(-radius, radius + 1, dtype=np.float64)
    g = np.exp(-k * k / (2 * sigma * sigma))
    return g / g.sum()


def blur(plane, g, pad):
    r = len(g) // 2
    p = np.pad(plane, r) if pad else plane
    h = sum(g[i] * p[:, i:i + p.shape[1] - 2 * r] for i in range(len(g)))
    return sum(g[i] * h[i:i + h.shape[0] - 2 * r, :] for i in range(len(g)))


def ssim_and_cs(a, b, pad, reference_taps=False):
    """Per-channel mean SSIM (clamped, as fused-ssim) and mean contrast-structure term."""
    g = gaussian(reference_taps=reference_taps)
    c1, c2 = 1e-4, 9e-4
    ssims, css = [], []
    for c in range(a.shape[2]):
        x, y = a[:, :, c], b[:, :, c]
        mx, my = blur(x, g, pad), blur(y, g, pad)
        vx = np.maximum(blur(x * x, g, pad) - mx * mx, 0)
        vy = np.maximum(blur(y * y, g, pad) - my * my, 0)
        cov = blur(x * y, g, pad) - mx * my
        cs = (2 * cov + c2) / (vx + vy + c2)
        s = np.clip((2 * mx * my + c1) / (mx * mx + my * my + c1) * cs, -1, 1)
        ssims.append(s.mean())
        css.append(cs.mean())
    return np.array(ssims), np.array(css)


def avg_pool(img):
    """2×2 average pooling with `side mod 2` zero padding per side, padding counted."""
    ph, pw = img.shape[0] % 2, img.shape[1] % 2
    p = np.pad(img, ((ph, ph), (pw, pw), (0, 0)))
    h, w = (p.shape[0] - 2) // 2 + 1, (p.shape[1] - 2) // 2 + 1
    p = p[: 2 * h, : 2 * w]
    return (p[0::2, 0::2] + p[1::2, 0::2] + p[0::2, 1::2] + p[1::2, 1::2]) / 4


def ms_ssim(a, b, reference_taps=False):
    """pytorch-msssim's ms_ssim(X, Y, data_range=1) for one image, channels averaged."""
    factors = []
    for level, weight in enumerate(MS_WEIGHTS):
        s, cs = ssim_and_cs(a, b, False, reference_taps)
        last = level == len(MS_WEIGHTS) - 1
        factors.append(np.maximum(s if last else cs, 0) ** weight)
        a, b = avg_pool(a), avg_pool(b)
    return float(np.mean(np.prod(factors, axis=0)))


def ssim(a, b, pad, reference_taps=False):
    """Mean SSIM over channels and pixels (every channel's map has the same size)."""
    return float(np.mean(ssim_and_cs(a, b, pad, reference_taps)[0]))


def main(data_dir):
    ms_lines = ["# float64 MS-SSIM (make_fixtures.py): name, exact Gaussian, fused-ssim's taps"]
    lines = [
        "# float64 SSIM (NumPy, make_fixtures.py) of <name>.png vs <name>_degraded.png:",
        "# name  same valid (exact Gaussian)  same valid (fused-ssim's float32 taps)",
    ]
    for seed, (name, (file, left, top, w, h)) in enumerate(CROPS.items()):
        img = np.asarray(Image.open(f"{data_dir}/{file}").convert("RGB"))[top:top + h, left:left + w]
        bad = degrade(img, seed)
        Image.fromarray(img).save(f"{name}.png")
        Image.fromarray(bad).save(f"{name}_degraded.png")
        a, b = img.astype(np.float64) / 255, bad.astype(np.float64) / 255
        if name.endswith("_ms"):
            values = [ms_ssim(a, b, taps) for taps in (False, True)]
            ms_lines.append(" ".join([name] + [f"{v:.10f}" for v in values]))
            continue
        values = [ssim(a, b, pad, taps) for taps in (False, True) for pad in (True, False)]
        lines.append(" ".join([name] + [f"{v:.10f}" for v in values]))
    with open("expected.txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    with open("expected_ms_ssim.txt", "w") as f:
        f.write("\n".join(ms_lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
