//! Fitting an image with SAD: the reference trainer's complete recipe (initialisation, Adam with
//! per-group learning rates, tau-gradient diffusion, densify and prune to a bit budget).
//!
//! [`Trainer`] runs it step by step; [`fit`] runs it to the end. The training ops
//! ([`site_statistics`], [`tau_diffusion`], [`adam_step`]) are CubeCL kernels with host
//! references beside them, which the tests compare them with.
//!
//! ```
//! use burn::tensor::{Device, Distribution, Tensor};
//! use burn_sad::sad::fit::{FitOptions, TargetImage, TrainingConfig, fit};
//!
//! let device = Device::default();
//! let photo = Tensor::<4>::random([1, 3, 24, 32], Distribution::Default, &device);
//! // The reference's recipe, scaled down to a tiny image and a short run.
//! let config = TrainingConfig {
//!     default_iters: 20,
//!     default_sites: 200,
//!     default_max_sites: 200,
//!     default_target_bpp: 8.0,
//!     prune_start: 5,
//!     prune_freq: 5,
//!     prune_end: 15,
//!     ..TrainingConfig::default()
//! };
//! let result = fit(&TargetImage::from_tensor(photo), FitOptions::new(config), &device, |_| {})?;
//! assert_eq!(result.image.dims(), [3, 24, 32]);
//! println!("{} sites, PSNR {:.2} dB", result.sites.sites.len(), result.psnr);
//! # Ok::<(), burn_sad::sad::fit::FitError>(())
//! ```

mod budget;
pub mod capture_gate;
mod config;
mod constants;
mod densify;
mod init;
mod ops;
mod options;
// Host references of the training kernels, which the tests compare them with.
#[doc(hidden)]
pub mod reference;
mod saved;
mod step;
mod target;
mod trainer;
mod validate;

pub use budget::{
    BITS_PER_SITE, BudgetSolution, MAX_EVENT_SITES, Schedule, bits_per_pixel, solve_target_bpp,
    target_sites,
};
pub use burn_sad_kernels::sad::{ADAM_STATE, AdamStep, DENSIFY_STATS, StatisticsKind};
pub use config::{MAX_TARGET_BPP, TrainingConfig};
pub use constants::{TRAINER_CONSTANTS, TrainerConstants};
pub use densify::{prune_candidates, split_candidates, split_sites};
pub use init::{InitialShape, Initialisation};
pub use ops::{masked_psnr, prune_sites, site_statistics, squared_error_gradients};
pub use options::{DEFAULT_LOG_EVERY, FitOptions, FitProgress, FitResult, PhaseTimes};
pub use saved::saved_psnr;
pub use step::{
    NeighbourLists, adam_step, diffuse_and_step, diffuse_and_step_keeping, tau_diffusion,
};
pub use target::TargetImage;
pub use trainer::{Trainer, fit};
pub use validate::KERNEL_MAX_SIDE;

/// Why a fit could not start.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FitError {
    /// A configuration key or option has a bad value, or the configuration file is unreadable.
    #[error("config: {0}")]
    Config(String),
    /// The device cannot run the kernels (see
    /// [`kernel_support`](crate::device::kernel_support)).
    #[error("device: {0}")]
    UnsupportedDevice(String),
    /// The image is unusable (too small, too large).
    #[error("image: {0}")]
    Image(String),
    /// The initialisation produced no live site.
    #[error("initialisation placed no site (is the image flat? try --init-per-pixel)")]
    NoSites,
}
