//! User-facing options of the SSIM ops.

use burn_sad_kernels::ssim::{DEFAULT_RADIUS, DEFAULT_SIGMA};

/// How the SSIM map treats the image border.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Padding {
    /// Zero padding; the map has the input's size (fused-ssim `"same"`, graphdeco 3DGS).
    #[default]
    Same,
    /// Only pixels whose whole window lies inside the image: the map loses `window / 2` pixels
    /// per side (fused-ssim `"valid"`, pytorch-msssim).
    Valid,
}

impl std::str::FromStr for Padding {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "same" => Ok(Self::Same),
            "valid" => Ok(Self::Valid),
            other => Err(format!(
                "unknown padding `{other}`: expected `same` or `valid`"
            )),
        }
    }
}

/// Options of [`fused_ssim`](super::fused_ssim).
///
/// The defaults are the reference definition: `Same` padding, an 11-tap window, σ = 1.5.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SsimOptions {
    /// Border handling.
    pub padding: Padding,
    /// Window size in taps: odd, 3 to 15.
    pub window: usize,
    /// Standard deviation of the Gaussian window, > 0.
    pub sigma: f32,
}

impl Default for SsimOptions {
    fn default() -> Self {
        Self {
            padding: Padding::Same,
            window: 2 * DEFAULT_RADIUS + 1,
            sigma: DEFAULT_SIGMA,
        }
    }
}

impl SsimOptions {
    /// The same options with another padding.
    pub fn with_padding(mut self, padding: Padding) -> Self {
        self.padding = padding;
        self
    }

    /// The same options with another window size and sigma.
    pub fn with_window(mut self, window: usize, sigma: f32) -> Self {
        self.window = window;
        self.sigma = sigma;
        self
    }

    /// Window radius (`window / 2`).
    pub fn radius(&self) -> usize {
        self.window / 2
    }
}
