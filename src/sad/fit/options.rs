//! What a fit is asked to do and what it gives back: options, progress reports, the result
//! and the per-phase profile.

use std::time::Duration;

use burn::tensor::Tensor;

use super::TrainingConfig;
use super::budget::BudgetSolution;
use super::constants::TRAINER_CONSTANTS;
use super::init::Initialisation;
use crate::sad::{BackwardStrategy, SiteTable};

/// Everything a fit needs besides the image.
#[derive(Clone, Debug, PartialEq)]
pub struct FitOptions {
    /// The reference's configuration keys (iterations, schedules, learning rates, …).
    pub config: TrainingConfig,
    /// Where the sites start.
    pub init: Initialisation,
    /// Multiplier of every learning rate (the reference's `--lr`).
    pub lr_scale: f32,
    /// Weight w of the SSIM term: the loss is SSE + w·W·H·(1 − SSIM), with the exact 11×11
    /// Gaussian SSIM of [`fused_ssim`](crate::ssim::fused_ssim) (0: the reference's plain summed squared error).
    pub ssim_weight: f32,
    /// Shifts the initial R2 sequence and the random candidate lists (0: the reference's).
    pub seed: u64,
    /// Iterations between PSNR measurements (each one renders and waits for the device).
    pub log_every: usize,
    /// Disable the bits-per-pixel solver even if the config sets a target.
    pub fixed_rates: bool,
    /// Record a steady iteration (gradient pass, tau diffusion, Adam; no candidate update,
    /// densify or prune) as a device graph once and replay it for the others, on CubeCL
    /// devices without Burn's fusion: the same step, without the host's cost per kernel
    /// launch. On by default.
    pub replay: bool,
    /// How the backward kernel sums a tile's gradients (every form gives the same sums; see
    /// [`BackwardStrategy`]): chosen from the device by default.
    pub backward: BackwardStrategy,
}

/// Iterations between PSNR measurements by default, as the reference's `--log-freq`.
pub const DEFAULT_LOG_EVERY: usize = TRAINER_CONSTANTS.default_log_every;

impl FitOptions {
    /// The reference's defaults for `config`: gradient-weighted initialisation with
    /// `DEFAULT_SITES` sites, learning-rate scale 1, no SSIM term.
    pub fn new(config: TrainingConfig) -> Self {
        Self {
            init: Initialisation::GradientWeighted {
                sites: config.default_sites,
                alpha: 1.0,
            },
            config,
            lr_scale: 1.0,
            ssim_weight: 0.0,
            seed: 0,
            log_every: DEFAULT_LOG_EVERY,
            fixed_rates: false,
            replay: true,
            backward: BackwardStrategy::Auto,
        }
    }
}

impl Default for FitOptions {
    fn default() -> Self {
        Self::new(TrainingConfig::default())
    }
}

/// Where a fit stands after an iteration.
#[derive(Clone, Debug, PartialEq)]
pub struct FitProgress {
    /// Iterations done.
    pub iteration: usize,
    /// Iterations in the run.
    pub iters: usize,
    /// PSNR of the current render in dB, on iterations that measured it.
    pub psnr: Option<f64>,
    /// Live sites (counted on measuring iterations, the running estimate otherwise).
    pub active_sites: usize,
    /// Time since the loop started.
    pub elapsed: Duration,
}

/// The outcome of a fit.
#[derive(Clone, Debug)]
pub struct FitResult {
    /// The live sites, compacted, with the image size.
    pub sites: SiteTable,
    /// The final render, `[3, H, W]`, not clamped.
    pub image: Tensor<3>,
    /// PSNR of the render in dB (on f32 values, as the reference reports it).
    pub psnr: f64,
    /// SSIM of the render (11×11 Gaussian, σ 1.5, mean over RGB).
    pub ssim: f64,
    /// Bits per pixel of the sites at 128 bits per site.
    pub bits_per_pixel: f64,
    /// Time of the training loop, final render included (not initialisation or file I/O).
    pub training_time: Duration,
    /// Iterations run.
    pub iterations: usize,
    /// What the bits-per-pixel solver chose, if it ran.
    pub budget: Option<BudgetSolution>,
    /// Time per phase of the iteration, if the run was profiled ([`Trainer::profile`](super::Trainer::profile)).
    pub phase_times: Option<PhaseTimes>,
}

/// Phases of an iteration, as [`PhaseTimes`] names them.
pub(super) const PHASES: [&str; 6] = [
    "candidates",
    "densify",
    "gradients",
    "tau diffusion + adam",
    "prune",
    "measure",
];

/// Where the training time went, per phase of the iteration (see [`Trainer::profile`](super::Trainer::profile)).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseTimes {
    /// Total time per phase, in [`PHASES`] order.
    pub(super) totals: [Duration; PHASES.len()],
}

impl PhaseTimes {
    /// `(phase, total time)` pairs.
    pub fn phases(&self) -> impl Iterator<Item = (&'static str, Duration)> + '_ {
        PHASES.iter().copied().zip(self.totals.iter().copied())
    }
}

impl std::fmt::Display for PhaseTimes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let total: Duration = self.totals.iter().sum();
        for (name, time) in self.phases() {
            let share = 100.0 * time.as_secs_f64() / total.as_secs_f64().max(1e-12);
            writeln!(
                f,
                "{name:>14}: {:9.1} ms ({share:4.1} %)",
                time.as_secs_f64() * 1e3
            )?;
        }
        Ok(())
    }
}
