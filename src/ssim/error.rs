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
        "fused_ssim: valid padding needs height and width of at least {window} (the window), got {height}×{width}"
    )]
    TooSmallForValid {
        /// Image height.
        height: usize,
        /// Image width.
        width: usize,
        /// Window size.
        window: usize,
    },
    /// The window size is not odd in 3..=15.
    #[error("fused_ssim: window must be odd and between 3 and 15, got {0}")]
    BadWindow(usize),
    /// Sigma is not a positive finite number.
    #[error("fused_ssim: sigma must be positive and finite, got {0}")]
    BadSigma(f32),
    /// The inputs are not 32-bit floats.
    #[error("fused_ssim: inputs must be f32, got {0}")]
    NotF32(String),
    /// Too many planes for one launch grid.
    #[error("fused_ssim: batch × channels = {0} exceeds the 65535 planes one launch can hold")]
    TooManyPlanes(usize),
}
