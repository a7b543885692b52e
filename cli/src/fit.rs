//! `sad fit`: fits a photo with SAD and writes its render and sites file.

use std::time::Instant;

use anyhow::{Context, Result};
use burn::tensor::Device;
use burn_sad::device::select_devices;
use burn_sad::image::{
    ImageError, ImageFile, MAX_SIDE, check_writable_dir, encode_png, write_all_atomically,
};
use burn_sad::sad::fit::{
    FitOptions, FitProgress, Initialisation, TargetImage, Trainer, saved_psnr,
};
use burn_sad::sad::{SitesFormat, parse_sites_bytes};
use indicatif::{ProgressBar, ProgressStyle};

use crate::fit_args::FitArgs;
use crate::fit_checks::{check_fit_memory, max_side, scaled_note};
use crate::render::read_sites_file;

/// What every image is fitted with, from the flags.
fn fit_options(args: &FitArgs) -> Result<FitOptions> {
    let config = args.config()?;
    let init = if args.init_per_pixel {
        Initialisation::PerPixel
    } else if let Some(path) = &args.init_from_sites {
        Initialisation::FromSites(read_sites_file(path)?)
    } else {
        Initialisation::GradientWeighted {
            sites: config.default_sites,
            alpha: args.init_gradient_alpha,
        }
    };
    Ok(FitOptions {
        config,
        init,
        lr_scale: args.lr,
        ssim_weight: args.ssim_weight,
        seed: args.seed,
        log_every: args.log_freq,
        fixed_rates: args.no_budget,
        replay: !args.no_replay,
        backward: args.backward_strategy,
    })
}

/// `sad fit`: one image, or a data set ([`crate::fit_many`]).
pub fn fit_command(args: FitArgs, device: &Device, description: &str) -> Result<()> {
    let options = checked_options(&args)?;
    if args.is_dataset() {
        let devices = vec![(device.clone(), description.to_owned())];
        return crate::fit_many::fit_many_command(&args, options, devices);
    }
    fit_one_command(&args, options, device, description)
}

/// `sad fit --devices LIST`: a data set spread over the devices `list` names, each started
/// here (no other device is).
pub fn fit_on_devices(args: FitArgs, list: &str) -> Result<()> {
    let options = checked_options(&args)?;
    let devices = select_devices(list).map_err(anyhow::Error::msg)?;
    crate::startup::mark_device_ready();
    crate::fit_many::fit_many_command(&args, options, devices)
}

/// The fit options from the flags, once the outputs' folder is known to be writable (a
/// read-only folder is found now, not after training).
fn checked_options(args: &FitArgs) -> Result<FitOptions> {
    let options = fit_options(args)?;
    check_writable_dir(&args.out_dir)
        .with_context(|| format!("{}: cannot write the outputs there", args.out_dir.display()))?;
    Ok(options)
}

/// [`ImageError::TooLarge`] as `sad fit` words it: what it reads, and what it scales.
pub fn too_large_for_fit(error: ImageError, max_dim: usize) -> anyhow::Error {
    match error {
        ImageError::TooLarge {
            path,
            width,
            height,
            max,
        } => anyhow::anyhow!(
            "{path}: {width}×{height} is larger than {max} on a side, the largest photo sad fit \
             reads (it scales photos down to MAX_DIM = {max_dim}; --max-dim raises both)"
        ),
        other => other.into(),
    }
}

/// Trains one image, writes `<name>.png` and its sites file as a unit, and prints PSNR
/// last.
fn fit_one_command(
    args: &FitArgs,
    options: FitOptions,
    device: &Device,
    description: &str,
) -> Result<()> {
    let image_path = &args.images[0];
    let stem = burn_sad::sad::dataset::output_stem(image_path)?;
    // Read once; the header's size is checked against the memory before anything is decoded.
    let max_dim = options.config.effective_max_dim();
    let file = ImageFile::open(image_path, max_side(&options))
        .map_err(|error| too_large_for_fit(error, max_dim))?;
    check_fit_memory(&file, max_dim, device)?;
    let size = file.size_within(max_dim);
    let path = image_path.display().to_string();
    if size != (file.width, file.height) {
        eprintln!(
            "{}",
            scaled_note(&path, (file.width, file.height), size, max_dim)
        );
    }
    let by_alpha = args.mask.as_deref() == Some("alpha");
    let mask_file = match args.mask.as_deref() {
        Some(mask) if !by_alpha => Some(ImageFile::open(mask, MAX_SIDE)?),
        _ => None,
    };
    let (pixels, alpha) = file.decode_with_alpha_within(max_dim, by_alpha)?;
    if by_alpha && alpha.is_none() {
        eprintln!("note: {path} has no alpha channel; --mask alpha keeps every pixel");
    }
    let mask = match mask_file {
        Some(file) => Some(file.decode_mask(size)?),
        None => alpha,
    };
    let mut target = TargetImage::from_planar(pixels);
    if let Some(mask) = mask {
        target = target
            .with_mask(mask)
            .with_context(|| format!("--mask {}", args.mask.as_deref().unwrap_or_default()))?;
    }
    let iters = options.config.default_iters;
    let mut trainer = Trainer::new(target.clone(), options, device)?;
    let schedule = *trainer.schedule();
    let mask = match target.mask {
        Some(_) => format!(
            "{} of {} pixels",
            target.counted_pixels(),
            target.width * target.height
        ),
        None => "no".into(),
    };
    println!(
        "Training | device={description} | image={}x{} | sites={} | capacity={} | iters={iters} | mask={mask}",
        target.width, target.height, schedule.initial_sites, schedule.capacity
    );
    match trainer.budget() {
        Some(budget) => println!(
            "Budget | target-bpp={:.3} | target sites={} | schedule ends at {} | prune {:.4}/event | densify {:.4}/event",
            budget.target_sites as f64 * burn_sad::sad::fit::BITS_PER_SITE
                / (target.width * target.height) as f64,
            budget.target_sites,
            budget.final_sites,
            budget.prune_rate,
            budget.densify_rate
        ),
        None => println!(
            "Budget | off | prune {:.4}/event | densify {:.4}/event",
            schedule.prune_rate, schedule.densify_rate
        ),
    }
    if let Some(budget) = trainer.budget()
        && budget.target_sites > schedule.capacity
    {
        let reachable =
            burn_sad::sad::fit::bits_per_pixel(schedule.capacity, target.width, target.height);
        eprintln!(
            "warning: the budget asks for {} sites but the site buffer holds {}, so the fit ends \
             near {reachable:.1} bpp; --max-sites {} (and --sites) raise the cap",
            budget.target_sites, schedule.capacity, budget.target_sites
        );
    } else if let Some(budget) = trainer.budget()
        && !budget.reaches_target()
    {
        let reached =
            burn_sad::sad::fit::bits_per_pixel(budget.final_sites, target.width, target.height);
        let window = if schedule.prune_start >= iters {
            format!(
                "the run ends at iteration {iters}, before pruning starts at {}",
                schedule.prune_start
            )
        } else {
            format!(
                "pruning runs from iteration {} to {}",
                schedule.prune_start,
                schedule.prune_end.min(iters)
            )
        };
        eprintln!(
            "warning: no densify and prune rates make this schedule end at the {} sites the \
             budget asks for: it ends at {} ({reached:.1} bpp), as {window} (--iters, \
             --prune-start, --prune-end)",
            budget.target_sites, budget.final_sites
        );
    }
    let bar = ProgressBar::new(iters as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:30} {pos}/{len} it | {msg} | {per_sec} | {elapsed_precise}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    // Kernel compilation happens here, before the clock starts (as the reference's timings
    // exclude its module loading).
    let warm_up = Instant::now();
    trainer.warm_up();
    let warm_up = warm_up.elapsed().as_secs_f64();
    println!("Kernel warm-up: {warm_up:.2} s (compilation, or loading from the kernel cache)");
    println!(
        "Start-up: {:.2} s from process start to the loop (device {:.2} s, kernel warm-up {warm_up:.2} s)",
        crate::startup::since_start(),
        crate::startup::device_seconds()
    );
    if args.profile {
        trainer.profile();
    }
    let mut last_psnr = None;
    let result = trainer.run(|progress: &FitProgress| {
        if let Some(psnr) = progress.psnr {
            last_psnr = Some(psnr);
            // One line per measurement, numbered from 0 and laid out as the reference's log,
            // so that two fits' curves can be set side by side.
            let seconds = progress.elapsed.as_secs_f64();
            bar.suspend(|| {
                println!(
                    "Iter {:>4} | PSNR: {psnr:.2} dB | Active: {} | {:.1} it/s | {seconds:.2} s",
                    progress.iteration - 1,
                    progress.active_sites,
                    progress.iteration as f64 / seconds.max(1e-9)
                )
            });
        }
        if progress.psnr.is_some() || progress.iteration == progress.iters {
            let psnr = last_psnr.map_or("--".to_owned(), |p| format!("{p:.2} dB"));
            bar.set_message(format!("PSNR {psnr} | active {}", progress.active_sites));
        }
        bar.set_position(progress.iteration as u64);
    });
    bar.finish_and_clear();
    if let Some(times) = &result.phase_times {
        print!("Phase times:\n{times}");
    }
    let format = SitesFormat::from(args.format);
    let png = args.out_dir.join(format!("{stem}.png"));
    let sites = args.out_dir.join(format.file_name(&stem));
    // Both files or neither: each goes to a temporary name first, then both are renamed.
    let png_bytes = encode_png(result.image.clone().unsqueeze::<4>())?;
    let sites_bytes = format.to_bytes(&result.sites)?;
    write_all_atomically(&[(&png, &png_bytes), (&sites, &sites_bytes)])
        .with_context(|| format!("writing the outputs to {}", args.out_dir.display()))?;
    let wall = crate::startup::since_start();
    println!("Saved: {}", png.display());
    println!("Saved: {}", sites.display());
    println!(
        "Sites file: {} bytes, {:.4} bpp on disk",
        sites_bytes.len(),
        sites_bytes.len() as f64 * 8.0 / (result.sites.width * result.sites.height) as f64
    );
    // What `sad render` of the saved file gives: the bytes read back, lists built afresh.
    let saved = parse_sites_bytes(&sites_bytes)?;
    let over = match target.mask {
        Some(_) => ", over the mask's pixels",
        None => "",
    };
    println!(
        "Saved sites render at {:.4} dB (as sad render renders the file{over})",
        saved_psnr(&saved, &target, device)?
    );
    let seconds = result.training_time.as_secs_f64();
    println!("SSIM: {:.4}", result.ssim);
    println!(
        "Sites: {} | bpp: {:.4}",
        result.sites.sites.len(),
        result.bits_per_pixel
    );
    println!(
        "Training time: {seconds:.2} s ({:.1} it/s)",
        result.iterations as f64 / seconds.max(1e-9)
    );
    println!("Wall time: {wall:.2} s from process start to the outputs written");
    println!("PSNR: {:.4} dB", result.psnr);
    Ok(())
}
