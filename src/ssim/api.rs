//! The public tensor-level entry points.

use burn::tensor::{DType, Device, Int, Tensor};

use super::reduction::{Mean, SsimReduction, weigh_by_mask};
use super::reference::{reference_value, window_masked_reference_value};
use super::{KernelReduction, MaskMode, SsimError, SsimKernelConfig, SsimMemory, SsimOptions};
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
    try_fused_ssim_reduced(img1, img2, options, Mean)
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
    try_fused_ssim_reduced(vol1, vol2, options, Mean)
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
    try_ssim_l1_loss_reduced(pred, gt, lambda, options, Mean)
}

/// SSIM of two `[batch, channels, height, width]` batches (or `[batch, channels, depth,
/// height, width]` volumes) reduced as `reduction` says: [`Mean`](super::Mean),
/// [`PerImage`](super::PerImage), [`PerChannel`](super::PerChannel) or the
/// [`Map`](super::Map). The same op as [`fused_ssim`] and [`fused_ssim3d`], which are its
/// `Mean`; differentiable with respect to both inputs for every reduction.
///
/// A per-image loss for a training step that weighs its images:
///
/// ```
/// use burn::tensor::{Device, Distribution, Tensor};
/// use burn_sad::ssim::{PerImage, SsimOptions, fused_ssim_reduced};
///
/// let device = Device::default().autodiff();
/// let target = Tensor::<4>::random([2, 3, 32, 32], Distribution::Default, &device);
/// let pred = Tensor::<4>::zeros([2, 3, 32, 32], &device).require_grad();
/// let per_image = fused_ssim_reduced(pred.clone(), target, SsimOptions::default(), PerImage);
/// let weights = Tensor::<1>::from_floats([1.0, 0.5], &device);
/// let loss = (per_image.neg().add_scalar(1.0) * weights).sum();
/// let grads = loss.backward();
/// assert_eq!(pred.grad(&grads).unwrap().dims(), [2, 3, 32, 32]);
/// ```
///
/// # Panics
/// With the message of the [`SsimError`] that [`try_fused_ssim_reduced`] would return.
pub fn fused_ssim_reduced<const D: usize, R: SsimReduction<D>>(
    img1: Tensor<D>,
    img2: Tensor<D>,
    options: SsimOptions,
    reduction: R,
) -> R::Output {
    try_fused_ssim_reduced(img1, img2, options, reduction).unwrap_or_else(|error| panic!("{error}"))
}

/// [`fused_ssim_reduced`] that returns a typed error instead of panicking on bad input.
pub fn try_fused_ssim_reduced<const D: usize, R: SsimReduction<D>>(
    img1: Tensor<D>,
    img2: Tensor<D>,
    options: SsimOptions,
    reduction: R,
) -> Result<R::Output, SsimError> {
    validate(&img1, &img2, &options)?;
    let config = SsimKernelConfig {
        reduction: reduction.kernel_reduction(),
        ..options.into()
    };
    let dims = config.map_dims(img1.dims());
    Ok(R::shape_value(kernel_value(img1, img2, config), dims))
}

/// [`ssim_l1_loss`] reduced as `reduction` says: per image, per image and channel, or the loss
/// map `(1 − λ)·|pred − gt| + λ·(1 − SSIM)` pixel by pixel. The map covers the SSIM map's
/// region: with [`Padding::Valid`](super::Padding::Valid) the L1 term of the border pixels is
/// not in it, so its mean is not the `Mean` loss there (with `Same` it is).
///
/// ```
/// use burn::tensor::{Device, Distribution, Tensor};
/// use burn_sad::ssim::{Map, SsimOptions, ssim_l1_loss_reduced};
///
/// let device = Device::default();
/// let pred = Tensor::<4>::random([1, 3, 16, 16], Distribution::Default, &device);
/// let gt = Tensor::<4>::random([1, 3, 16, 16], Distribution::Default, &device);
/// let map = ssim_l1_loss_reduced(pred, gt, 0.2, SsimOptions::default(), Map);
/// assert_eq!(map.dims(), [1, 3, 16, 16]);
/// ```
///
/// # Panics
/// With the message of the [`SsimError`] that [`try_ssim_l1_loss_reduced`] would return.
pub fn ssim_l1_loss_reduced<R: SsimReduction<4>>(
    pred: Tensor<4>,
    gt: Tensor<4>,
    lambda: f32,
    options: SsimOptions,
    reduction: R,
) -> R::Output {
    try_ssim_l1_loss_reduced(pred, gt, lambda, options, reduction)
        .unwrap_or_else(|error| panic!("{error}"))
}

/// [`ssim_l1_loss_reduced`] that returns a typed error instead of panicking on bad input,
/// including a `lambda` outside [0, 1].
pub fn try_ssim_l1_loss_reduced<R: SsimReduction<4>>(
    pred: Tensor<4>,
    gt: Tensor<4>,
    lambda: f32,
    options: SsimOptions,
    reduction: R,
) -> Result<R::Output, SsimError> {
    let config = l1_ssim_config(lambda, options, reduction.kernel_reduction())?;
    validate(&pred, &gt, &options)?;
    let dims = config.map_dims(pred.dims());
    let value = kernel_value(pred, gt, config).add_scalar(lambda);
    Ok(R::shape_value(value, dims))
}

/// SSIM under a mask of per-pixel weights, reduced as `reduction` says: the SSIM map times
/// `mask`, averaged over the mask's sum; with [`Map`](super::Map), the weighted map. How the
/// mask enters the map is `options.mask_mode` ([`MaskMode`](super::MaskMode)):
/// [`Weights`](super::MaskMode::Weights) (the default) weights the unmasked map, what 3D
/// Gaussian-splatting trainers do with the ground truth's alpha;
/// [`Window`](super::MaskMode::Window) also takes every window statistic over the masked
/// pixels only (normalised convolution), so nothing outside the mask leaks into the map (2D
/// only). `mask` is `[batch, 1, ..spatial]` (one weight for every channel) or `[batch,
/// channels, ..spatial]`, with values in [0, 1]; with [`Padding::Valid`](super::Padding::Valid)
/// its border is cropped as the map is. A mean whose weights sum to 0 is 0. A mask of ones
/// gives the unmasked op's value in both modes.
///
/// Differentiable with respect to both images (the backward runs in the fused kernels), not
/// the mask. The mask is checked for values outside [0, 1] on the device, which waits for the
/// values: a mask reused every step can be checked once with this function's `try_` twin and is
/// cheap to pass again.
///
/// ```
/// use burn::tensor::{Device, Distribution, Tensor};
/// use burn_sad::ssim::{Mean, SsimOptions, fused_ssim_masked};
///
/// let device = Device::default().autodiff();
/// let gt = Tensor::<4>::random([1, 3, 32, 32], Distribution::Default, &device);
/// let alpha = Tensor::<4>::ones([1, 1, 32, 32], &device);
/// let pred = Tensor::<4>::zeros([1, 3, 32, 32], &device).require_grad();
/// let ssim = fused_ssim_masked(pred.clone(), gt, alpha, SsimOptions::default(), Mean);
/// let grads = ssim.neg().add_scalar(1.0).backward();
/// assert_eq!(pred.grad(&grads).unwrap().dims(), [1, 3, 32, 32]);
/// ```
///
/// # Panics
/// With the message of the [`SsimError`] that [`try_fused_ssim_masked`] would return.
pub fn fused_ssim_masked<const D: usize, R: SsimReduction<D>>(
    img1: Tensor<D>,
    img2: Tensor<D>,
    mask: Tensor<D>,
    options: SsimOptions,
    reduction: R,
) -> R::Output {
    try_fused_ssim_masked(img1, img2, mask, options, reduction)
        .unwrap_or_else(|error| panic!("{error}"))
}

/// [`fused_ssim_masked`] that returns a typed error instead of panicking on bad input: a mask
/// of the wrong shape, dtype or device, or with a value outside [0, 1] or not finite, or a
/// window mask on volumes.
///
/// A photo with a hole, compared with normalised convolution, so the hole's pixels never enter
/// a window's statistics:
///
/// ```
/// use burn::tensor::{Device, Distribution, Tensor};
/// use burn_sad::ssim::{MaskMode, PerImage, SsimOptions, try_fused_ssim_masked};
///
/// let device = Device::default();
/// let photo = Tensor::<4>::random([1, 3, 40, 40], Distribution::Default, &device);
/// let restored = photo.clone().mul_scalar(0.9);
/// let hole = Tensor::<4>::zeros([1, 1, 10, 10], &device);
/// let mask = Tensor::<4>::ones([1, 1, 40, 40], &device).slice_assign([0..1, 0..1, 15..25, 15..25], hole);
/// let options = SsimOptions::default().with_mask_mode(MaskMode::Window);
/// let ssim = try_fused_ssim_masked(photo, restored, mask, options, PerImage).unwrap();
/// assert_eq!(ssim.dims(), [1]);
/// ```
pub fn try_fused_ssim_masked<const D: usize, R: SsimReduction<D>>(
    img1: Tensor<D>,
    img2: Tensor<D>,
    mask: Tensor<D>,
    options: SsimOptions,
    reduction: R,
) -> Result<R::Output, SsimError> {
    validate(&img1, &img2, &options)?;
    validate_mask(&img1, &mask)?;
    let config = SsimKernelConfig {
        reduction: KernelReduction::Map,
        ..options.into()
    };
    let dims = config.map_dims(img1.dims());
    let map: Tensor<D> = match options.mask_mode {
        MaskMode::Weights => kernel_value(img1, img2, config),
        MaskMode::Window => {
            if D != 4 {
                return Err(SsimError::WindowMaskIn3d);
            }
            window_masked_value(img1, img2, mask.clone().detach(), config)
        }
    }
    .reshape(dims);
    Ok(weigh_by_mask(map, mask, &config, reduction))
}

/// The map of [`MaskMode::Window`] (`config` asks for the map), from the fused kernels where the
/// device runs them and from the reference ops elsewhere. Inputs must already be validated.
fn window_masked_value<const D: usize>(
    img1: Tensor<D>,
    img2: Tensor<D>,
    mask: Tensor<D>,
    config: SsimKernelConfig,
) -> Tensor<1> {
    #[cfg(feature = "cube")]
    if uses_fused_kernels(&img1.device()) {
        use super::SsimBackend;
        use burn::backend::Dispatch;
        let (img1, img2, config) = half_maps_in_range(img1, img2, config);
        return Tensor::from_dispatch(<Dispatch as SsimBackend>::ssim_window_masked_value(
            img1.into_dispatch(),
            img2.into_dispatch(),
            mask.into_dispatch(),
            config,
        ));
    }
    window_masked_reference_value(img1, img2, mask, config)
}

/// The mask matches the images (`[batch, 1 or channels, ..spatial]`, f32, same device) and
/// every value is in [0, 1]. The range check reads one flag back from the device.
fn validate_mask<const D: usize>(img: &Tensor<D>, mask: &Tensor<D>) -> Result<(), SsimError> {
    let (images, dims) = (img.dims(), mask.dims());
    let shape_ok =
        dims[0] == images[0] && (dims[1] == 1 || dims[1] == images[1]) && dims[2..] == images[2..];
    if !shape_ok {
        return Err(SsimError::MaskShape {
            mask: dims.to_vec(),
            images: images.to_vec(),
        });
    }
    if mask.dtype() != DType::F32 {
        return Err(SsimError::BadMask(format!(
            "the mask must be f32, got {:?}",
            mask.dtype()
        )));
    }
    if mask.device() != img.device() {
        return Err(SsimError::BadMask(format!(
            "the mask is on {:?} but the images on {:?}",
            mask.device(),
            img.device()
        )));
    }
    // NaN fails both comparisons, so it counts as outside.
    let inside = mask
        .clone()
        .detach()
        .greater_equal_elem(0.0)
        .bool_and(mask.clone().detach().lower_equal_elem(1.0));
    if !inside.all().into_scalar::<bool>() {
        return Err(SsimError::BadMask(
            "every weight must be finite and between 0 and 1".into(),
        ));
    }
    Ok(())
}

/// SSIM of float predictions against a target kept as 8-bit integers: `target` holds `q` in
/// 0..=255 standing for `q / 255` of the data range (`options.constants.data_range`, 1 by
/// default), so a 4K RGB ground truth takes 25 MB instead of 100 MB. The kernels read it as
/// integers and divide in f32, so with the default range the value equals
/// [`fused_ssim_reduced`] of `target.float() / 255` (bit for bit on a device), for every
/// reduction; with a range `L`, `pred` is divided by `L` first (one elementwise pass) and the
/// value is that of `target.float() · L / 255` to f32 rounding. Differentiable with respect
/// to `pred` only.
///
/// The target should be `u8`; a runtime without 8-bit storage (wgpu's shaders have none) holds
/// Burn's int tensors as i32, which works the same but saves no memory. Values outside 0..=255
/// are not checked and are taken as `q / 255`.
///
/// ```
/// use burn::tensor::{Device, Int, Tensor, TensorData};
/// use burn_sad::ssim::{Mean, SsimOptions, fused_ssim_u8};
///
/// let device = Device::default().autodiff();
/// let pixels: Vec<u8> = (0..3 * 32 * 32).map(|i| (i * 7 % 256) as u8).collect();
/// let target = Tensor::<4, Int>::from_data(TensorData::new(pixels, [1, 3, 32, 32]), &device);
/// let pred = Tensor::<4>::full([1, 3, 32, 32], 0.5, &device).require_grad();
/// let loss = fused_ssim_u8(pred.clone(), target, SsimOptions::default(), Mean)
///     .neg()
///     .add_scalar(1.0);
/// let grads = loss.backward();
/// assert_eq!(pred.grad(&grads).unwrap().dims(), [1, 3, 32, 32]);
/// ```
///
/// # Panics
/// With the message of the [`SsimError`] that [`try_fused_ssim_u8`] would return.
pub fn fused_ssim_u8<const D: usize, R: SsimReduction<D>>(
    pred: Tensor<D>,
    target: Tensor<D, Int>,
    options: SsimOptions,
    reduction: R,
) -> R::Output {
    try_fused_ssim_u8(pred, target, options, reduction).unwrap_or_else(|error| panic!("{error}"))
}

/// [`fused_ssim_u8`] that returns a typed error instead of panicking on bad input.
pub fn try_fused_ssim_u8<const D: usize, R: SsimReduction<D>>(
    pred: Tensor<D>,
    target: Tensor<D, Int>,
    options: SsimOptions,
    reduction: R,
) -> Result<R::Output, SsimError> {
    validate(&pred, &target, &options)?;
    let config = SsimKernelConfig {
        reduction: reduction.kernel_reduction(),
        ..options.into()
    };
    let dims = config.map_dims(pred.dims());
    Ok(R::shape_value(unorm8_value(pred, target, config), dims))
}

/// [`ssim_l1_loss_reduced`] against a target kept as 8-bit integers (`q / 255`, see
/// [`fused_ssim_u8`]); differentiable with respect to `pred`.
///
/// # Panics
/// With the message of the [`SsimError`] that [`try_ssim_l1_loss_u8`] would return.
pub fn ssim_l1_loss_u8<R: SsimReduction<4>>(
    pred: Tensor<4>,
    target: Tensor<4, Int>,
    lambda: f32,
    options: SsimOptions,
    reduction: R,
) -> R::Output {
    try_ssim_l1_loss_u8(pred, target, lambda, options, reduction)
        .unwrap_or_else(|error| panic!("{error}"))
}

/// [`ssim_l1_loss_u8`] that returns a typed error instead of panicking on bad input,
/// including a `lambda` outside [0, 1].
pub fn try_ssim_l1_loss_u8<R: SsimReduction<4>>(
    pred: Tensor<4>,
    target: Tensor<4, Int>,
    lambda: f32,
    options: SsimOptions,
    reduction: R,
) -> Result<R::Output, SsimError> {
    let config = l1_ssim_config(lambda, options, reduction.kernel_reduction())?;
    validate(&pred, &target, &options)?;
    let dims = config.map_dims(pred.dims());
    let value = unorm8_value(pred, target, config).add_scalar(lambda);
    Ok(R::shape_value(value, dims))
}

/// The kernels' config of the 3DGS loss `(1 − λ)·L1 + λ·(1 − SSIM)`: SSIM weighted by `−λ`, L1
/// by `1 − λ` (the constant `λ` is added to the value); a `λ` outside [0, 1] is an error.
fn l1_ssim_config(
    lambda: f32,
    options: SsimOptions,
    reduction: KernelReduction,
) -> Result<SsimKernelConfig, SsimError> {
    if !(0.0..=1.0).contains(&lambda) {
        return Err(SsimError::BadLambda(lambda));
    }
    Ok(SsimKernelConfig {
        ssim_weight: -lambda,
        l1_weight: 1.0 - lambda,
        reduction,
        ..options.into()
    })
}

/// [`kernel_value`] with an integer img2 standing for `q / 255` of the data range. The kernels
/// decode `q / 255`: for another range `L`, img1 is divided by `L` first (see [`unit_range`]).
fn unorm8_value<const D: usize>(
    img1: Tensor<D>,
    img2: Tensor<D, Int>,
    config: SsimKernelConfig,
) -> Tensor<1> {
    let (range, config) = unit_range(config);
    let img1 = over_range(img1, range);
    #[cfg(feature = "cube")]
    if uses_fused_kernels(&img1.device()) {
        use super::SsimBackend;
        use burn::backend::Dispatch;
        return Tensor::from_dispatch(<Dispatch as SsimBackend>::ssim_value_unorm8(
            img1.into_dispatch(),
            img2.into_dispatch(),
            config,
        ));
    }
    let target = img2.float().cast(img1.dtype()).div_scalar(255.0);
    reference_value(img1, target, config)
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
        let (img1, img2, config) = half_maps_in_range(img1, img2, config);
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

/// `config` for its inputs divided by their data range `L` (returned where it is not 1): SSIM
/// with C1 = (k1·L)², C2 = (k2·L)² of the inputs is SSIM with C1 = k1², C2 = k2² of the inputs
/// over `L`, and their L1 term is `L` times theirs, so the L1 weight takes the factor.
fn unit_range(config: SsimKernelConfig) -> (Option<f32>, SsimKernelConfig) {
    let range = config.constants.data_range;
    if range == 1.0 {
        return (None, config);
    }
    let unit = SsimKernelConfig {
        l1_weight: config.l1_weight * range,
        constants: config.constants.with_data_range(1.0),
        ..config
    };
    (Some(range), unit)
}

/// `tensor` over the data range [`unit_range`] returned, if it returned one.
fn over_range<const D: usize>(tensor: Tensor<D>, range: Option<f32>) -> Tensor<D> {
    match range {
        Some(range) => tensor.div_scalar(range),
        None => tensor,
    }
}

/// The inputs and `config` that keep [`SsimMemory::StoreHalf`]'s f16 partial maps in f16's
/// range, for the fused kernels (the reference ops store no maps): they hold the derivatives of
/// data in [0, 1], which C2 = (k2·L)² shrinks by L² for another range (below f16's smallest
/// values for 8-bit data), so both inputs are divided by `L` first (see [`unit_range`]). Other
/// memory modes keep their inputs.
#[cfg(feature = "cube")]
fn half_maps_in_range<const D: usize>(
    img1: Tensor<D>,
    img2: Tensor<D>,
    config: SsimKernelConfig,
) -> (Tensor<D>, Tensor<D>, SsimKernelConfig) {
    if config.memory != SsimMemory::StoreHalf {
        return (img1, img2, config);
    }
    let (range, unit) = unit_range(config);
    (over_range(img1, range), over_range(img2, range), unit)
}

/// The smallest `k2` whose partial maps fit f16 under [`SsimMemory::StoreHalf`]: they reach
/// about 2 / k2² at unit range (∂S/∂σ₁₂ where the variances vanish), under f16's 65504.
const MIN_HALF_K2: f32 = 0.006;

/// What [`validate`] needs of the second input, a float or an integer tensor.
pub(crate) struct Operand<const D: usize> {
    dims: [usize; D],
    device: Device,
    dtype: DType,
}

impl<const D: usize> From<&Tensor<D>> for Operand<D> {
    fn from(tensor: &Tensor<D>) -> Self {
        Self {
            dims: tensor.dims(),
            device: tensor.device(),
            dtype: tensor.dtype(),
        }
    }
}

impl<const D: usize> From<&Tensor<D, Int>> for Operand<D> {
    fn from(tensor: &Tensor<D, Int>) -> Self {
        Self {
            dims: tensor.dims(),
            device: tensor.device(),
            dtype: tensor.dtype(),
        }
    }
}

/// Checks everything the kernels assume, so they never read out of bounds or divide by zero.
pub(crate) fn validate<const D: usize>(
    img1: &Tensor<D>,
    img2: impl Into<Operand<D>>,
    options: &SsimOptions,
) -> Result<(), SsimError> {
    let img2 = img2.into();
    if options.window.is_multiple_of(2) || !(3..=15).contains(&options.window) {
        return Err(SsimError::BadWindow(options.window));
    }
    if !(options.sigma.is_finite() && options.sigma > 0.0) {
        return Err(SsimError::BadSigma(options.sigma));
    }
    if !options.layout.is_valid() {
        return Err(SsimError::BadLayout(options.layout));
    }
    options.constants.validate()?;
    let (shape1, shape2) = (img1.dims(), img2.dims);
    if shape1 != shape2 {
        return Err(SsimError::ShapeMismatch {
            img1: shape1.to_vec(),
            img2: shape2.to_vec(),
        });
    }
    let (device1, device2) = (img1.device(), img2.device);
    if device1 != device2 {
        return Err(SsimError::DeviceMismatch {
            img1: format!("{device1:?}"),
            img2: format!("{device2:?}"),
        });
    }
    crate::device::family_support(&device1, crate::device::KernelFamily::Ssim)
        .map_err(|problem| SsimError::UnsupportedDevice(problem.to_string()))?;
    if options.memory == SsimMemory::StoreHalf {
        if options.constants.k2 < MIN_HALF_K2 {
            return Err(SsimError::HalfMapsOverflow(options.constants.k2));
        }
        crate::device::half_storage_support(&device1)
            .map_err(|problem| SsimError::UnsupportedDevice(problem.to_string()))?;
    }
    let (dtype1, dtype2) = (img1.dtype(), img2.dtype);
    if !matches!(dtype1, DType::F32 | DType::F16 | DType::BF16) {
        return Err(SsimError::UnsupportedDtype(format!(
            "the images must be f32, f16 or bf16, got {dtype1:?}"
        )));
    }
    // A float img2 shares img1's dtype; an integer one (the `_u8` ops) is `q / 255`.
    if dtype2.is_float() && dtype2 != dtype1 {
        return Err(SsimError::UnsupportedDtype(format!(
            "both images must have one dtype, got {dtype1:?} and {dtype2:?}"
        )));
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
