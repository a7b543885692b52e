//! The research-code path: SAD sites as a Burn `Module`, trained with a stock Burn optimizer
//! on an L2 + (1 − SSIM) loss through the differentiable render op and `fused_ssim`.
//!
//! ```text
//! cargo run --release --example sites_in_a_model [-- STEPS]
//! ```

use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::Tensor;
use burn_sad::device::{DeviceChoice, select_device};
use burn_sad::image::load_rgb;
use burn_sad::sad::fit::{InitialShape, Initialisation, TargetImage};
use burn_sad::sad::{
    Candidates, HilbertOrder, PropagationOptions, RenderGeometry, Sites, psnr, render,
};
use burn_sad::ssim::{SsimOptions, fused_ssim};

const SSIM_WEIGHT: f32 = 0.2;

fn main() -> anyhow::Result<()> {
    let steps: usize = std::env::args().nth(1).map_or(Ok(300), |a| a.parse())?;
    let choice = DeviceChoice::from_env().map_err(anyhow::Error::msg)?;
    let (device, description) = select_device(choice).map_err(anyhow::Error::msg)?;
    println!("device: {description}");
    let device = device.autodiff();
    let photo = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sad/astro64.png");
    let target: Tensor<4> = load_rgb(photo, &device)?;
    let [_, _, height, width] = target.dims();
    let geometry = RenderGeometry::new(width, height);

    // Start from the reference's gradient-weighted placement.
    let host_target = TargetImage::from_tensor(target.clone());
    let shape = InitialShape {
        log_tau: 5.0,
        radius: 4.0,
    };
    let table = Initialisation::GradientWeighted {
        sites: 400,
        alpha: 1.0,
    }
    .sites(&host_target, shape, 0);
    let mut sites = Sites::from_table(&table, table.sites.len(), &device);
    let hilbert = HilbertOrder::of(&table, width, height, &device);
    let mut candidates = Candidates::random(&sites.packed().inner(), geometry, 0);

    let mut optimizer = AdamConfig::new().init();
    for step in 0..=steps {
        // The lists follow the sites: one propagation pass every 8 steps, as the trainer does.
        if step % 8 == 0 {
            candidates.propagate(
                &sites.packed().inner(),
                &hilbert,
                PropagationOptions::default(),
            );
        }
        let image = render(sites.packed(), &candidates).unsqueeze::<4>();
        let l2 = (image.clone() - target.clone()).powf_scalar(2.0).mean();
        let ssim = fused_ssim(image.clone(), target.clone(), SsimOptions::default());
        let loss = l2.mul_scalar(1.0 - SSIM_WEIGHT)
            + ssim.clone().neg().add_scalar(1.0).mul_scalar(SSIM_WEIGHT);
        let grads = GradientsParams::from_grads(loss.backward(), &sites);
        if step % 50 == 0 {
            println!(
                "step {step:4} | PSNR {:.2} dB | SSIM {:.4}",
                psnr(image.inner(), target.clone().inner()),
                ssim.inner().into_scalar::<f32>()
            );
        }
        sites = optimizer.step(0.02, sites, grads);
        // The render assumes unit directions and colours in [0, 1].
        sites.direction = sites.direction.clone().map(|d: Tensor<2>| {
            let norm = d.clone().powf_scalar(2.0).sum_dim(1).sqrt().clamp_min(1e-6);
            (d / norm).detach().require_grad()
        });
        sites.color = sites
            .color
            .clone()
            .map(|c: Tensor<2>| c.clamp(0.0, 1.0).detach().require_grad());
    }
    Ok(())
}
