//! What a user of burn-sad does in their own project: trains a small model with `fused_ssim` and
//! `ssim_l1_loss`, takes `ms_ssim` (also on 8-bit values, as pytorch-msssim's `data_range=255`,
//! and of volumes with `fused_ssim3d`), renders a sites file and fits a small photo. Exits with 1 and
//! one line when a result is wrong. The device is `$BURN_SAD_DEVICE`'s (default: the best found);
//! the photos and sites file come from the folder given as the first argument, by default
//! burn-sad's `tests/data` beside this project (CI builds a copy of it against the packaged crates).

use burn::module::Module;
use burn::nn::PaddingConfig2d;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, Distribution, Tensor};
use burn_sad::device::{DeviceChoice, select_device};
use burn_sad::image::load_rgb;
use burn_sad::sad::fit::{FitOptions, TargetImage, TrainingConfig, fit};
use burn_sad::sad::{RenderOnlyOptions, read_sites, render_sites};
use burn_sad::ssim::{
    MsSsimOptions, SsimOptions, fused_ssim, fused_ssim3d, ms_ssim, ssim_l1_loss,
};

/// burn-sad's test data, seen from this project's folder in the repository.
const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../data");

/// One 3×3 convolution that learns to undo noise.
#[derive(Module, Debug)]
struct Model {
    conv: Conv2d,
}

impl Model {
    fn forward(&self, noisy: Tensor<4>) -> Tensor<4> {
        noisy.clone() - self.conv.forward(noisy)
    }
}

fn scalar(tensor: Tensor<1>) -> f32 {
    tensor.into_scalar::<f32>()
}

fn check(ok: bool, what: String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(what) }
}

/// 30 Adam steps of L1 + SSIM, then of 1 − SSIM alone: each loss falls.
fn train(data: &str, device: &Device) -> Result<(), String> {
    let device = device.clone().autodiff();
    let photo = load_rgb(format!("{data}/chelsea.png"), &device).map_err(|e| e.to_string())?;
    let clean = photo.slice([0..1, 0..3, 60..108, 120..168]);
    let noise = Tensor::random(clean.shape(), Distribution::Normal(0.0, 0.1), &device);
    let noisy = (clean.clone() + noise).clamp(0.0, 1.0);
    let mut model = Model {
        conv: Conv2dConfig::new([3, 3], [3, 3])
            .with_padding(PaddingConfig2d::Same)
            .init(&device),
    };
    let options = SsimOptions::default();
    for (name, ssim_only) in [("L1 + SSIM", false), ("1 - SSIM", true)] {
        let mut optimizer = AdamConfig::new().init();
        let loss_of = |model: &Model| {
            let denoised = model.forward(noisy.clone());
            if ssim_only {
                fused_ssim(denoised, clean.clone(), options)
                    .neg()
                    .add_scalar(1.0)
            } else {
                ssim_l1_loss(denoised, clean.clone(), 0.2, options)
            }
        };
        let first = scalar(loss_of(&model).detach());
        for _ in 0..30 {
            let loss = loss_of(&model);
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optimizer.step(5e-3, model, grads);
        }
        let last = scalar(loss_of(&model).detach());
        println!("{name}: loss {first:.4} -> {last:.4} in 30 steps");
        check(
            last.is_finite() && last < first,
            format!("{name}: the loss did not fall ({first} -> {last})"),
        )?;
    }
    Ok(())
}

/// MS-SSIM of a photo with itself is 1, with a noisy copy less.
fn multi_scale(data: &str, device: &Device) -> Result<(), String> {
    // 200×176: MS-SSIM's five scales of an 11-tap window need more than 160 pixels a side.
    let photo = load_rgb(format!("{data}/astronaut_ms.png"), device).map_err(|e| e.to_string())?;
    let noisy = (photo.clone()
        + Tensor::random(photo.shape(), Distribution::Normal(0.0, 0.1), device))
    .clamp(0.0, 1.0);
    let options = MsSsimOptions::default();
    let same = scalar(ms_ssim(photo.clone(), photo.clone(), &options));
    let less = scalar(ms_ssim(noisy, photo, &options));
    println!("MS-SSIM: itself {same:.4}, noisy {less:.4}");
    check(
        (same - 1.0).abs() < 1e-3 && less < 0.99 && less > 0.1,
        format!("MS-SSIM: {same} for the same photo, {less} for a noisy copy"),
    )
}

/// Images in 0..=255 with a data range of 255: MS-SSIM as pytorch-msssim gives it
/// (`tests/data/expected_pytorch_msssim.txt`), and 3D SSIM of a volume of 8-bit slices equal to
/// that of the same volume in [0, 1].
fn data_range(data: &str, device: &Device) -> Result<(), String> {
    let load = |name: &str| {
        load_rgb(format!("{data}/{name}.png"), device)
            .map(|photo| photo.mul_scalar(255.0).round())
            .map_err(|e| e.to_string())
    };
    let (photo, degraded) = (load("astronaut_ms")?, load("astronaut_ms_degraded")?);
    let eight_bit = MsSsimOptions::default().with_data_range(255.0);
    let ms = scalar(ms_ssim(photo.clone(), degraded.clone(), &eight_bit));
    let table = std::fs::read_to_string(format!("{data}/expected_pytorch_msssim.txt"))
        .map_err(|e| e.to_string())?;
    let want: f32 = table
        .lines()
        .find(|line| line.starts_with("ms_ssim astronaut_ms 255 "))
        .and_then(|line| line.split_whitespace().nth(3)?.parse().ok())
        .ok_or("no 8-bit MS-SSIM row in expected_pytorch_msssim.txt")?;
    println!("MS-SSIM of 8-bit values: {ms:.6} (pytorch-msssim {want:.6})");
    check(
        (ms - want).abs() < 1e-5,
        format!("MS-SSIM at data range 255: {ms}, pytorch-msssim {want}"),
    )?;
    // Twelve 40×40 slices of a slow pan across the photo.
    let slices = |image: &Tensor<4>| {
        let crops: Vec<Tensor<4>> = (0..12)
            .map(|z| image.clone().slice([0..1, 0..3, z..z + 40, 2 * z..2 * z + 40]))
            .collect();
        Tensor::stack::<5>(crops, 2)
    };
    let (volume, degraded_volume) = (slices(&photo), slices(&degraded));
    let wide = scalar(fused_ssim3d(
        volume.clone(),
        degraded_volume.clone(),
        SsimOptions::default().with_data_range(255.0),
    ));
    let unit = scalar(fused_ssim3d(
        volume.div_scalar(255.0),
        degraded_volume.div_scalar(255.0),
        SsimOptions::default(),
    ));
    println!("3D SSIM of 8-bit slices: {wide:.6} (in [0, 1]: {unit:.6})");
    check(
        (wide - unit).abs() < 1e-5,
        format!("3D SSIM at data range 255: {wide}, in [0, 1]: {unit}"),
    )
}

fn psnr(a: Tensor<3>, b: Tensor<3>) -> f32 {
    let mse = scalar((a - b).powi_scalar(2).mean());
    -10.0 * mse.log10()
}

/// The reference trainer's fit of a 128² astronaut crop, rendered, against the crop.
fn render(data: &str, device: &Device) -> Result<(), String> {
    let table = read_sites(format!("{data}/sad/astro128_sites.txt")).map_err(|e| e.to_string())?;
    let rendered =
        render_sites(&table, &RenderOnlyOptions::default(), device).map_err(|e| e.to_string())?;
    let photo = load_rgb(format!("{data}/sad/astro128.png"), device).map_err(|e| e.to_string())?;
    let db = psnr(rendered.image, photo.squeeze_dim(0));
    println!("render: {} sites, PSNR {db:.2} dB", table.sites.len());
    check(db > 25.0, format!("render: PSNR {db} dB"))
}

/// 40 iterations of the fitting recipe on a 64² crop.
fn fit_crop(data: &str, device: &Device) -> Result<(), String> {
    let photo = load_rgb(format!("{data}/sad/astro64.png"), device).map_err(|e| e.to_string())?;
    let config = TrainingConfig {
        default_iters: 40,
        default_target_bpp: 8.0,
        default_sites: 400,
        default_max_sites: 400,
        prune_start: 10,
        prune_freq: 5,
        prune_end: 30,
        ..TrainingConfig::default()
    };
    let options = FitOptions {
        log_every: 40,
        ..FitOptions::new(config)
    };
    let result = fit(&TargetImage::from_tensor(photo), options, device, |_| {})
        .map_err(|e| e.to_string())?;
    println!(
        "fit: {} sites, PSNR {:.2} dB after 40 iterations",
        result.sites.sites.len(),
        result.psnr
    );
    check(
        result.psnr.is_finite() && result.psnr > 15.0,
        format!("fit: PSNR {} dB", result.psnr),
    )
}

fn main() -> std::process::ExitCode {
    let run = || -> Result<(), String> {
        let data = std::env::args().nth(1).unwrap_or_else(|| DATA.to_owned());
        let (device, description) = select_device(DeviceChoice::from_env()?)?;
        println!("device: {description}");
        train(&data, &device)?;
        multi_scale(&data, &device)?;
        data_range(&data, &device)?;
        render(&data, &device)?;
        fit_crop(&data, &device)
    };
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
