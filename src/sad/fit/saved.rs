//! The PSNR a fit's saved sites render at.

use burn::tensor::Device;

use super::{TargetImage, masked_psnr};
use crate::sad::{RenderOnlyOptions, SadError, SiteTable, render_sites_image};

/// PSNR in dB of `sites` rendered as [`render_sites`](crate::sad::render_sites) renders a saved
/// file, at the target's size, against `target` over the pixels it counts.
///
/// A fit's own PSNR ([`FitResult::psnr`](super::FitResult::psnr)) is of the candidate lists it
/// kept while training; a saved file is rendered from lists built afresh (a jump flood, then the
/// propagation passes). The two agree or differ a little: a site the training lists missed
/// shows in fresh ones. Pass the sites as read back from the saved bytes to include a packed
/// format's quantisation.
///
/// ```
/// use burn::tensor::{Device, Distribution, Tensor};
/// use burn_sad::sad::fit::{FitOptions, TargetImage, TrainingConfig, fit, saved_psnr};
///
/// let device = Device::default();
/// let photo = Tensor::<4>::random([1, 3, 24, 32], Distribution::Default, &device);
/// let target = TargetImage::from_tensor(photo);
/// let config = TrainingConfig {
///     default_iters: 20,
///     default_sites: 200,
///     default_max_sites: 200,
///     default_target_bpp: 8.0,
///     prune_start: 5,
///     prune_freq: 5,
///     prune_end: 15,
///     ..TrainingConfig::default()
/// };
/// let result = fit(&target, FitOptions::new(config), &device, |_| {})?;
/// let saved = saved_psnr(&result.sites, &target, &device)?;
/// println!("fit {:.2} dB, saved file {saved:.2} dB", result.psnr);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn saved_psnr(
    sites: &SiteTable,
    target: &TargetImage,
    device: &Device,
) -> Result<f64, SadError> {
    let options = RenderOnlyOptions {
        width: Some(target.width),
        height: Some(target.height),
        ..RenderOnlyOptions::default()
    };
    let image = render_sites_image(sites, &options, device)?;
    Ok(masked_psnr(image, target.to_tensor(device)))
}
