//! Checks of a fit's image and options before anything is placed on the device.

use super::init::Initialisation;
use super::{FitError, FitOptions, TargetImage};

/// Largest image side the kernels' index arithmetic takes, whatever MAX_DIM says.
pub const KERNEL_MAX_SIDE: usize = 65_535;

/// One clear error for an image or options a fit cannot run with.
pub(super) fn validate(target: &TargetImage, options: &FitOptions) -> Result<(), FitError> {
    options.config.validate()?;
    let (width, height) = (target.width, target.height);
    let max_dim = options.config.effective_max_dim();
    if width == 0 || height == 0 {
        return Err(FitError::Image("the image is empty".into()));
    }
    if width.max(height) > max_dim {
        return Err(FitError::Image(format!(
            "{width}×{height} is larger than MAX_DIM = {max_dim}"
        )));
    }
    if !(options.lr_scale.is_finite() && options.lr_scale > 0.0) {
        return Err(FitError::Config("--lr must be a positive number".into()));
    }
    if !(options.ssim_weight.is_finite() && options.ssim_weight >= 0.0) {
        return Err(FitError::Config(
            "--ssim-weight must be a non-negative number".into(),
        ));
    }
    if options.ssim_weight > 0.0 && target.mask.is_some() {
        // The SSIM term is a mean over the whole image; a mask would need its per-pixel map.
        return Err(FitError::Config(
            "--ssim-weight cannot be combined with a mask".into(),
        ));
    }
    match &options.init {
        Initialisation::GradientWeighted { sites, alpha } => {
            if *sites == 0 {
                return Err(FitError::Config("--sites must be at least 1".into()));
            }
            if !(alpha.is_finite() && *alpha >= 0.0) {
                return Err(FitError::Config(
                    "--init-gradient-alpha must be a non-negative number".into(),
                ));
            }
        }
        Initialisation::PerPixel => {}
        Initialisation::FromSites(table) => {
            if table.sites.len() > i32::MAX as usize {
                return Err(FitError::Config("too many sites in the file".into()));
            }
        }
    }
    Ok(())
}
