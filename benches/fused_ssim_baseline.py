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


def main():
    iters = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    torch.manual_seed(0)
    print(f"# fused-ssim on {torch.cuda.get_device_name()}, torch {torch.__version__}")
    for shape in SHAPES:
        img1 = torch.rand(shape, device="cuda")
        img2 = (img1 * 0.8 + torch.rand(shape, device="cuda") * 0.2).clamp(0, 1)
        param = img1.clone().requires_grad_(True)

        def train():
            param.grad = None
            loss = 1.0 - fused_ssim(param, img2, padding="same", train=True)
            loss.backward()

        def infer():
            with torch.no_grad():
                fused_ssim(img1, img2, padding="same", train=False)

        t = time_ms(train, iters)
        i = time_ms(infer, iters)
        print("x".join(map(str, shape)), f"{t:.4f}", f"{i:.4f}", flush=True)

    # The 3DGS loss: fused-ssim plus a separate torch L1 (what fused-ssim users run today).
    for shape in L1_SHAPES:
        img1 = torch.rand(shape, device="cuda")
        img2 = (img1 * 0.8 + torch.rand(shape, device="cuda") * 0.2).clamp(0, 1)
        param = img1.clone().requires_grad_(True)

        def loss_of(x, train):
            l1 = (x - img2).abs().mean()
            return (1 - LAMBDA) * l1 + LAMBDA * (1.0 - fused_ssim(x, img2, padding="same", train=train))

        def train():
            param.grad = None
            loss_of(param, True).backward()

        def infer():
            with torch.no_grad():
                loss_of(img1, False)

        t = time_ms(train, iters)
        i = time_ms(infer, iters)
        print("l1ssim-" + "x".join(map(str, shape)), f"{t:.4f}", f"{i:.4f}", flush=True)

    for shape in VOLUMES:
        vol1 = torch.rand(shape, device="cuda")
        vol2 = (vol1 * 0.8 + torch.rand(shape, device="cuda") * 0.2).clamp(0, 1)
        param = vol1.clone().requires_grad_(True)

        def train():
            param.grad = None
            loss = 1.0 - fused_ssim3d(param, vol2, padding="same", train=True)
            loss.backward()

        def infer():
            with torch.no_grad():
                fused_ssim3d(vol1, vol2, padding="same", train=False)

        t = time_ms(train, iters)
        i = time_ms(infer, iters)
        print("x".join(map(str, shape)), f"{t:.4f}", f"{i:.4f}", flush=True)
    time_ms_ssim(iters)


def time_ms_ssim(iters):
    """pytorch-msssim's `ms_ssim(X, Y, data_range=1)`: 5 scales, 11-tap Gaussian, valid."""
    try:
        from pytorch_msssim import ms_ssim
    except ImportError:
        print("# pytorch-msssim is not installed: no msssim- lines", flush=True)
        return
    for shape in MS_SHAPES:
        img1 = torch.rand(shape, device="cuda")
        img2 = (img1 * 0.8 + torch.rand(shape, device="cuda") * 0.2).clamp(0, 1)
        param = img1.clone().requires_grad_(True)

        def train():
            param.grad = None
            loss = 1.0 - ms_ssim(param, img2, data_range=1.0)
            loss.backward()

        def infer():
            with torch.no_grad():
                ms_ssim(img1, img2, data_range=1.0)

        t = time_ms(train, iters)
        i = time_ms(infer, iters)
        print("msssim-" + "x".join(map(str, shape)), f"{t:.4f}", f"{i:.4f}", flush=True)


if __name__ == "__main__":
    main()
