//! Typed errors of the SSIM ops.

/// Why an SSIM op rejected its inputs.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SsimError {
    /// The two inputs differ in shape.
    #[error("fused_ssim: img1 has shape {img1:?} but img2 has shape {img2:?}; they must match")]
    ShapeMismatch {
        /// Shape of the first input.
        img1: Vec<usize>,
        /// Shape of the second input.
        img2: Vec<usize>,
    },
    /// The two inputs live on different devices.
    #[error("fused_ssim: img1 is on {img1} but img2 is on {img2}; move both to one device")]
    DeviceMismatch {
        /// Device of the first input.
        img1: String,
        /// Device of the second input.
        img2: String,
    },
    /// An input has no elements.
    #[error("fused_ssim: the inputs are empty (shape {shape:?})")]
    Empty {
        /// The empty shape.
        shape: Vec<usize>,
    },
    /// Valid padding needs at least one full window.
    #[error(
        "fused_ssim: valid padding needs every spatial side of at least {window} (the window), got {spatial:?}"
    )]
    TooSmallForValid {
        /// The spatial sides: `[height, width]`, or `[depth, height, width]` in 3D.
        spatial: Vec<usize>,
        /// Window size.
        window: usize,
    },
    /// The window size is not odd in 3..=15.
    #[error("fused_ssim: window must be odd and between 3 and 15, got {0}")]
    BadWindow(usize),
    /// Sigma is not a positive finite number.
    #[error("fused_ssim: sigma must be positive and finite, got {0}")]
    BadSigma(f32),
    /// The data range is not positive and finite, or too small or large for its constants to
    /// be normal f32 numbers.
    #[error(
        "fused_ssim: the data range must be positive and finite (its constants normal f32 numbers), got {0}"
    )]
    BadDataRange(f32),
    /// A factor of SSIM's constants is outside (0, 1).
    #[error("fused_ssim: k1 and k2 must be between 0 and 1 (exclusive), got k1 = {k1}, k2 = {k2}")]
    BadConstants {
        /// The luminance constant's factor.
        k1: f32,
        /// The contrast constant's factor.
        k2: f32,
    },
    /// [`SsimMemory::StoreHalf`](super::SsimMemory::StoreHalf) with a `k2` whose maps would
    /// overflow f16 (their largest values are about 2 / k2²).
    #[error(
        "fused_ssim: SsimMemory::StoreHalf needs k2 of at least 0.006 (the partial maps reach 2 / k2², past f16's largest value), got {0}; use SsimMemory::Store"
    )]
    HalfMapsOverflow(f32),
    /// A kernel layout field is out of its range (see [`SsimLayout`](super::SsimLayout)).
    #[error(
        "fused_ssim: layout rows must be 1 to 1024 and strips a power of two up to 16, got {0:?}"
    )]
    BadLayout(super::SsimLayout),
    /// The device cannot run the kernels (see
    /// [`kernel_support`](crate::device::kernel_support)).
    #[error("fused_ssim: {0}")]
    UnsupportedDevice(String),
    /// The inputs' dtypes are not f32, f16 or bf16, one dtype for both (or, for
    /// the `_u8` ops, a float prediction and a u8 target).
    #[error("fused_ssim: {0}")]
    UnsupportedDtype(String),
    /// The L1/SSIM mixing weight is outside [0, 1].
    #[error("ssim_l1_loss: lambda must be between 0 and 1, got {0}")]
    BadLambda(f32),
    /// MS-SSIM needs the smaller side to exceed `(window − 1) · 2^(scales − 1)`.
    #[error(
        "ms_ssim: the smaller side must be larger than {minimum} for {scales} scales of an {window}-tap window, got {height}×{width}"
    )]
    TooSmallForMsSsim {
        /// Image height.
        height: usize,
        /// Image width.
        width: usize,
        /// The side the smaller one must exceed.
        minimum: usize,
        /// Number of scales.
        scales: usize,
        /// Window size.
        window: usize,
    },
    /// MS-SSIM scale weights must be a non-empty list of finite, non-negative numbers.
    #[error("ms_ssim: weights must be finite, non-negative and at least one, got {0:?}")]
    BadWeights(Vec<f32>),
    /// The mask's shape is not `[batch, 1 or channels, ..spatial]` of the images.
    #[error(
        "fused_ssim_masked: the mask has shape {mask:?}; for images of shape {images:?} it must be [batch, 1 or channels, ..spatial]"
    )]
    MaskShape {
        /// Shape of the mask.
        mask: Vec<usize>,
        /// Shape of the images.
        images: Vec<usize>,
    },
    /// The mask is not f32, is on another device, or has a value outside [0, 1] (NaN
    /// included).
    #[error("fused_ssim_masked: {0}")]
    BadMask(String),
    /// [`MaskMode::Window`](super::MaskMode::Window) on volumes: window masks are 2D only.
    #[error("fused_ssim_masked: window masks are 2D only; use MaskMode::Weights for volumes")]
    WindowMaskIn3d,
    /// Too many planes (slices in 3D) for one launch grid.
    #[error(
        "fused_ssim: batch × channels (× depth in 3D) = {0} exceeds the 65535 planes one launch can hold"
    )]
    TooManyPlanes(usize),
}
