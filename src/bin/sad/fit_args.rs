//! `sad fit`'s options: every key of `training_config.json` as the reference trainer's flag.

use std::path::PathBuf;

use anyhow::{Result, bail};
use burn_sad::sad::fit::{DEFAULT_LOG_EVERY, TrainingConfig};
use clap::Args;

/// `sad fit` options. Every key of `training_config.json` can be overridden with the reference
/// trainer's flag name.
#[derive(Args)]
pub struct FitArgs {
    /// The image to fit (PNG or JPEG).
    pub image: PathBuf,
    /// A `training_config.json` (default: the reference's shipped values).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Bits-per-pixel budget at 128 bits per site, above 0 and at most 256: the budget solver
    /// picks the prune and densify rates that end the run at that many sites (default 1,
    /// DEFAULT_TARGET_BPP).
    #[arg(long, allow_negative_numbers = true)]
    pub target_bpp: Option<f64>,
    /// Train with the configured densify/prune percentiles instead of solving for a budget.
    #[arg(long, conflicts_with = "target_bpp")]
    pub no_budget: bool,
    /// Training iterations (default 4000, DEFAULT_ITERS).
    #[arg(long, allow_negative_numbers = true)]
    pub iters: Option<usize>,
    /// Output directory, created if missing; checked for writing before training.
    #[arg(long, default_value = "results")]
    pub out_dir: PathBuf,
    /// Weight w of an SSIM term: loss = SSE + w·W·H·(1 − SSIM), exact 11×11 Gaussian SSIM.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub ssim_weight: f32,
    /// Shifts the initial R2 sequence and the random candidate lists (0: the reference's).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub seed: u64,
    /// Iterations between PSNR measurements (each waits for the device), as the reference's.
    #[arg(long, default_value_t = DEFAULT_LOG_EVERY, allow_negative_numbers = true)]
    pub log_freq: usize,
    /// Global learning-rate multiplier.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub lr: f32,
    /// Print where the training time went, per phase (waits for the device after each).
    #[arg(long)]
    pub profile: bool,
    /// Sites placed at the start, where the photo has edges (default 128 000, DEFAULT_SITES).
    #[arg(long, allow_negative_numbers = true)]
    pub sites: Option<usize>,
    /// Most sites the run can hold; densifying stops there and a larger budget is capped
    /// (default 128 000, DEFAULT_MAX_SITES).
    #[arg(long, allow_negative_numbers = true)]
    pub max_sites: Option<usize>,
    /// Start with one site per pixel.
    #[arg(long, conflicts_with = "init_from_sites")]
    pub init_per_pixel: bool,
    /// Start from a sites file (positions rescaled if it was fitted at another size).
    #[arg(long)]
    pub init_from_sites: Option<PathBuf>,
    /// Multiplier of the gradient-weighted initialisation's 0.01 Sobel threshold.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub init_gradient_alpha: f32,
    /// First iteration that splits sites (default 20, DENSIFY_START).
    #[arg(long, allow_negative_numbers = true)]
    pub densify_start: Option<usize>,
    /// Last iteration that splits sites (default 3000, DENSIFY_END).
    #[arg(long, allow_negative_numbers = true)]
    pub densify_end: Option<usize>,
    /// Iterations between splits (default 20, DENSIFY_FREQ).
    #[arg(long, allow_negative_numbers = true)]
    pub densify_freq: Option<usize>,
    /// Share of the live sites split per densify event (default 0.01, DENSIFY_PERCENTILE; the
    /// budget solver rescales it unless --no-budget).
    #[arg(long, allow_negative_numbers = true)]
    pub densify_percentile: Option<f32>,
    /// Exponent of the error term in the split score (default 0.7, DENSIFY_SCORE_ALPHA).
    #[arg(long, allow_negative_numbers = true)]
    pub densify_score_alpha: Option<f32>,
    /// Prune while densifying; false starts pruning after DENSIFY_END (default true,
    /// PRUNE_DURING_DENSIFY).
    #[arg(long, allow_negative_numbers = true)]
    pub prune_during_densify: Option<bool>,
    /// First iteration that prunes sites (default 100, PRUNE_START).
    #[arg(long, allow_negative_numbers = true)]
    pub prune_start: Option<usize>,
    /// Pruning stops before this iteration; 0: one before the last (default 3000, PRUNE_END).
    #[arg(long, allow_negative_numbers = true)]
    pub prune_end: Option<usize>,
    /// Iterations between prune events (default 40, PRUNE_FREQ).
    #[arg(long, allow_negative_numbers = true)]
    pub prune_freq: Option<usize>,
    /// Share of the live sites pruned per event, the least useful first (default 0.033,
    /// PRUNE_PERCENTILE; the budget solver rescales it unless --no-budget).
    #[arg(long, allow_negative_numbers = true)]
    pub prune_percentile: Option<f32>,
    /// Iterations between candidate-list updates (default 8, CAND_UPDATE_FREQ).
    #[arg(long, allow_negative_numbers = true)]
    pub cand_freq: Option<usize>,
    /// Propagation passes per candidate update (default 1, CAND_UPDATE_PASSES).
    #[arg(long, allow_negative_numbers = true)]
    pub cand_passes: Option<usize>,
    /// Pixels per candidate cell along each axis (default 1, CAND_DOWNSCALE).
    #[arg(long, allow_negative_numbers = true)]
    pub cand_downscale: Option<usize>,
    /// Accepted for the reference's configs; not used by its CUDA trainer either (default 64,
    /// CAND_RADIUS_SCALE).
    #[arg(long, allow_negative_numbers = true)]
    pub cand_radius_scale: Option<f32>,
    /// Random radius probes per cell; only 0 is supported (default 0, CAND_RADIUS_PROBES).
    #[arg(long, allow_negative_numbers = true)]
    pub cand_radius_probes: Option<usize>,
    /// Random sites each cell tries per propagation pass (default 4, CAND_INJECT_COUNT).
    #[arg(long, alias = "cand-inject-count")]
    pub cand_inject: Option<usize>,
    /// Half-width, in curve positions, of the Hilbert-curve probes (default 32,
    /// CAND_HILBERT_WINDOW).
    #[arg(long, allow_negative_numbers = true)]
    pub cand_hilbert_window: Option<usize>,
    /// Hilbert-curve probes per cell and pass near its best site (default 1,
    /// CAND_HILBERT_PROBES).
    #[arg(long, allow_negative_numbers = true)]
    pub cand_hilbert_probes: Option<usize>,
    /// Learning rate of positions (default 0.025, LR_POS_BASE).
    #[arg(long, allow_negative_numbers = true)]
    pub lr_pos: Option<f32>,
    /// Learning rate of log τ, the sharpness (default 0.01, LR_TAU_BASE).
    #[arg(long, allow_negative_numbers = true)]
    pub lr_tau: Option<f32>,
    /// Learning rate of radii (default 0.01, LR_RADIUS_BASE).
    #[arg(long, allow_negative_numbers = true)]
    pub lr_radius: Option<f32>,
    /// Learning rate of colours (default 0.01, LR_COLOR_BASE).
    #[arg(long, allow_negative_numbers = true)]
    pub lr_color: Option<f32>,
    /// Learning rate of anisotropy directions (default 0.0025, LR_DIR_BASE).
    #[arg(long, allow_negative_numbers = true)]
    pub lr_dir: Option<f32>,
    /// Learning rate of log anisotropy (default 0.025, LR_ANISO_BASE).
    #[arg(long, allow_negative_numbers = true)]
    pub lr_aniso: Option<f32>,
    /// Initial log τ of every site (default 5, INIT_LOG_TAU).
    #[arg(long, allow_negative_numbers = true)]
    pub init_log_tau: Option<f32>,
    /// Initial radius of every site in pixels (default 4, INIT_RADIUS).
    #[arg(long, allow_negative_numbers = true)]
    pub init_radius: Option<f32>,
    /// Adam's first-moment decay (default 0.9, BETA1).
    #[arg(long, allow_negative_numbers = true)]
    pub beta1: Option<f32>,
    /// Adam's second-moment decay (default 0.999, BETA2).
    #[arg(long, allow_negative_numbers = true)]
    pub beta2: Option<f32>,
    /// Adam's ε (default 1e-8, EPS).
    #[arg(long, allow_negative_numbers = true)]
    pub eps: Option<f32>,
    /// Largest width or height of the photo, read from its header before decoding (default
    /// 12 000, MAX_DIM).
    #[arg(long, allow_negative_numbers = true)]
    pub max_dim: Option<usize>,
}

impl FitArgs {
    /// The config file (or the defaults) with every flag given applied over it.
    pub fn config(&self) -> Result<TrainingConfig> {
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
