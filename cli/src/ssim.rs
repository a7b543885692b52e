//! `sad ssim`: the SSIM of two photos.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use burn::tensor::{Device, Tensor};
use burn_sad::device::memory_on_host;
use burn_sad::image::{ImageFile, MAX_SIDE};
use burn_sad::ssim::{MsSsimOptions, Padding, SsimOptions, try_fused_ssim, try_ms_ssim};
use clap::Args;

use crate::checks;

/// `sad ssim` options.
#[derive(Args)]
pub struct SsimArgs {
    /// First image.
    a: PathBuf,
    /// Second image.
    b: PathBuf,
    /// Border handling: `same` (zero padding) or `valid` (no padding).
    #[arg(long, default_value = "same")]
    padding: Padding,
    /// Gaussian window size in taps (odd, 3 to 15).
    #[arg(long, default_value_t = 11, allow_negative_numbers = true)]
    window: usize,
    /// Standard deviation of the Gaussian window.
    #[arg(long, default_value_t = 1.5, allow_negative_numbers = true)]
    sigma: f32,
    /// Multi-scale SSIM (5 scales, pytorch-msssim weights, valid padding).
    #[arg(long, conflicts_with = "padding")]
    ms: bool,
    /// The pixel values' range in the files' 8-bit units, which sets SSIM's constants
    /// C1 = (0.01·L)², C2 = (0.03·L)² as pytorch-msssim's `data_range` does: 255 (the default)
    /// is the usual SSIM of 8-bit images; `--data-range 1` reproduces code that passed
    /// `data_range=1` with values in 0..=255.
    #[arg(long, default_value_t = 255.0, allow_negative_numbers = true)]
    data_range: f32,
}

/// Prints the SSIM of the two images as the last line of stdout.
pub fn ssim_command(args: SsimArgs, device: &Device, description: &str) -> Result<()> {
    let SsimArgs {
        a,
        b,
        padding,
        window,
        sigma,
        ms,
        data_range,
    } = args;
    if !(data_range.is_finite() && data_range > 0.0) {
        bail!("--data-range must be a positive number, got {data_range}");
    }
    // The images are loaded as q / 255: their range in those units.
    let unit_range = data_range / 255.0;
    let on_host = memory_on_host(device);
    // Each file is read once; its header's size is checked against the memory before decoding.
    let load = |path: &std::path::Path| -> Result<Tensor<4>> {
        let file = ImageFile::open(path, MAX_SIDE)?;
        checks::check_memory(
            "SSIM",
            (file.width * file.height) as u64,
            checks::SSIM_HOST_BYTES_PER_PIXEL,
            checks::SSIM_DEVICE_BYTES_PER_PIXEL,
            on_host,
        )?;
        Ok(file.decode()?.into_tensor(device))
    };
    let img1 = load(&a)?;
    let img2 = load(&b)?;
    let (shape1, shape2) = (img1.dims(), img2.dims());
    if shape1 != shape2 {
        bail!(
            "{} is {}×{} but {} is {}×{}; SSIM needs images of the same size",
            a.display(),
            shape1[3],
            shape1[2],
            b.display(),
            shape2[3],
            shape2[2]
        );
    }
    let ssim = if ms {
        let options = MsSsimOptions {
            window,
            sigma,
            ..MsSsimOptions::default()
        }
        .with_data_range(unit_range);
        try_ms_ssim(img1, img2, &options)?
    } else {
        let options = SsimOptions {
            padding,
            window,
            sigma,
            ..SsimOptions::DEFAULT
        }
        .with_data_range(unit_range);
        try_fused_ssim(img1, img2, options)?
    };
    let value: f32 = ssim
        .try_into_scalar()
        .map_err(|error| anyhow::anyhow!("{error:?}"))
        .context("reading the SSIM value")?;
    eprintln!("device: {description}");
    println!("{value:.6}");
    Ok(())
}
