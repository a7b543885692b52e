//! MS-SSIM with pytorch-msssim's semantics, composed of the fused per-plane kernels.

use burn::tensor::Tensor;
use burn::tensor::module::avg_pool2d;
use burn::tensor::ops::AvgPoolOptions;
use burn_sad_kernels::ssim::SsimTerm;

use super::api::{kernel_value, validate};
use super::reference::reference_value;
use super::{Padding, SsimError, SsimKernelConfig, SsimOptions};

/// pytorch-msssim's default scale weights (Wang et al. 2003).
pub const MS_SSIM_WEIGHTS: [f32; 5] = [0.0448, 0.2856, 0.3001, 0.2363, 0.1333];

/// Options of [`ms_ssim`]: the window of every scale and the scale weights (one scale each).
#[derive(Clone, Debug, PartialEq)]
pub struct MsSsimOptions {
    /// Window size in taps: odd, 3 to 15.
    pub window: usize,
    /// Standard deviation of the Gaussian window, > 0.
    pub sigma: f32,
    /// Exponent of each scale's factor, finest first.
    pub weights: Vec<f32>,
}

impl Default for MsSsimOptions {
    fn default() -> Self {
        let ssim = SsimOptions::default();
        Self {
            window: ssim.window,
            sigma: ssim.sigma,
            weights: MS_SSIM_WEIGHTS.to_vec(),
        }
    }
}

/// Multi-scale SSIM of two `[batch, channels, height, width]` f32 batches in [0, 1], as
/// pytorch-msssim's `ms_ssim(X, Y, data_range=1)`.
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
    validate_ms(&img1, &img2, options)?;
    Ok(compose(img1, img2, options, kernel_value))
}

/// [`ms_ssim`] from plain tensor ops only, for tests and comparisons.
pub fn ms_ssim_reference(img1: Tensor<4>, img2: Tensor<4>, options: &MsSsimOptions) -> Tensor<1> {
    compose(img1, img2, options, reference_value)
}

type PlaneValues = fn(Tensor<4>, Tensor<4>, SsimKernelConfig) -> Tensor<1>;

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
    };
    let scales = options.weights.len();
    let mut product: Option<Tensor<1>> = None;
    for (scale, &weight) in options.weights.iter().enumerate() {
        let last = scale + 1 == scales;
        let config = SsimKernelConfig {
            term: if last {
                SsimTerm::Ssim
            } else {
                SsimTerm::ContrastStructure
            },
            per_plane: true,
            ..ssim.into()
        };
        let factor = relu_pow(plane_values(img1.clone(), img2.clone(), config), weight);
        product = Some(match product {
            Some(product) => product * factor,
            None => factor,
        });
        if !last {
            img1 = downsample(img1);
            img2 = downsample(img2);
        }
    }
    product.expect("at least one scale").mean()
}

/// `max(v, 0)^w`, with a zero (not NaN) gradient where `v ≤ 0`.
fn relu_pow(values: Tensor<1>, weight: f32) -> Tensor<1> {
    let positive = values.clone().greater_elem(0.0).float();
    values.clamp_min(1e-12).powf_scalar(weight) * positive
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
