//! The public tensor-level entry points.

use burn::tensor::{DType, Tensor};

use super::{SsimError, SsimKernelConfig, SsimOptions, reference::reference_value};
#[cfg(feature = "cube")]
use crate::device::uses_fused_kernels;

/// Mean SSIM of two `[batch, channels, height, width]` f32 batches with values in [0, 1].
///
/// Differentiable with respect to both inputs. On CubeCL devices this runs the fused kernels:
/// a forward-only kernel when neither input is tracked, otherwise a training forward plus the
/// hand-written backward. Elsewhere it runs [`ssim_reference`](super::ssim_reference).
///
/// The rank is checked by the compiler: anything but a 4-D tensor is rejected.
///
/// ```compile_fail
/// use burn::tensor::{Device, Tensor};
/// use burn_sad::ssim::{SsimOptions, fused_ssim};
///
/// let image = Tensor::<3>::zeros([3, 16, 16], &Device::default());
/// fused_ssim(image.clone(), image, SsimOptions::default());
/// ```
///
/// # Panics
/// With the message of the [`SsimError`] that [`try_fused_ssim`] would return.
pub fn fused_ssim(img1: Tensor<4>, img2: Tensor<4>, options: SsimOptions) -> Tensor<1> {
    try_fused_ssim(img1, img2, options).unwrap_or_else(|error| panic!("{error}"))
}

/// [`fused_ssim`] that returns a typed error instead of panicking on bad input.
pub fn try_fused_ssim(
    img1: Tensor<4>,
    img2: Tensor<4>,
    options: SsimOptions,
) -> Result<Tensor<1>, SsimError> {
    validate(&img1, &img2, &options)?;
    Ok(kernel_value(img1, img2, options.into()))
}

/// Mean 3D SSIM of two `[batch, channels, depth, height, width]` f32 volumes with values in
/// [0, 1]: the separable Gaussian window applied along X, Y and Z, the same constants as 2D.
///
/// Differentiable with respect to both inputs, with a forward-only path when neither is
/// tracked, on every CubeCL runtime (fused-ssim has 3D on CUDA only). `Valid` padding crops
/// `window / 2` voxels from each side of every spatial axis. The variance and SSIM clamps of
/// the 2D op (fused-ssim #37) apply here too; fused-ssim's 3D kernel lacks them.
///
/// # Panics
/// With the message of the [`SsimError`] that [`try_fused_ssim3d`] would return.
pub fn fused_ssim3d(vol1: Tensor<5>, vol2: Tensor<5>, options: SsimOptions) -> Tensor<1> {
    try_fused_ssim3d(vol1, vol2, options).unwrap_or_else(|error| panic!("{error}"))
}

/// [`fused_ssim3d`] that returns a typed error instead of panicking on bad input.
pub fn try_fused_ssim3d(
    vol1: Tensor<5>,
    vol2: Tensor<5>,
    options: SsimOptions,
) -> Result<Tensor<1>, SsimError> {
    validate(&vol1, &vol2, &options)?;
    Ok(kernel_value(vol1, vol2, options.into()))
}

/// The loss of 3D Gaussian-splatting trainers, `(1 − λ)·mean|pred − gt| + λ·(1 − SSIM)`, with
/// the L1 term computed inside the SSIM kernels, forward and backward.
///
/// The L1 mean runs over all pixels, the SSIM mean over the map (`options.padding`).
/// Differentiable with respect to both inputs, like [`fused_ssim`].
///
/// # Panics
/// With the message of the [`SsimError`] that [`try_ssim_l1_loss`] would return.
pub fn ssim_l1_loss(
    pred: Tensor<4>,
    gt: Tensor<4>,
    lambda: f32,
    options: SsimOptions,
) -> Tensor<1> {
    try_ssim_l1_loss(pred, gt, lambda, options).unwrap_or_else(|error| panic!("{error}"))
}

/// [`ssim_l1_loss`] that returns a typed error instead of panicking on bad input, including a
/// `lambda` outside [0, 1].
pub fn try_ssim_l1_loss(
    pred: Tensor<4>,
    gt: Tensor<4>,
    lambda: f32,
    options: SsimOptions,
) -> Result<Tensor<1>, SsimError> {
    if !(0.0..=1.0).contains(&lambda) {
        return Err(SsimError::BadLambda(lambda));
    }
    validate(&pred, &gt, &options)?;
    let config = SsimKernelConfig {
        ssim_weight: -lambda,
        l1_weight: 1.0 - lambda,
        ..options.into()
    };
    Ok(kernel_value(pred, gt, config).add_scalar(lambda))
}

/// The value `config` describes, from the fused kernels where the device runs them and from the
/// reference ops elsewhere. Inputs must already be validated.
pub(crate) fn kernel_value<const D: usize>(
    img1: Tensor<D>,
    img2: Tensor<D>,
    config: SsimKernelConfig,
) -> Tensor<1> {
    #[cfg(feature = "cube")]
    if uses_fused_kernels(&img1.device()) {
        return fused_value(img1, img2, config);
    }
    reference_value(img1, img2, config)
}

#[cfg(feature = "cube")]
fn fused_value<const D: usize>(
    img1: Tensor<D>,
    img2: Tensor<D>,
    config: SsimKernelConfig,
) -> Tensor<1> {
    use super::SsimBackend;
    use burn::backend::Dispatch;
    Tensor::from_dispatch(<Dispatch as SsimBackend>::ssim_value(
        img1.into_dispatch(),
        img2.into_dispatch(),
        config,
    ))
}

/// Checks everything the kernels assume, so they never read out of bounds or divide by zero.
pub(crate) fn validate<const D: usize>(
    img1: &Tensor<D>,
    img2: &Tensor<D>,
    options: &SsimOptions,
) -> Result<(), SsimError> {
    if options.window.is_multiple_of(2) || !(3..=15).contains(&options.window) {
        return Err(SsimError::BadWindow(options.window));
    }
    if !(options.sigma.is_finite() && options.sigma > 0.0) {
        return Err(SsimError::BadSigma(options.sigma));
    }
    if !options.layout.is_valid() {
        return Err(SsimError::BadLayout(options.layout));
    }
    let (shape1, shape2) = (img1.dims(), img2.dims());
    if shape1 != shape2 {
        return Err(SsimError::ShapeMismatch {
            img1: shape1.to_vec(),
            img2: shape2.to_vec(),
        });
    }
    let (device1, device2) = (img1.device(), img2.device());
    if device1 != device2 {
        return Err(SsimError::DeviceMismatch {
            img1: format!("{device1:?}"),
            img2: format!("{device2:?}"),
        });
    }
    crate::device::kernel_support(&device1).map_err(SsimError::UnsupportedDevice)?;
    for dtype in [img1.dtype(), img2.dtype()] {
        if dtype != DType::F32 {
            return Err(SsimError::NotF32(format!("{dtype:?}")));
        }
    }
    if shape1.contains(&0) {
        return Err(SsimError::Empty {
            shape: shape1.to_vec(),
        });
    }
    let spatial = &shape1[2..];
    if options.padding == super::Padding::Valid && spatial.iter().any(|&side| side < options.window)
    {
        return Err(SsimError::TooSmallForValid {
            spatial: spatial.to_vec(),
            window: options.window,
        });
    }
    // One launch grid axis holds every plane (every slice in 3D).
    let planes = shape1[..D - 2].iter().product::<usize>();
    if planes > u16::MAX as usize {
        return Err(SsimError::TooManyPlanes(planes));
    }
    Ok(())
}
