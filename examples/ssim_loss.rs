//! Adding `fused_ssim` to a Burn model: a small convolutional denoiser trained with the loss of
//! 3D Gaussian-splatting trainers, (1 − λ)·L1 + λ·(1 − SSIM), on crops of real photos.
//!
//! ```text
//! cargo run --release --example ssim_loss [-- STEPS]
//! ```
//! Prints the loss and the SSIM of the noisy input and of the model's output as training goes.

use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Distribution, Tensor};
use burn_sad::device::{DeviceChoice, select_device};
use burn_sad::image::load_rgb;
use burn_sad::ssim::{SsimOptions, fused_ssim};

#[path = "common/denoiser.rs"]
mod denoiser;
use denoiser::Denoiser;

const PHOTOS: [&str; 3] = ["astronaut.png", "coffee.png", "chelsea.png"];
const CROP: usize = 48;
const BATCH: usize = 8;
const NOISE: f64 = 0.08;
const LAMBDA: f32 = 0.2;

/// Deterministic crop positions (a 64-bit LCG), so runs are comparable.
struct Crops {
    photos: Vec<Tensor<4>>,
    state: u64,
}

impl Crops {
    fn next_batch(&mut self) -> Tensor<4> {
        let crops = (0..BATCH)
            .map(|_| {
                let index = self.next(self.photos.len());
                let photo = self.photos[index].clone();
                let [_, _, h, w] = photo.dims();
                let (top, left) = (self.next(h - CROP), self.next(w - CROP));
                photo.slice([0..1, 0..3, top..top + CROP, left..left + CROP])
            })
            .collect();
        Tensor::cat(crops, 0)
    }

    fn next(&mut self, bound: usize) -> usize {
        self.state = self
            .state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.state >> 33) as usize) % bound
    }
}

fn scalar(t: Tensor<1>) -> f32 {
    t.try_into_scalar::<f32>().expect("readable scalar")
}

fn main() -> anyhow::Result<()> {
    let steps: usize = match std::env::args().nth(1) {
        Some(arg) => arg.parse()?,
        None => 120,
    };
    let choice = DeviceChoice::from_env().map_err(anyhow::Error::msg)?;
    let (device, description) = select_device(choice).map_err(anyhow::Error::msg)?;
    println!("device: {description}");
    let device = device.autodiff();
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let photos = PHOTOS
        .iter()
        .map(|name| load_rgb(format!("{data}/{name}"), &device))
        .collect::<Result<Vec<_>, _>>()?;
    let mut crops = Crops { photos, state: 7 };
    let mut model = Denoiser::new(24, &device);
    let mut optimizer = AdamConfig::new().init();
    let options = SsimOptions::default();
    let start = std::time::Instant::now();
    for step in 1..=steps {
        let clean = crops.next_batch();
        let noise = Tensor::random(clean.shape(), Distribution::Normal(0.0, NOISE), &device);
        let noisy = (clean.clone() + noise).clamp(0.0, 1.0);
        let denoised = model.forward(noisy.clone());
        let l1 = (denoised.clone() - clean.clone()).abs().mean();
        let ssim = fused_ssim(denoised, clean.clone(), options);
        let loss =
            l1.mul_scalar(1.0 - LAMBDA) + ssim.clone().neg().add_scalar(1.0).mul_scalar(LAMBDA);
        if step == 1 || step % 25 == 0 || step == steps {
            let baseline = fused_ssim(noisy.detach(), clean.detach(), options);
            println!(
                "step {step:4}  loss {:.4}  SSIM noisy {:.4} -> denoised {:.4}  ({:.1} s)",
                scalar(loss.clone().detach()),
                scalar(baseline),
                scalar(ssim.detach()),
                start.elapsed().as_secs_f32()
            );
        }
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optimizer.step(2e-3, model, grads);
    }
    Ok(())
}
