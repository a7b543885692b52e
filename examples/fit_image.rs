//! Fitting an image with SAD through the library API: the reference trainer's recipe at a bit
//! budget, then the reconstruction and its sites file.
//!
//! ```text
//! cargo run --release --example fit_image [-- IMAGE BPP ITERS]
//! ```

use burn_sad::device::{DeviceChoice, select_device};
use burn_sad::image::{load_rgb, save_png};
use burn_sad::sad::fit::{FitOptions, TargetImage, TrainingConfig, fit};
use burn_sad::sad::write_sites;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let image = args.next().unwrap_or_else(|| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sad/astro128.png").to_owned()
    });
    let bpp: f64 = args.next().map_or(Ok(4.0), |a| a.parse())?;
    let iters: usize = args.next().map_or(Ok(500), |a| a.parse())?;

    let choice = DeviceChoice::from_env().map_err(anyhow::Error::msg)?;
    let (device, description) = select_device(choice).map_err(anyhow::Error::msg)?;
    println!("device: {description}");
    let target = TargetImage::from_tensor(load_rgb(&image, &device)?);

    // The shipped configuration, scaled down to a small image and a short run: the prune
    // events (100, 140, …, 2960 of 4000 iterations) keep their place in the run.
    let config = TrainingConfig {
        default_iters: iters,
        default_target_bpp: bpp,
        default_sites: 4000,
        default_max_sites: 4000,
        prune_start: iters / 40,
        prune_freq: (iters / 100).max(1),
        prune_end: iters * 3 / 4,
        ..TrainingConfig::default()
    };
    let options = FitOptions {
        log_every: 100,
        ..FitOptions::new(config)
    };
    let result = fit(&target, options, &device, |progress| {
        if let Some(psnr) = progress.psnr {
            println!(
                "iter {:5} | PSNR {psnr:.2} dB | {} sites",
                progress.iteration, progress.active_sites
            );
        }
    })?;
    println!(
        "{} sites ({:.2} bpp), PSNR {:.2} dB, SSIM {:.4}, {:.1} s",
        result.sites.sites.len(),
        result.bits_per_pixel,
        result.psnr,
        result.ssim,
        result.training_time.as_secs_f64()
    );
    let out = std::env::temp_dir();
    save_png(result.image.unsqueeze::<4>(), out.join("fit_image.png"))?;
    write_sites(out.join("fit_image_sites.txt"), &result.sites)?;
    println!("wrote {}", out.join("fit_image.png").display());
    Ok(())
}
