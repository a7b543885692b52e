//! The trainer's fixed numbers in one table: the Rust trainer reads its constants from
//! [`TRAINER_CONSTANTS`], and the trainer page reads the same table from its manifest (see
//! `burn_sad_viewer::manifest_json`), so the two schedules cannot drift apart.

use serde::Serialize;

/// The trainer's fixed numbers (not configuration keys: the reference hard-codes them).
///
/// ```
/// use burn_sad::sad::fit::TRAINER_CONSTANTS;
///
/// assert_eq!(TRAINER_CONSTANTS.tau_diffusion_passes, 4);
/// assert_eq!(TRAINER_CONSTANTS.bits_per_site, 128.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TrainerConstants {
    /// Jacobi passes of tau-gradient diffusion per iteration.
    pub tau_diffusion_passes: u32,
    /// Diffusion weight at the end of training; it ramps up from a tenth of it.
    pub tau_diffusion_lambda: f32,
    /// Seed of the random candidate lists at the start of training (xor the fit's seed).
    pub candidate_seed: u32,
    /// Bits a site costs in the budget (the 16-byte packed record).
    pub bits_per_site: f64,
    /// The most sites one densify or prune event adds or removes.
    pub max_event_sites: usize,
    /// The bpp solver's cap on the densify and prune rates.
    pub budget_max_rate: f32,
    /// The bpp solver's coarse samples of the rate scale.
    pub budget_samples: usize,
    /// The bpp solver's refinement rounds.
    pub budget_refinements: usize,
    /// R2 draws per site before the initialisation gives up on it.
    pub init_max_attempts: u64,
    /// Sobel magnitude (times the weighting's alpha) a drawn point needs to be kept.
    pub init_gradient_threshold: f32,
    /// Blend mass a site needs to be split.
    pub split_min_mass: f32,
    /// Iterations between PSNR measurements unless asked otherwise.
    pub default_log_every: usize,
}

/// The trainer's constants (see [`TrainerConstants`]).
pub const TRAINER_CONSTANTS: TrainerConstants = TrainerConstants {
    tau_diffusion_passes: 4,
    tau_diffusion_lambda: 0.05,
    candidate_seed: 0,
    bits_per_site: 128.0,
    max_event_sites: 65_536,
    budget_max_rate: 0.95,
    budget_samples: 80,
    budget_refinements: 20,
    init_max_attempts: 256,
    init_gradient_threshold: 0.01,
    split_min_mass: 1.0,
    default_log_every: 1000,
};
