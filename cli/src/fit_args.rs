//! `sad fit`'s options: every key of `training_config.json` as the reference trainer's flag.

use std::path::PathBuf;

use anyhow::{Result, bail};
use burn_sad::sad::fit::{DEFAULT_LOG_EVERY, TrainingConfig};
use burn_sad::sad::{BackwardStrategy, SitesFormat};
use clap::Args;

/// `sad fit` options. Every key of `training_config.json` can be overridden with the reference
/// trainer's flag name.
#[derive(Args)]
pub struct FitArgs {
    /// The image to fit (PNG or JPEG); or several images, folders (their PNG and JPEG files) and
    /// quoted globs (`'photos/*.png'`): a data set, fitted one image after another, each row
    /// of `OUT_DIR/results.csv` (and `.jsonl`) written as its image finishes.
    #[arg(required = true, value_name = "IMAGE")]
    pub images: Vec<PathBuf>,
    /// Data sets: fit again the images whose outputs and row are complete (a rerun skips them).
    #[arg(long)]
    pub force: bool,
    /// Data sets: fit only shard I of N of the images (1-based, e.g. `3/8`), chosen by a hash of
    /// each file name, and write `results.shard-I-of-N.csv`; one shard per task of a cluster's
    /// array job, merged with `sad results`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<burn_sad::sad::dataset::Shard>,
    /// Data sets: images fitted at once on the device, each by its own thread (small images
    /// leave a GPU mostly idle one at a time); with more than one, iterations are launched op
    /// by op instead of replayed.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: u16,
    /// Data sets: the devices to spread the images over, each fitting `--jobs` at a time:
    /// `cuda:0,cuda:1` (entries `KIND[:GPU]`, KIND as for --device), or `all` for every CUDA or
    /// ROCm GPU found. Replaces --device.
    #[arg(long, value_name = "LIST")]
    pub devices: Option<String>,
    /// Fit part of the photo, as the reference's `--mask`: a mask image (white keeps, black
    /// ignores, any value above 0 keeps; scaled to the photo), or `alpha` for the photo's own
    /// alpha channel (in a data set, each image's; one without alpha counts every pixel). The
    /// loss, the densify and prune statistics and PSNR count the kept pixels; SSIM is over the
    /// whole image.
    #[arg(long, value_name = "IMAGE|alpha")]
    pub mask: Option<String>,
    /// A `training_config.json` (default: the reference's shipped values).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Train with the configured densify/prune percentiles instead of solving for a budget.
    #[arg(long, conflicts_with = "target_bpp")]
    pub no_budget: bool,
    /// How the backward kernel sums a tile's gradients: auto (chosen from the device),
    /// table-only, plane-scan or plane-ballot. Every form gives the same fit up to float
    /// rounding; they differ in speed (for measuring them on a GPU).
    #[arg(long, default_value_t = BackwardStrategy::Auto, value_name = "STRATEGY")]
    pub backward_strategy: BackwardStrategy,
    /// Launch every iteration op by op instead of replaying a recorded steady iteration (for
    /// measuring the difference, or ruling graphs out).
    #[arg(long)]
    pub no_replay: bool,
    /// Output directory, created if missing; checked for writing before training.
    #[arg(long, default_value = "results")]
    pub out_dir: PathBuf,
    /// The sites file's format: `text` (`<name>_sites.txt`, the reference trainer's, about 115
    /// bytes a site) or `packed` (`<name>_sites.sadp`, 16 bytes a site: the size the bpp
    /// budget counts, with the values quantised).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
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
    /// Start with one site per pixel.
    #[arg(long, conflicts_with = "init_from_sites")]
    pub init_per_pixel: bool,
    /// Start from a sites file (positions rescaled if it was fitted at another size).
    #[arg(long)]
    pub init_from_sites: Option<PathBuf>,
    /// Multiplier of the gradient-weighted initialisation's 0.01 Sobel threshold.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub init_gradient_alpha: f32,
    // The flags that set one key of the config each.
    #[command(flatten)]
    pub keys: ConfigFlags,
}

/// `--format`'s values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The reference trainer's text.
    Text,
    /// The binary packed file.
    Packed,
}

impl From<Format> for SitesFormat {
    fn from(format: Format) -> Self {
        match format {
            Format::Text => SitesFormat::Text,
            Format::Packed => SitesFormat::Packed,
        }
    }
}

/// Declares each flag that overrides a `training_config.json` key once: its help, its clap
/// attributes, its name, the key it sets and the key's type; generates [`ConfigFlags`] and
/// `ConfigFlags::apply`.
macro_rules! config_flags {
    ($($(#[$attr:meta])* $flag:ident => $key:ident: $ty:ty,)*) => {
        /// The flags of `sad fit` that override one key of `training_config.json` each, named as
        /// the reference trainer's flags.
        #[derive(Args)]
        pub struct ConfigFlags {
            $($(#[$attr])* pub $flag: Option<$ty>,)*
        }

        impl ConfigFlags {
            /// Sets the key of every flag given in `config`; returns each one's flag as typed
            /// and config key, so that an error can name what was typed.
            fn apply(&self, config: &mut TrainingConfig) -> Vec<(String, String)> {
                let mut given = Vec::new();
                $(if let Some(value) = self.$flag {
                    config.$key = value;
                    given.push((
                        format!("--{}", stringify!($flag).replace('_', "-")),
                        stringify!($key).to_uppercase(),
                    ));
                })*
                given
            }
        }
    };
}

config_flags! {
    /// Bits-per-pixel budget at 128 bits per site, above 0 and at most 256: the budget solver
    /// picks the prune and densify rates that end the run at that many sites (default 1,
    /// DEFAULT_TARGET_BPP).
    #[arg(long, allow_negative_numbers = true)]
    target_bpp => default_target_bpp: f64,
    /// Training iterations (default 4000, DEFAULT_ITERS).
    #[arg(long, allow_negative_numbers = true)]
    iters => default_iters: usize,
    /// Sites placed at the start, where the photo has edges (default 128 000, DEFAULT_SITES).
    #[arg(long, allow_negative_numbers = true)]
    sites => default_sites: usize,
    /// Most sites the run can hold; densifying stops there and a larger budget is capped
    /// (default 128 000, DEFAULT_MAX_SITES).
    #[arg(long, allow_negative_numbers = true)]
    max_sites => default_max_sites: usize,
    /// First iteration that splits sites (default 20, DENSIFY_START).
    #[arg(long, allow_negative_numbers = true)]
    densify_start => densify_start: usize,
    /// Last iteration that splits sites (default 3000, DENSIFY_END).
    #[arg(long, allow_negative_numbers = true)]
    densify_end => densify_end: usize,
    /// Iterations between splits (default 20, DENSIFY_FREQ).
    #[arg(long, allow_negative_numbers = true)]
    densify_freq => densify_freq: usize,
    /// Share of the live sites split per densify event (default 0.01, DENSIFY_PERCENTILE; the
    /// budget solver rescales it unless --no-budget).
    #[arg(long, allow_negative_numbers = true)]
    densify_percentile => densify_percentile: f32,
    /// Exponent of the error term in the split score (default 0.7, DENSIFY_SCORE_ALPHA).
    #[arg(long, allow_negative_numbers = true)]
    densify_score_alpha => densify_score_alpha: f32,
    /// Prune while densifying; false starts pruning after DENSIFY_END (default true,
    /// PRUNE_DURING_DENSIFY).
    #[arg(long, allow_negative_numbers = true)]
    prune_during_densify => prune_during_densify: bool,
    /// First iteration that prunes sites (default 100, PRUNE_START).
    #[arg(long, allow_negative_numbers = true)]
    prune_start => prune_start: usize,
    /// Pruning stops before this iteration; 0: one before the last (default 3000, PRUNE_END).
    #[arg(long, allow_negative_numbers = true)]
    prune_end => prune_end: usize,
    /// Iterations between prune events (default 40, PRUNE_FREQ).
    #[arg(long, allow_negative_numbers = true)]
    prune_freq => prune_freq: usize,
    /// Share of the live sites pruned per event, the least useful first (default 0.033,
    /// PRUNE_PERCENTILE; the budget solver rescales it unless --no-budget).
    #[arg(long, allow_negative_numbers = true)]
    prune_percentile => prune_percentile: f32,
    /// Iterations between candidate-list updates (default 8, CAND_UPDATE_FREQ).
    #[arg(long, allow_negative_numbers = true)]
    cand_freq => cand_update_freq: usize,
    /// Propagation passes per candidate update (default 1, CAND_UPDATE_PASSES).
    #[arg(long, allow_negative_numbers = true)]
    cand_passes => cand_update_passes: usize,
    /// Pixels per candidate cell along each axis (default 1, CAND_DOWNSCALE).
    #[arg(long, allow_negative_numbers = true)]
    cand_downscale => cand_downscale: usize,
    /// Accepted for the reference's configs; not used by its CUDA trainer either (default 64,
    /// CAND_RADIUS_SCALE).
    #[arg(long, allow_negative_numbers = true)]
    cand_radius_scale => cand_radius_scale: f32,
    /// Random radius probes per cell; only 0 is supported (default 0, CAND_RADIUS_PROBES).
    #[arg(long, allow_negative_numbers = true)]
    cand_radius_probes => cand_radius_probes: usize,
    /// Random sites each cell tries per propagation pass (default 4, CAND_INJECT_COUNT).
    #[arg(long, alias = "cand-inject-count")]
    cand_inject => cand_inject_count: usize,
    /// Half-width, in curve positions, of the Hilbert-curve probes (default 32,
    /// CAND_HILBERT_WINDOW).
    #[arg(long, allow_negative_numbers = true)]
    cand_hilbert_window => cand_hilbert_window: usize,
    /// Hilbert-curve probes per cell and pass near its best site (default 1,
    /// CAND_HILBERT_PROBES).
    #[arg(long, allow_negative_numbers = true)]
    cand_hilbert_probes => cand_hilbert_probes: usize,
    /// Learning rate of positions (default 0.025, LR_POS_BASE).
    #[arg(long, allow_negative_numbers = true)]
    lr_pos => lr_pos_base: f32,
    /// Learning rate of log τ, the sharpness (default 0.01, LR_TAU_BASE).
    #[arg(long, allow_negative_numbers = true)]
    lr_tau => lr_tau_base: f32,
    /// Learning rate of radii (default 0.01, LR_RADIUS_BASE).
    #[arg(long, allow_negative_numbers = true)]
    lr_radius => lr_radius_base: f32,
    /// Learning rate of colours (default 0.01, LR_COLOR_BASE).
    #[arg(long, allow_negative_numbers = true)]
    lr_color => lr_color_base: f32,
    /// Learning rate of anisotropy directions (default 0.0025, LR_DIR_BASE).
    #[arg(long, allow_negative_numbers = true)]
    lr_dir => lr_dir_base: f32,
    /// Learning rate of log anisotropy (default 0.025, LR_ANISO_BASE).
    #[arg(long, allow_negative_numbers = true)]
    lr_aniso => lr_aniso_base: f32,
    /// Initial log τ of every site (default 5, INIT_LOG_TAU).
    #[arg(long, allow_negative_numbers = true)]
    init_log_tau => init_log_tau: f32,
    /// Initial radius of every site in pixels (default 4, INIT_RADIUS).
    #[arg(long, allow_negative_numbers = true)]
    init_radius => init_radius: f32,
    /// Adam's first-moment decay (default 0.9, BETA1).
    #[arg(long, allow_negative_numbers = true)]
    beta1 => beta1: f32,
    /// Adam's second-moment decay (default 0.999, BETA2).
    #[arg(long, allow_negative_numbers = true)]
    beta2 => beta2: f32,
    /// Adam's ε (default 1e-8, EPS).
    #[arg(long, allow_negative_numbers = true)]
    eps => eps: f32,
    /// Largest width or height a fit trains at (default 12 000, MAX_DIM): a photo with a longer
    /// side is scaled down to it, as the reference does (in linear light, Mitchell filter).
    #[arg(long, allow_negative_numbers = true)]
    max_dim => max_dim: usize,
}

/// Whether `image` is a pattern for `sad fit` to expand: it names no file and holds `*`, `?`
/// or `[`.
fn is_glob(image: &std::path::Path) -> bool {
    !image.exists() && image.to_string_lossy().contains(['*', '?', '['])
}

impl FitArgs {
    /// Whether the inputs make a data set: more than one, a folder or a glob, or a data-set
    /// flag given.
    pub fn is_dataset(&self) -> bool {
        self.images.len() > 1
            || self.force
            || self.jobs > 1
            || self.devices.is_some()
            || self.shard.is_some()
            || self
                .images
                .iter()
                .any(|image| image.is_dir() || is_glob(image))
    }

    /// The config file (or the defaults) with every flag given applied over it.
    pub fn config(&self) -> Result<TrainingConfig> {
        let mut config = match &self.config {
            Some(path) => TrainingConfig::load(path)?,
            None => TrainingConfig::default(),
        };
        let given = self.keys.apply(&mut config);
        if let Some(bpp) = self.keys.target_bpp
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
