//! `sad`: the burn-sad command line.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use burn_sad::device::{DeviceChoice, select_device};
use burn_sad::image::{load_rgb, save_png};
use burn_sad::kernel_cache::{KernelCache, enable_kernel_cache};
use burn_sad::sad::fit::{
    FitOptions, FitProgress, Initialisation, TargetImage, Trainer, TrainingConfig,
};
use burn_sad::sad::{RenderOnlyOptions, psnr, read_sites, render_sites_with_progress, write_sites};
use burn_sad::ssim::{MsSsimOptions, Padding, SsimOptions, try_fused_ssim, try_ms_ssim};
use clap::{Args, Parser, Subcommand};
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
    /// Fit an image with SAD (the reference trainer's recipe); writes OUT_DIR/<name>.png and
    /// OUT_DIR/<name>_sites.txt.
    Fit(Box<FitArgs>),
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
    // Parsed first: a usage error exits from inside clap, before anything is made to clean up.
    let cli = Cli::parse();
    let runtime_dir = private_runtime_dir();
    let code = match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    };
    if let Some(dir) = runtime_dir {
        let _ = std::fs::remove_dir(dir);
    }
    code
}

/// Without `XDG_RUNTIME_DIR` (containers, CI jobs, ssh sessions without a login manager) Mesa's
/// Vulkan drivers print a dozen "XDG_RUNTIME_DIR is invalid or not set" errors, though nothing
/// here needs the directory. Gives the process a private empty one (mode 0700) instead, which
/// `main` removes at the end; returns it if it made one.
#[cfg(unix)]
fn private_runtime_dir() -> Option<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    if std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|dir| !dir.is_empty()) {
        return None;
    }
    let dir = std::env::temp_dir().join(format!("burn-sad-runtime-{}", std::process::id()));
    std::fs::DirBuilder::new().mode(0o700).create(&dir).ok()?;
    // SAFETY: called at the start of `main`, before any other thread exists.
    unsafe { std::env::set_var("XDG_RUNTIME_DIR", &dir) };
    Some(dir)
}

/// Only Mesa on Unix asks for `XDG_RUNTIME_DIR`.
#[cfg(not(unix))]
fn private_runtime_dir() -> Option<PathBuf> {
    None
}

fn run(cli: Cli) -> Result<()> {
    // Before the first device: compiled kernels then come from disk after the first run.
    if let KernelCache::Failed(why) = enable_kernel_cache() {
        eprintln!("warning: kernels are compiled on every run: {why}");
    }
    let choice = match cli.device {
        Some(choice) => choice,
        None => DeviceChoice::from_env().map_err(anyhow::Error::msg)?,
    };
    let (device, description) = select_device(choice).map_err(anyhow::Error::msg)?;
    match cli.command {
        Command::Fit(args) => fit_command(*args, &device, &description)?,
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
        "Kernel warm-up: {:.1} ms (compilation, or loading from the kernel cache)",
        rendered.warm_up_ms
    );
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

/// `sad fit` options. Every key of `training_config.json` can be overridden with the reference
/// trainer's flag name.
#[derive(Args)]
struct FitArgs {
    /// The image to fit (PNG or JPEG).
    image: PathBuf,
    /// A `training_config.json` (default: the reference's shipped values).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Bits-per-pixel budget at 128 bits per site (> 0; DEFAULT_TARGET_BPP).
    #[arg(long, allow_negative_numbers = true)]
    target_bpp: Option<f64>,
    /// Train with the configured densify/prune percentiles instead of solving for a budget.
    #[arg(long, conflicts_with = "target_bpp")]
    no_budget: bool,
    /// Iterations (DEFAULT_ITERS).
    #[arg(long)]
    iters: Option<usize>,
    /// Output directory.
    #[arg(long, default_value = "results")]
    out_dir: PathBuf,
    /// Weight w of an SSIM term: loss = SSE + w·W·H·(1 − SSIM), exact 11×11 Gaussian SSIM.
    #[arg(long, default_value_t = 0.0)]
    ssim_weight: f32,
    /// Shifts the initial R2 sequence and the random candidate lists (0: the reference's).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Iterations between PSNR measurements.
    #[arg(long, default_value_t = 100)]
    log_freq: usize,
    /// Global learning-rate multiplier.
    #[arg(long, default_value_t = 1.0)]
    lr: f32,
    /// Print where the training time went, per phase (waits for the device after each).
    #[arg(long)]
    profile: bool,
    /// Initial sites of the gradient-weighted initialisation (DEFAULT_SITES).
    #[arg(long)]
    sites: Option<usize>,
    /// Site-buffer capacity (DEFAULT_MAX_SITES).
    #[arg(long)]
    max_sites: Option<usize>,
    /// Start with one site per pixel.
    #[arg(long, conflicts_with = "init_from_sites")]
    init_per_pixel: bool,
    /// Start from a sites file (positions rescaled if it was fitted at another size).
    #[arg(long)]
    init_from_sites: Option<PathBuf>,
    /// Multiplier of the gradient-weighted initialisation's 0.01 Sobel threshold.
    #[arg(long, default_value_t = 1.0)]
    init_gradient_alpha: f32,
    /// DENSIFY_START.
    #[arg(long)]
    densify_start: Option<usize>,
    /// DENSIFY_END.
    #[arg(long)]
    densify_end: Option<usize>,
    /// DENSIFY_FREQ.
    #[arg(long)]
    densify_freq: Option<usize>,
    /// DENSIFY_PERCENTILE (replaced by the budget solver unless --no-budget).
    #[arg(long)]
    densify_percentile: Option<f32>,
    /// DENSIFY_SCORE_ALPHA.
    #[arg(long)]
    densify_score_alpha: Option<f32>,
    /// PRUNE_DURING_DENSIFY.
    #[arg(long)]
    prune_during_densify: Option<bool>,
    /// PRUNE_START.
    #[arg(long)]
    prune_start: Option<usize>,
    /// PRUNE_END.
    #[arg(long)]
    prune_end: Option<usize>,
    /// PRUNE_FREQ.
    #[arg(long)]
    prune_freq: Option<usize>,
    /// PRUNE_PERCENTILE (replaced by the budget solver unless --no-budget).
    #[arg(long)]
    prune_percentile: Option<f32>,
    /// CAND_UPDATE_FREQ.
    #[arg(long)]
    cand_freq: Option<usize>,
    /// CAND_UPDATE_PASSES.
    #[arg(long)]
    cand_passes: Option<usize>,
    /// CAND_DOWNSCALE.
    #[arg(long)]
    cand_downscale: Option<usize>,
    /// CAND_RADIUS_SCALE.
    #[arg(long)]
    cand_radius_scale: Option<f32>,
    /// CAND_RADIUS_PROBES (only 0 is supported).
    #[arg(long)]
    cand_radius_probes: Option<usize>,
    /// CAND_INJECT_COUNT.
    #[arg(long, alias = "cand-inject-count")]
    cand_inject: Option<usize>,
    /// CAND_HILBERT_WINDOW.
    #[arg(long)]
    cand_hilbert_window: Option<usize>,
    /// CAND_HILBERT_PROBES.
    #[arg(long)]
    cand_hilbert_probes: Option<usize>,
    /// LR_POS_BASE.
    #[arg(long)]
    lr_pos: Option<f32>,
    /// LR_TAU_BASE.
    #[arg(long)]
    lr_tau: Option<f32>,
    /// LR_RADIUS_BASE.
    #[arg(long)]
    lr_radius: Option<f32>,
    /// LR_COLOR_BASE.
    #[arg(long)]
    lr_color: Option<f32>,
    /// LR_DIR_BASE.
    #[arg(long)]
    lr_dir: Option<f32>,
    /// LR_ANISO_BASE.
    #[arg(long)]
    lr_aniso: Option<f32>,
    /// INIT_LOG_TAU.
    #[arg(long)]
    init_log_tau: Option<f32>,
    /// INIT_RADIUS.
    #[arg(long)]
    init_radius: Option<f32>,
    /// BETA1.
    #[arg(long)]
    beta1: Option<f32>,
    /// BETA2.
    #[arg(long)]
    beta2: Option<f32>,
    /// EPS.
    #[arg(long)]
    eps: Option<f32>,
    /// MAX_DIM.
    #[arg(long)]
    max_dim: Option<usize>,
}

impl FitArgs {
    /// The config file (or the defaults) with every flag given applied over it.
    fn config(&self) -> Result<TrainingConfig> {
        let mut config = match &self.config {
            Some(path) => TrainingConfig::load(path)?,
            None => TrainingConfig::default(),
        };
        macro_rules! apply {
            ($($flag:ident => $key:ident),* $(,)?) => {
                $(if let Some(value) = self.$flag { config.$key = value; })*
            };
        }
        apply!(
            iters => default_iters,
            sites => default_sites,
            max_sites => default_max_sites,
            target_bpp => default_target_bpp,
            densify_start => densify_start,
            densify_end => densify_end,
            densify_freq => densify_freq,
            densify_percentile => densify_percentile,
            densify_score_alpha => densify_score_alpha,
            prune_during_densify => prune_during_densify,
            prune_start => prune_start,
            prune_end => prune_end,
            prune_freq => prune_freq,
            prune_percentile => prune_percentile,
            cand_freq => cand_update_freq,
            cand_passes => cand_update_passes,
            cand_downscale => cand_downscale,
            cand_radius_scale => cand_radius_scale,
            cand_radius_probes => cand_radius_probes,
            cand_inject => cand_inject_count,
            cand_hilbert_window => cand_hilbert_window,
            cand_hilbert_probes => cand_hilbert_probes,
            lr_pos => lr_pos_base,
            lr_tau => lr_tau_base,
            lr_radius => lr_radius_base,
            lr_color => lr_color_base,
            lr_dir => lr_dir_base,
            lr_aniso => lr_aniso_base,
            init_log_tau => init_log_tau,
            init_radius => init_radius,
            beta1 => beta1,
            beta2 => beta2,
            eps => eps,
            max_dim => max_dim,
        );
        if let Some(bpp) = self.target_bpp
            && !(bpp.is_finite() && bpp > 0.0)
        {
            bail!(
                "--target-bpp must be a positive number, got {bpp} (--no-budget trains without a budget)"
            );
        }
        if self.log_freq == 0 {
            bail!("--log-freq must be at least 1");
        }
        config.validate()?;
        Ok(config)
    }
}

fn fit_command(args: FitArgs, device: &burn::tensor::Device, description: &str) -> Result<()> {
    let config = args.config()?;
    let init = if args.init_per_pixel {
        Initialisation::PerPixel
    } else if let Some(path) = &args.init_from_sites {
        let table = read_sites(path).with_context(|| path.display().to_string())?;
        Initialisation::FromSites(table)
    } else {
        Initialisation::GradientWeighted {
            sites: config.default_sites,
            alpha: args.init_gradient_alpha,
        }
    };
    let stem = args
        .image
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .with_context(|| {
            format!(
                "{}: no file name to name the outputs after",
                args.image.display()
            )
        })?
        .to_owned();
    let image = load_rgb(&args.image, device)?;
    let target = TargetImage::from_tensor(image);
    let iters = config.default_iters;
    let options = FitOptions {
        config,
        init,
        lr_scale: args.lr,
        ssim_weight: args.ssim_weight,
        seed: args.seed,
        log_every: args.log_freq,
        fixed_rates: args.no_budget,
    };
    let mut trainer = Trainer::new(target.clone(), options, device)?;
    let schedule = *trainer.schedule();
    println!(
        "Training | device={description} | image={}x{} | sites={} | capacity={} | iters={iters}",
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
    std::fs::create_dir_all(&args.out_dir)
        .with_context(|| format!("creating {}", args.out_dir.display()))?;
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
    println!(
        "Kernel warm-up: {:.2} s (compilation, or loading from the kernel cache)",
        warm_up.elapsed().as_secs_f64()
    );
    if args.profile {
        trainer.profile();
    }
    let mut last_psnr = None;
    let result = trainer.run(|progress: &FitProgress| {
        if progress.psnr.is_some() {
            last_psnr = progress.psnr;
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
    let png = args.out_dir.join(format!("{stem}.png"));
    let sites = args.out_dir.join(format!("{stem}_sites.txt"));
    save_png(result.image.clone().unsqueeze::<4>(), &png)?;
    println!("Saved: {}", png.display());
    write_sites(&sites, &result.sites)?;
    println!("Saved: {}", sites.display());
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
    println!("PSNR: {:.4} dB", result.psnr);
    Ok(())
}
