"""SSIM and MS-SSIM of the vendored photos by pytorch-msssim, on other data ranges and constants.

Writes expected_pytorch_msssim.txt, which the data-range tests read. Made once with
pytorch-msssim 1.0.0 and PyTorch 2.15.0 (CPU), in float64:

    python3 -m venv /tmp/pyref && /tmp/pyref/bin/pip install torch pytorch-msssim pillow
    cd tests/data && /tmp/pyref/bin/python make_pytorch_msssim.py

Each row is one pair of photos (<name>.png against <name>_degraded.png) in one data range:
`255` is the 8-bit values themselves (data_range=255), `pm1` the values mapped to [-1, 1] as
q / 127.5 - 1 (data_range=2), `k` the [0, 1] values q / 255 with K=(0.02, 0.05), `255r1` the
8-bit values with data_range=1 (what code that forgot to scale computes). pytorch-msssim
pads nothing (our `Padding::Valid`) and averages over the batch and channels (our `Mean`).
Every value is computed twice: with pytorch-msssim's own window (`win=None`, float32 taps it
computes from sigma) and with fused-ssim's float32 tap literals (`win=` those taps), which the
crate uses by default.
"""
import numpy as np
import torch
from PIL import Image
from pytorch_msssim import ms_ssim, ssim

# fused-ssim's float32 tap literals (centre last), as in make_fixtures.py.
REFERENCE_TAPS = [0.001028380123898387, 0.0075987582094967365, 0.036000773310661316,
                  0.10936068743467331, 0.21300552785396576, 0.26601171493530273]
SSIM_PHOTOS = ["astronaut", "coffee", "chelsea"]
MS_SSIM_PHOTOS = ["astronaut_ms"]
# name: (scale from q, offset, data_range, K)
RANGES = {
    "255": (1.0, 0.0, 255.0, (0.01, 0.03)),
    "pm1": (1.0 / 127.5, -1.0, 2.0, (0.01, 0.03)),
    "k": (1.0 / 255.0, 0.0, 1.0, (0.02, 0.05)),
    "255r1": (1.0, 0.0, 1.0, (0.01, 0.03)),
}


def photo(name):
    q = np.asarray(Image.open(f"{name}.png").convert("RGB"), dtype=np.float64)
    return torch.from_numpy(q).permute(2, 0, 1).unsqueeze(0).contiguous()


def fused_window(channels):
    taps = REFERENCE_TAPS + REFERENCE_TAPS[-2::-1]
    return torch.tensor(taps, dtype=torch.float64).reshape(1, 1, 1, -1).repeat(channels, 1, 1, 1)


def main():
    lines = [
        "# pytorch-msssim 1.0.0 in float64 (make_pytorch_msssim.py): op name range "
        "value(own window) value(fused-ssim's taps)"
    ]
    for op, names in (("ssim", SSIM_PHOTOS), ("ms_ssim", MS_SSIM_PHOTOS)):
        fn = ssim if op == "ssim" else ms_ssim
        for name in names:
            a, b = photo(name), photo(f"{name}_degraded")
            for key, (scale, offset, data_range, k) in RANGES.items():
                x, y = a * scale + offset, b * scale + offset
                own = fn(x, y, data_range=data_range, K=k).item()
                taps = fn(x, y, data_range=data_range, K=k, win=fused_window(3)).item()
                lines.append(f"{op} {name} {key} {own:.10f} {taps:.10f}")
    with open("expected_pytorch_msssim.txt", "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
