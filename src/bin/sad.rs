//! `sad`: the burn-sad command line.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use burn_sad::device::{DeviceChoice, select_device};
use burn_sad::image::load_rgb;
use burn_sad::ssim::{MsSsimOptions, Padding, SsimOptions, try_fused_ssim, try_ms_ssim};
use clap::{Parser, Subcommand};

/// Fused, differentiable image kernels for Burn.
#[derive(Parser)]
#[command(name = "sad", version, about)]
struct Cli {
    /// Device: auto, cuda, rocm, wgpu, wgpu-cpu, vulkan, metal, cpu or flex
    /// (default: $BURN_SAD_DEVICE, else auto).
    #[arg(long, global = true)]
    device: Option<DeviceChoice>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the SSIM of two images of the same size (RGB, values / 255).
    Ssim {
        /// First image.
        a: PathBuf,
        /// Second image.
        b: PathBuf,
        /// Border handling: `same` (zero padding) or `valid` (no padding).
        #[arg(long, default_value = "same")]
        padding: Padding,
        /// Gaussian window size in taps (odd, 3 to 15).
        #[arg(long, default_value_t = 11)]
        window: usize,
        /// Standard deviation of the Gaussian window.
        #[arg(long, default_value_t = 1.5)]
        sigma: f32,
        /// Multi-scale SSIM (5 scales, pytorch-msssim weights, valid padding).
        #[arg(long, conflicts_with = "padding")]
        ms: bool,
    },
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    let choice = match cli.device {
        Some(choice) => choice,
        None => DeviceChoice::from_env().map_err(anyhow::Error::msg)?,
    };
    let (device, description) = select_device(choice).map_err(anyhow::Error::msg)?;
    match cli.command {
        Command::Ssim {
            a,
            b,
            padding,
            window,
            sigma,
            ms,
        } => {
            let img1 = load_rgb(&a, &device)?;
            let img2 = load_rgb(&b, &device)?;
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
                };
                try_ms_ssim(img1, img2, &options)?
            } else {
                let options = SsimOptions {
                    padding,
                    window,
                    sigma,
                };
                try_fused_ssim(img1, img2, options)?
            };
            let value: f32 = ssim
                .try_into_scalar()
                .map_err(|error| anyhow::anyhow!("{error:?}"))
                .context("reading the SSIM value")?;
            eprintln!("device: {description}");
            println!("{value:.6}");
        }
    }
    Ok(())
}
