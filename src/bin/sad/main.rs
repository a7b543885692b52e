//! `sad`: the burn-sad command line.

mod checks;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use burn_sad::device::{DeviceChoice, select_device};
use burn_sad::image::{
    check_writable_dir, encode_png, load_rgb, load_rgb_within, save_png, write_all_atomically,
};
use burn_sad::kernel_cache::{KernelCache, enable_kernel_cache};
use burn_sad::sad::fit::{
    FitOptions, FitProgress, Initialisation, TargetImage, Trainer, TrainingConfig,
};
use burn_sad::sad::{
    MAX_PASSES, RenderOnlyOptions, psnr, read_sites, render_sites_with_progress, sites_to_string,
};
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
    /// Print the SSIM of two images of the same size (RGB, values / 255; at most 16 384 pixels
    /// on a side).
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
        /// Output PNG (a new name: not the sites file).
        #[arg(short, long)]
        out: PathBuf,
        /// Output width, at most 16 384 (default: the file's; alone, the height follows the
        /// aspect ratio).
        #[arg(long)]
        width: Option<usize>,
        /// Output height, at most 16 384 (default: the file's; alone, the width follows the
        /// aspect ratio).
        #[arg(long)]
        height: Option<usize>,
        /// Image to compare with: prints `PSNR: <value> dB` as the last line.
        #[arg(long)]
        target: Option<PathBuf>,
        /// At another size, scale radii with the image too (keeps the diagram's shape; the
        /// reference scales positions only).
        #[arg(long)]
        scale_radius: bool,
        /// Candidate propagation passes after the jump flood (0 to 1024).
        #[arg(long, default_value_t = 16,
              value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_PASSES)))]
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
            let device_on_host = description.contains("CPU");
            render_command(
                &sites,
                &out,
                target.as_deref(),
                &options,
                &device,
                device_on_host,
            )?;
        }
        Command::Ssim {
            a,
            b,
            padding,
            window,
            sigma,
            ms,
        } => {
            for path in [&a, &b] {
                let (width, height) = ::image::image_dimensions(path).unwrap_or((0, 0));
                checks::check_memory(
                    "SSIM",
                    u64::from(width) * u64::from(height),
                    checks::SSIM_HOST_BYTES_PER_PIXEL,
                    checks::SSIM_DEVICE_BYTES_PER_PIXEL,
                    description.contains("CPU"),
                )?;
            }
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
    device_on_host: bool,
) -> Result<()> {
    checks::check_png_output(out, sites)?;
    let table = read_sites(sites).map_err(|error| match error {
        burn_sad::sad::SitesFileError::Io(_) => anyhow::Error::new(error),
        other => anyhow::Error::new(other).context(sites.display().to_string()),
    })?;
    let (width, height) = options.size_for(&table)?;
    checks::check_memory(
        &format!("a {width}×{height} render"),
        (width as u64) * (height as u64),
        checks::RENDER_HOST_BYTES_PER_PIXEL,
        checks::RENDER_DEVICE_BYTES_PER_PIXEL,
        device_on_host,
    )?;
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
    /// Bits-per-pixel budget at 128 bits per site, above 0 and at most 256: the budget solver
    /// picks the prune and densify rates that end the run at that many sites (default 1,
    /// DEFAULT_TARGET_BPP).
    #[arg(long, allow_negative_numbers = true)]
    target_bpp: Option<f64>,
    /// Train with the configured densify/prune percentiles instead of solving for a budget.
    #[arg(long, conflicts_with = "target_bpp")]
    no_budget: bool,
    /// Training iterations (default 4000, DEFAULT_ITERS).
    #[arg(long)]
    iters: Option<usize>,
    /// Output directory, created if missing; checked for writing before training.
    #[arg(long, default_value = "results")]
    out_dir: PathBuf,
    /// Weight w of an SSIM term: loss = SSE + w·W·H·(1 − SSIM), exact 11×11 Gaussian SSIM.
    #[arg(long, default_value_t = 0.0)]
    ssim_weight: f32,
    /// Shifts the initial R2 sequence and the random candidate lists (0: the reference's).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Iterations between PSNR measurements (each waits for the device).
    #[arg(long, default_value_t = 100)]
    log_freq: usize,
    /// Global learning-rate multiplier.
    #[arg(long, default_value_t = 1.0)]
    lr: f32,
    /// Print where the training time went, per phase (waits for the device after each).
    #[arg(long)]
    profile: bool,
    /// Sites placed at the start, where the photo has edges (default 128 000, DEFAULT_SITES).
    #[arg(long)]
    sites: Option<usize>,
    /// Most sites the run can hold; densifying stops there and a larger budget is capped
    /// (default 128 000, DEFAULT_MAX_SITES).
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
    /// First iteration that splits sites (default 20, DENSIFY_START).
    #[arg(long)]
    densify_start: Option<usize>,
    /// Last iteration that splits sites (default 3000, DENSIFY_END).
    #[arg(long)]
    densify_end: Option<usize>,
    /// Iterations between splits (default 20, DENSIFY_FREQ).
    #[arg(long)]
    densify_freq: Option<usize>,
    /// Share of the live sites split per densify event (default 0.01, DENSIFY_PERCENTILE; the
    /// budget solver rescales it unless --no-budget).
    #[arg(long)]
    densify_percentile: Option<f32>,
    /// Exponent of the error term in the split score (default 0.7, DENSIFY_SCORE_ALPHA).
    #[arg(long)]
    densify_score_alpha: Option<f32>,
    /// Prune while densifying; false starts pruning after DENSIFY_END (default true,
    /// PRUNE_DURING_DENSIFY).
    #[arg(long)]
    prune_during_densify: Option<bool>,
    /// First iteration that prunes sites (default 100, PRUNE_START).
    #[arg(long)]
    prune_start: Option<usize>,
    /// Pruning stops before this iteration; 0: one before the last (default 3000, PRUNE_END).
    #[arg(long)]
    prune_end: Option<usize>,
    /// Iterations between prune events (default 40, PRUNE_FREQ).
    #[arg(long)]
    prune_freq: Option<usize>,
    /// Share of the live sites pruned per event, the least useful first (default 0.033,
    /// PRUNE_PERCENTILE; the budget solver rescales it unless --no-budget).
    #[arg(long)]
    prune_percentile: Option<f32>,
    /// Iterations between candidate-list updates (default 8, CAND_UPDATE_FREQ).
    #[arg(long)]
    cand_freq: Option<usize>,
    /// Propagation passes per candidate update (default 1, CAND_UPDATE_PASSES).
    #[arg(long)]
    cand_passes: Option<usize>,
    /// Pixels per candidate cell along each axis (default 1, CAND_DOWNSCALE).
    #[arg(long)]
    cand_downscale: Option<usize>,
    /// Accepted for the reference's configs; not used by its CUDA trainer either (default 64,
    /// CAND_RADIUS_SCALE).
    #[arg(long)]
    cand_radius_scale: Option<f32>,
    /// Random radius probes per cell; only 0 is supported (default 0, CAND_RADIUS_PROBES).
    #[arg(long)]
    cand_radius_probes: Option<usize>,
    /// Random sites each cell tries per propagation pass (default 4, CAND_INJECT_COUNT).
    #[arg(long, alias = "cand-inject-count")]
    cand_inject: Option<usize>,
    /// Half-width, in curve positions, of the Hilbert-curve probes (default 32,
    /// CAND_HILBERT_WINDOW).
    #[arg(long)]
    cand_hilbert_window: Option<usize>,
    /// Hilbert-curve probes per cell and pass near its best site (default 1,
    /// CAND_HILBERT_PROBES).
    #[arg(long)]
    cand_hilbert_probes: Option<usize>,
    /// Learning rate of positions (default 0.025, LR_POS_BASE).
    #[arg(long)]
    lr_pos: Option<f32>,
    /// Learning rate of log τ, the sharpness (default 0.01, LR_TAU_BASE).
    #[arg(long)]
    lr_tau: Option<f32>,
    /// Learning rate of radii (default 0.01, LR_RADIUS_BASE).
    #[arg(long)]
    lr_radius: Option<f32>,
    /// Learning rate of colours (default 0.01, LR_COLOR_BASE).
    #[arg(long)]
    lr_color: Option<f32>,
    /// Learning rate of anisotropy directions (default 0.0025, LR_DIR_BASE).
    #[arg(long)]
    lr_dir: Option<f32>,
    /// Learning rate of log anisotropy (default 0.025, LR_ANISO_BASE).
    #[arg(long)]
    lr_aniso: Option<f32>,
    /// Initial log τ of every site (default 5, INIT_LOG_TAU).
    #[arg(long)]
    init_log_tau: Option<f32>,
    /// Initial radius of every site in pixels (default 4, INIT_RADIUS).
    #[arg(long)]
    init_radius: Option<f32>,
    /// Adam's first-moment decay (default 0.9, BETA1).
    #[arg(long)]
    beta1: Option<f32>,
    /// Adam's second-moment decay (default 0.999, BETA2).
    #[arg(long)]
    beta2: Option<f32>,
    /// Adam's ε (default 1e-8, EPS).
    #[arg(long)]
    eps: Option<f32>,
    /// Largest width or height of the photo, read from its header before decoding (default
    /// 12 000, MAX_DIM).
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
        // Flag name and config key of every flag given, so that an error names what was typed.
        let mut given: Vec<(String, String)> = Vec::new();
        macro_rules! apply {
            ($($flag:ident => $key:ident),* $(,)?) => {
                $(if let Some(value) = self.$flag {
                    config.$key = value;
                    given.push((
                        format!("--{}", stringify!($flag).replace('_', "-")),
                        stringify!($key).to_uppercase(),
                    ));
                })*
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
        config.validate().map_err(|error| {
            let message = error.to_string();
            match given.iter().find(|(_, key)| message.contains(key.as_str())) {
                Some((flag, key)) => anyhow::anyhow!("{}", message.replace(key.as_str(), flag)),
                None => error.into(),
            }
        })?;
        Ok(config)
    }
}

fn fit_command(args: FitArgs, device: &burn::tensor::Device, description: &str) -> Result<()> {
    let config = args.config()?;
    // Where the outputs go, before any work: a read-only folder is found now, not after training.
    check_writable_dir(&args.out_dir)
        .with_context(|| format!("{}: cannot write the outputs there", args.out_dir.display()))?;
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
    let max_side = config.max_dim.min(65_535);
    if let Ok((width, height)) = ::image::image_dimensions(&args.image)
        && (width as usize) <= max_side
        && (height as usize) <= max_side
    {
        checks::check_memory(
            &format!("fitting a {width}×{height} image"),
            u64::from(width) * u64::from(height),
            checks::FIT_HOST_BYTES_PER_PIXEL,
            checks::FIT_DEVICE_BYTES_PER_PIXEL,
            description.contains("CPU"),
        )?;
    }
    let image = load_rgb_within(&args.image, max_side, device).map_err(|error| match error {
        burn_sad::image::ImageError::TooLarge {
            path,
            width,
            height,
            max,
        } => anyhow::anyhow!(
            "{path}: {width}×{height} is larger than MAX_DIM = {max} (--max-dim raises it)"
        ),
        other => other.into(),
    })?;
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
    // Both files or neither: each goes to a temporary name first, then both are renamed.
    let png_bytes = encode_png(result.image.clone().unsqueeze::<4>())?;
    let sites_text = sites_to_string(&result.sites);
    write_all_atomically(&[(&png, &png_bytes), (&sites, sites_text.as_bytes())])
        .with_context(|| format!("writing the outputs to {}", args.out_dir.display()))?;
    println!("Saved: {}", png.display());
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
