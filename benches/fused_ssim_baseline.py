"""Times rahul-goel/fused-ssim on the shapes of benches/ssim.rs, the same way (synchronised wall
time over back-to-back steps after warm-up), and prints `BxCxHxW` (and `BxCxDxHxW`) `train_ms infer_ms` lines that
`cargo bench --bench fused_ssim -- --baseline FILE` turns into ratio columns.

Needs PyTorch with CUDA and the `fused_ssim` package installed (built for the GPU's arch); with
pytorch-msssim installed too, it also times its `ms_ssim` (`msssim-` lines).
Usage: python3 fused_ssim_baseline.py [iters] > baseline.txt
"""
import sys
import time

import torch
from fused_ssim import fused_ssim, fused_ssim3d

SHAPES = [(1, 3, 1080, 1920), (1, 3, 2160, 3840), (5, 1, 1024, 1024), (8, 3, 256, 256)]
L1_SHAPES = [(1, 3, 1080, 1920), (1, 3, 2160, 3840)]
VOLUMES = [(2, 3, 96, 96, 96), (1, 1, 256, 256, 256)]
MS_SHAPES = [(1, 3, 1080, 1920), (8, 3, 256, 256)]
LAMBDA = 0.2


def time_ms(step, iters):
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(iters):
        step()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e3 / iters


def race(key, shape, loss, infer, iters):
    """Times a training step (`loss(x, y)` differentiated with respect to x) and an inference
    (`infer(x, y)`) on a random pair of `shape`, and prints the line."""
    img1 = torch.rand(shape, device="cuda")
    img2 = (img1 * 0.8 + torch.rand(shape, device="cuda") * 0.2).clamp(0, 1)
    param = img1.clone().requires_grad_(True)

    def train_step():
        param.grad = None
        loss(param, img2).backward()

    def infer_step():
        with torch.no_grad():
            infer(img1, img2)

    t = time_ms(train_step, iters)
    i = time_ms(infer_step, iters)
    print(key + "x".join(map(str, shape)), f"{t:.4f}", f"{i:.4f}", flush=True)


def main():
    iters = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    torch.manual_seed(0)
    print(f"# fused-ssim on {torch.cuda.get_device_name()}, torch {torch.__version__}")
    for shape in SHAPES:
        race("", shape, lambda x, y: 1.0 - fused_ssim(x, y, padding="same", train=True),
             lambda x, y: fused_ssim(x, y, padding="same", train=False), iters)

    # The 3DGS loss: fused-ssim plus a separate torch L1 (what fused-ssim users run today).
    def l1_ssim(x, y, train):
        ssim = fused_ssim(x, y, padding="same", train=train)
        return (1 - LAMBDA) * (x - y).abs().mean() + LAMBDA * (1.0 - ssim)

    for shape in L1_SHAPES:
        race("l1ssim-", shape, lambda x, y: l1_ssim(x, y, True), lambda x, y: l1_ssim(x, y, False),
             iters)
    for shape in VOLUMES:
        race("", shape, lambda x, y: 1.0 - fused_ssim3d(x, y, padding="same", train=True),
             lambda x, y: fused_ssim3d(x, y, padding="same", train=False), iters)
    try:
        from pytorch_msssim import ms_ssim
    except ImportError:
        print("# pytorch-msssim is not installed: no msssim- lines", flush=True)
        return
    # pytorch-msssim's `ms_ssim(X, Y, data_range=1)`: 5 scales, 11-tap Gaussian, valid.
    for shape in MS_SHAPES:
        race("msssim-", shape, lambda x, y: 1.0 - ms_ssim(x, y, data_range=1.0),
             lambda x, y: ms_ssim(x, y, data_range=1.0), iters)


if __name__ == "__main__":
    main()
