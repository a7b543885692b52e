//! MS-SSIM with pytorch-msssim's semantics, composed of the fused per-plane kernels.

use burn::tensor::Tensor;
use burn::tensor::module::avg_pool2d;
use burn::tensor::ops::AvgPoolOptions;
use burn_sad_kernels::ssim::SsimTerm;

use super::api::{kernel_value, validate};
use super::reference::reference_value;
use super::{
    KernelReduction, Mean, Padding, SsimConstants, SsimError, SsimKernelConfig, SsimOptions,
    SsimReduction,
};

/// pytorch-msssim's default scale weights (Wang et al. 2003).
pub const MS_SSIM_WEIGHTS: [f32; 5] = [0.0448, 0.2856, 0.3001, 0.2363, 0.1333];

/// Options of [`ms_ssim`]: the window of every scale, the scale weights (one scale each) and
/// the data range and constants of every scale.
///
/// ```
/// use burn_sad::ssim::MsSsimOptions;
///
/// // pytorch-msssim's `ms_ssim(x, y, data_range=255)`.
/// let eight_bit = MsSsimOptions::default().with_data_range(255.0);
/// assert_eq!(eight_bit.constants.data_range, 255.0);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct MsSsimOptions {
    /// Window size in taps: odd, 3 to 15.
    pub window: usize,
    /// Standard deviation of the Gaussian window, > 0.
    pub sigma: f32,
    /// Exponent of each scale's factor, finest first.
    pub weights: Vec<f32>,
    /// The data range and the factors of SSIM's constants (average pooling keeps the range).
    pub constants: SsimConstants,
}

impl MsSsimOptions {
    /// The same options for data of range `data_range`; see [`SsimConstants`].
    pub fn with_data_range(mut self, data_range: f32) -> Self {
        self.constants = self.constants.with_data_range(data_range);
        self
    }

    /// The same options with other factors of SSIM's constants.
    pub fn with_constants(mut self, k1: f32, k2: f32) -> Self {
        self.constants = self.constants.with_constants(k1, k2);
        self
    }
}

impl Default for MsSsimOptions {
    fn default() -> Self {
        let ssim = SsimOptions::default();
        Self {
            window: ssim.window,
            sigma: ssim.sigma,
            weights: MS_SSIM_WEIGHTS.to_vec(),
            constants: ssim.constants,
        }
    }
}

/// Multi-scale SSIM of two `[batch, channels, height, width]` f32 batches in [0, 1] (or the
/// range `options.constants` names), as pytorch-msssim's `ms_ssim(X, Y, data_range=1)`.
///
/// At each scale but the last it takes the per-channel mean contrast-structure term, at the last
/// the per-channel mean SSIM (valid padding); each is clamped at 0 and raised to its weight, the
/// scales are multiplied, and the result is averaged over batch and channels. Between scales
/// both images are 2×2 average-pooled (zero padding of `side mod 2`, counted). Differentiable
/// with respect to both inputs through the fused kernels' backward.
///
/// # Panics
/// With the message of the [`SsimError`] that [`try_ms_ssim`] would return.
pub fn ms_ssim(img1: Tensor<4>, img2: Tensor<4>, options: &MsSsimOptions) -> Tensor<1> {
    try_ms_ssim(img1, img2, options).unwrap_or_else(|error| panic!("{error}"))
}

/// [`ms_ssim`] that returns a typed error instead of panicking on bad input.
pub fn try_ms_ssim(
    img1: Tensor<4>,
    img2: Tensor<4>,
    options: &MsSsimOptions,
) -> Result<Tensor<1>, SsimError> {
    try_ms_ssim_reduced(img1, img2, options, Mean)
}

/// [`ms_ssim`] per image (`[batch]`), per image and channel (`[batch, channels]`) or averaged
/// ([`Mean`]): pytorch-msssim's `size_average=False` gives the per-channel values averaged over
/// the channels, our [`PerImage`](super::PerImage). Differentiable with respect to both inputs.
///
/// ```
/// use burn::tensor::{Device, Distribution, Tensor};
/// use burn_sad::ssim::{MsSsimOptions, PerChannel, ms_ssim_reduced};
///
/// let device = Device::default();
/// let a = Tensor::<4>::random([2, 3, 40, 40], Distribution::Default, &device);
/// // Three scales of a 7-tap window (the default five need a side over 160).
/// let options = MsSsimOptions {
///     window: 7,
///     sigma: 1.0,
///     weights: vec![0.3, 0.3, 0.4],
///     ..MsSsimOptions::default()
/// };
/// let per_channel = ms_ssim_reduced(a.clone(), a, &options, PerChannel);
/// assert_eq!(per_channel.dims(), [2, 3]);
/// ```
///
/// # Panics
/// With the message of the [`SsimError`] that [`try_ms_ssim_reduced`] would return.
pub fn ms_ssim_reduced<R: MsSsimReduction>(
    img1: Tensor<4>,
    img2: Tensor<4>,
    options: &MsSsimOptions,
    reduction: R,
) -> R::Output {
    try_ms_ssim_reduced(img1, img2, options, reduction).unwrap_or_else(|error| panic!("{error}"))
}

/// [`ms_ssim_reduced`] that returns a typed error instead of panicking on bad input.
pub fn try_ms_ssim_reduced<R: MsSsimReduction>(
    img1: Tensor<4>,
    img2: Tensor<4>,
    options: &MsSsimOptions,
    reduction: R,
) -> Result<R::Output, SsimError> {
    validate_ms(&img1, &img2, options)?;
    let dims = img1.dims();
    // Per plane, then reduced: MS-SSIM multiplies each plane's scales before any mean.
    let planes = compose(img1, img2, options, kernel_value);
    let value = match reduction.kernel_reduction() {
        KernelReduction::Total => planes.mean(),
        _ => planes,
    };
    Ok(R::shape_value(value, [dims[0], dims[1], 0, 0]))
}

/// The reductions MS-SSIM takes: [`Mean`], [`PerImage`](super::PerImage) and
/// [`PerChannel`](super::PerChannel) (MS-SSIM has no map). Sealed.
pub trait MsSsimReduction: SsimReduction<4> {}

impl MsSsimReduction for Mean {}
impl MsSsimReduction for super::PerImage {}
impl MsSsimReduction for super::PerChannel {}

/// [`ms_ssim`] from plain tensor ops only, for tests and comparisons.
pub fn ms_ssim_reference(img1: Tensor<4>, img2: Tensor<4>, options: &MsSsimOptions) -> Tensor<1> {
    compose(img1, img2, options, reference_value).mean()
}

type PlaneValues = fn(Tensor<4>, Tensor<4>, SsimKernelConfig) -> Tensor<1>;

/// MS-SSIM of each (batch, channel) plane, `[batch · channels]`.
fn compose(
    mut img1: Tensor<4>,
    mut img2: Tensor<4>,
    options: &MsSsimOptions,
    plane_values: PlaneValues,
) -> Tensor<1> {
    let ssim = SsimOptions {
        padding: Padding::Valid,
        window: options.window,
        sigma: options.sigma,
        constants: options.constants,
        ..SsimOptions::DEFAULT
    };
    let scales = options.weights.len();
    let mut values = Vec::with_capacity(scales);
    for scale in 0..scales {
        let last = scale + 1 == scales;
        let config = SsimKernelConfig {
            term: if last {
                SsimTerm::Ssim
            } else {
                SsimTerm::ContrastStructure
            },
            reduction: KernelReduction::PerPlane,
            ..ssim.into()
        };
        values.push(plane_values(img1.clone(), img2.clone(), config));
        if !last {
            img1 = downsample(img1);
            img2 = downsample(img2);
        }
    }
    weighted_product(values, &options.weights)
}

/// Per plane, `Π_s max(v_s, 0)^w_s` over the scales' values (`values[s]`, one per plane), as
/// `exp(Σ_s w_s · ln v_s)` where no weighted `v_s` is ≤ 0 and 0 elsewhere (a zero, not NaN,
/// gradient there): a handful of ops over all scales at once rather than several per scale, which is
/// what small batches spend their time on.
fn weighted_product(values: Vec<Tensor<1>>, weights: &[f32]) -> Tensor<1> {
    let scales = values.len();
    let device = values[0].device();
    let values = Tensor::stack::<2>(values, 0);
    let weights = Tensor::<1>::from_floats(weights, &device).reshape([scales, 1]);
    // A scale whose value is ≤ 0 zeroes the product unless its weight is 0 (0⁰ = 1, as
    // pytorch-msssim's relu then pow gives).
    let zeroing =
        values.clone().lower_equal_elem(0.0).float() * weights.clone().greater_elem(0.0).float();
    let kept = zeroing.sum_dim(0).equal_elem(0.0).float();
    let logs = values.clamp_min(1e-12).log() * weights;
    let product = logs.sum_dim(0).exp() * kept;
    let planes = product.dims()[1];
    product.reshape([planes])
}

/// 2×2 average pooling with `side mod 2` zero padding on each side, padding counted (PyTorch's
/// `avg_pool2d` defaults, as pytorch-msssim calls it).
fn downsample(image: Tensor<4>) -> Tensor<4> {
    let [_, _, height, width] = image.dims();
    let options = AvgPoolOptions {
        kernel_size: [2, 2],
        stride: [2, 2],
        padding: [(height % 2, height % 2), (width % 2, width % 2)],
        count_include_pad: true,
        ceil_mode: false,
    };
    avg_pool2d(image, options)
}

fn validate_ms(
    img1: &Tensor<4>,
    img2: &Tensor<4>,
    options: &MsSsimOptions,
) -> Result<(), SsimError> {
    let weights_ok =
        !options.weights.is_empty() && options.weights.iter().all(|w| w.is_finite() && *w >= 0.0);
    if !weights_ok {
        return Err(SsimError::BadWeights(options.weights.clone()));
    }
    let ssim = SsimOptions {
        padding: Padding::Valid,
        window: options.window,
        sigma: options.sigma,
        constants: options.constants,
        ..SsimOptions::DEFAULT
    };
    validate(img1, img2, &ssim)?;
    let [_, _, height, width] = img1.dims();
    let scales = options.weights.len();
    let minimum = (options.window - 1) << (scales - 1);
    if height.min(width) <= minimum {
        return Err(SsimError::TooSmallForMsSsim {
            height,
            width,
            minimum,
            scales,
            window: options.window,
        });
    }
    Ok(())
}
