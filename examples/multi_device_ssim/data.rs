//! The example's data: crops of the test photos with Gaussian noise, made on the host so that
//! every run and every device count sees the same items, and their batcher.

use anyhow::Context;
use burn::data::dataloader::batcher::Batcher;
use burn::tensor::{Device, Tensor, TensorData};
use burn_sad::image::load_rgb;

const PHOTOS: [&str; 3] = ["astronaut.png", "coffee.png", "chelsea.png"];
/// Side of a crop.
pub const CROP: usize = 32;
/// Standard deviation of the noise.
const NOISE: f32 = 0.08;

/// A clean crop and its noisy copy, `[3, CROP, CROP]` each, on the host.
#[derive(Clone, Debug)]
pub struct NoisyCrop {
    clean: Vec<f32>,
    noisy: Vec<f32>,
}

/// A batch of crops on one device.
#[derive(Clone, Debug)]
pub struct NoisyBatch {
    /// The clean crops, `[batch, 3, CROP, CROP]`.
    pub clean: Tensor<4>,
    /// Their noisy copies.
    pub noisy: Tensor<4>,
}

/// Stacks crops on the device burn-train hands it (each worker's own).
#[derive(Clone)]
pub struct CropBatcher;

impl Batcher<NoisyCrop, NoisyBatch> for CropBatcher {
    fn batch(&self, items: Vec<NoisyCrop>, device: &Device) -> NoisyBatch {
        let shape = [items.len(), 3, CROP, CROP];
        let (clean, noisy): (Vec<_>, Vec<_>) =
            items.into_iter().map(|i| (i.clean, i.noisy)).unzip();
        let tensor = |values: Vec<Vec<f32>>| {
            Tensor::from_data(TensorData::new(values.concat(), shape), device)
        };
        NoisyBatch {
            clean: tensor(clean),
            noisy: tensor(noisy),
        }
    }
}

/// `count` crops of the test photos at deterministic places, with deterministic Gaussian noise
/// (an LCG and Box–Muller on the host, so every run and device count sees the same data).
pub fn noisy_crops(count: usize, device: &Device) -> anyhow::Result<Vec<NoisyCrop>> {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let photos = PHOTOS
        .iter()
        .map(|name| load_rgb(format!("{data}/{name}"), device))
        .collect::<Result<Vec<_>, _>>()?;
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut uniform = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 40) as f32 + 0.5) / (1u64 << 24) as f32
    };
    let mut crops = Vec::with_capacity(count);
    for index in 0..count {
        let photo = &photos[index % photos.len()];
        let [_, _, height, width] = photo.dims();
        let top = (uniform() * (height - CROP) as f32) as usize;
        let left = (uniform() * (width - CROP) as f32) as usize;
        let clean = photo
            .clone()
            .slice([0..1, 0..3, top..top + CROP, left..left + CROP])
            .try_to_vec_as::<f32>()
            .context("reading a crop back")?;
        let noisy = clean
            .iter()
            .map(|&v| {
                let (u1, u2) = (uniform(), uniform());
                let gauss = (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos();
                (v + NOISE * gauss).clamp(0.0, 1.0)
            })
            .collect();
        crops.push(NoisyCrop { clean, noisy });
    }
    Ok(crops)
}
