//! `sad`: the burn-sad command line.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use burn_sad::device::{DeviceChoice, select_device};
use burn_sad::image::{load_rgb, save_png};
use burn_sad::sad::{RenderOnlyOptions, psnr, read_sites, render_sites_with_progress};
use burn_sad::ssim::{MsSsimOptions, Padding, SsimOptions, try_fused_ssim, try_ms_ssim};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

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
    /// Render a `*_sites.txt` file (the reference trainer's format) to a PNG.
    Render {
        /// The sites file.
        sites: PathBuf,
        /// Output PNG.
        #[arg(short, long)]
        out: PathBuf,
        /// Output width (default: the file's; alone, the height follows the aspect ratio).
        #[arg(long)]
        width: Option<usize>,
        /// Output height (default: the file's; alone, the width follows the aspect ratio).
        #[arg(long)]
        height: Option<usize>,
        /// Image to compare with: prints `PSNR: <value> dB` as the last line.
        #[arg(long)]
        target: Option<PathBuf>,
        /// At another size, scale radii with the image too (keeps the diagram's shape; the
        /// reference scales positions only).
        #[arg(long)]
        scale_radius: bool,
        /// Candidate propagation passes after the jump flood.
        #[arg(long, default_value_t = 16)]
        passes: u32,
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
        Command::Render {
            sites,
            out,
            width,
            height,
            target,
            scale_radius,
            passes,
        } => {
            let options = RenderOnlyOptions {
                width,
                height,
                scale_radius,
                passes,
                ..RenderOnlyOptions::default()
            };
            eprintln!("device: {description}");
            render_command(&sites, &out, target.as_deref(), &options, &device)?;
        }
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

/// Pixels from which a render shows a progress bar (on a terminal).
const LONG_RENDER_PIXELS: usize = 1 << 22;

fn render_command(
    sites: &Path,
    out: &Path,
    target: Option<&Path>,
    options: &RenderOnlyOptions,
    device: &burn::tensor::Device,
) -> Result<()> {
    let table = read_sites(sites).map_err(|error| match error {
        burn_sad::sad::SitesFileError::Io(_) => anyhow::Error::new(error),
        other => anyhow::Error::new(other).context(sites.display().to_string()),
    })?;
    let (width, height) = options.size_for(&table)?;
    // Check the target before the work, so a mismatch costs nothing.
    let target = match target {
        Some(path) => {
            let image = load_rgb(path, device)?;
            let [_, _, h, w] = image.dims();
            if (w, h) != (width, height) {
                bail!(
                    "{} is {w}×{h} but the render is {width}×{height}; PSNR needs the same size",
                    path.display()
                );
            }
            Some(image.reshape([3, h, w]))
        }
        None => None,
    };
    println!("Loaded {} sites", table.sites.len());
    println!("Render size: {width}x{height}");
    let bar =
        (width * height >= LONG_RENDER_PIXELS && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(u64::from(options.passes) + 2);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} {msg} [{bar:30}] {pos}/{len} steps {elapsed}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar.set_message("candidates + render");
            bar
        });
    let mut tick = |done: u32, _total: u32| {
        if let Some(bar) = &bar {
            bar.set_position(u64::from(done));
        }
    };
    let progress: Option<&mut dyn FnMut(u32, u32)> =
        if bar.is_some() { Some(&mut tick) } else { None };
    let rendered = render_sites_with_progress(&table, options, device, progress)?;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    println!(
        "Candidate build: {:.3} ms | Render: {:.3} ms",
        rendered.candidate_ms, rendered.render_ms
    );
    save_png(rendered.image.clone().unsqueeze::<4>(), out)?;
    println!("Saved: {}", out.display());
    if let Some(target) = target {
        println!("PSNR: {:.4} dB", psnr(rendered.image, target));
    }
    Ok(())
}
