//! Fused SSIM: the structural similarity index as a differentiable loss.
//!
//! - [`fused_ssim`]: mean SSIM; [`ssim_l1_loss`]: the 3DGS loss with L1 fused into the same
//!   kernels; [`ms_ssim`]: multi-scale SSIM composed of the fused per-plane kernels.
//!
//! [`fused_ssim`] computes the mean SSIM of two `[batch, channels, height, width]` image batches
//! in one kernel per 16×16 tile, and its gradient with respect to either or both inputs in one
//! backward kernel. The definition is the one of `rahul-goel/fused-ssim` (and of the 3DGS
//! reference): a separable 11×11 Gaussian window with σ = 1.5, C1 = 1e-4, C2 = 9e-4, data in
//! [0, 1], each channel on its own, variance clamped at zero (as σx² + σy², the form SSIM uses)
//! and SSIM clamped to [−1, 1]. Other data ranges and constants: [`SsimConstants`].
//!
//! ```
//! use burn::tensor::{Device, Distribution, Tensor};
//! use burn_sad::ssim::{SsimOptions, fused_ssim};
//!
//! let device = Device::default().autodiff();
//! let target = Tensor::<4>::random([1, 3, 64, 64], Distribution::Default, &device);
//! let pred = Tensor::<4>::zeros([1, 3, 64, 64], &device).require_grad();
//! let loss = fused_ssim(pred.clone(), target, SsimOptions::default()).neg().add_scalar(1.0);
//! let grads = loss.backward();
//! let d_pred = pred.grad(&grads).unwrap();
//! assert_eq!(d_pred.dims(), [1, 3, 64, 64]);
//! ```

mod api;
// Without a CubeCL runtime, the backend extensions' generated dispatch (no backend to forward
// to) takes every argument of every method and uses none.
#[cfg_attr(not(feature = "cube"), allow(unused_variables))]
pub(crate) mod backend;
mod error;
mod msssim;
mod options;
mod reduction;
mod reference;

/// Re-exported from [`device`](crate::device), where it lives for both capabilities.
#[doc(hidden)]
pub use crate::device::uses_fused_kernels;
pub use api::{
    fused_ssim, fused_ssim_masked, fused_ssim_reduced, fused_ssim3d, ssim_l1_loss,
    ssim_l1_loss_reduced, try_fused_ssim, try_fused_ssim_masked, try_fused_ssim_reduced,
    try_fused_ssim3d, try_ssim_l1_loss, try_ssim_l1_loss_reduced,
};
pub use api::{fused_ssim_u8, ssim_l1_loss_u8, try_fused_ssim_u8, try_ssim_l1_loss_u8};
pub use backend::{KernelReduction, SsimBackend, SsimKernelConfig};
pub use burn_sad_kernels::ssim::{GradTargets, SsimTerm};
pub use error::SsimError;
pub use msssim::{
    MS_SSIM_WEIGHTS, MsSsimOptions, MsSsimReduction, ms_ssim, ms_ssim_reduced, ms_ssim_reference,
    try_ms_ssim, try_ms_ssim_reduced,
};
pub use options::{MaskMode, Padding, SsimConstants, SsimLayout, SsimMemory, SsimOptions};
pub use reduction::{Map, Mean, PerChannel, PerImage, SsimReduction};
pub use reference::{
    ssim_masked_reference, ssim_reference, ssim_reference_reduced, ssim3d_reference,
};
