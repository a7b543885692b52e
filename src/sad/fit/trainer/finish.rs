//! The end of a fit: the final render and its metrics.

use std::time::Instant;

use burn::tensor::Tensor;
use burn_sad_kernels::sad::POSITION;

use super::Trainer;
use crate::sad::fit::budget::bits_per_pixel;
use crate::sad::fit::masked_psnr;
use crate::sad::fit::options::FitResult;
use crate::sad::{SiteTable, psnr};
use crate::ssim::{SsimOptions, fused_ssim};

impl Trainer {
    /// PSNR of `image` against the target, over the mask's pixels where it has one.
    pub(super) fn psnr_of(&self, image: Tensor<3>) -> f64 {
        match self.target.mask {
            Some(_) => masked_psnr(image, self.target_tensor.clone()),
            None => psnr(image, self.target_tensor.clone()),
        }
    }

    /// The final render and its metrics; `start` is when the loop began.
    pub fn finish(mut self, start: Instant) -> FitResult {
        if let Some(next) = self.pending.take() {
            self.candidates = next;
        }
        let image = self.render();
        let psnr = self.psnr_of(image.clone());
        let training_time = start.elapsed();
        // SSIM over the whole image: the pixels, not the mask's marks.
        let pixels = match self.target.mask {
            Some(_) => self.target.pixels_tensor(&image.device()),
            None => self.target_tensor.clone(),
        };
        let ssim = fused_ssim(
            image.clone().unsqueeze::<4>(),
            pixels.unsqueeze::<4>(),
            SsimOptions::default(),
        )
        .into_scalar::<f32>() as f64;
        let (width, height) = (self.geometry.width, self.geometry.height);
        let mut sites = SiteTable::from_tensor(self.sites.clone(), width, height);
        sites.sites.retain(|s| s[POSITION] >= 0.0);
        FitResult {
            bits_per_pixel: bits_per_pixel(sites.sites.len(), width, height),
            sites,
            image,
            psnr,
            ssim,
            training_time,
            iterations: self.iteration,
            budget: self.budget,
            phase_times: self.profile.map(|(times, _)| times),
        }
    }
}
