//! Fused SSIM kernels: one forward kernel (SSIM sum per tile plus, in training, the partial
//! derivatives the backward needs) and one backward kernel (the input gradients).
//!
//! Both kernels work on 16×16 output tiles of one (batch, channel) plane per cube. They stage the
//! tile plus its apron in shared memory, blur horizontally into a second shared buffer, then blur
//! vertically in registers, which is the separable Gaussian of the SSIM definition.

mod backward;
mod forward;
mod window;

pub use backward::ssim_backward_kernel;
pub use forward::ssim_forward_kernel;
pub use window::{DEFAULT_RADIUS, DEFAULT_SIGMA, gaussian_taps};

/// Output tile width and height, in pixels; one unit per output pixel.
pub const TILE: usize = 16;
/// Units per cube (`TILE × TILE`).
pub const CUBE_UNITS: usize = TILE * TILE;

/// Which partial-derivative maps the training forward stores, and so which input gradients the
/// backward can produce. Each combination compiles to its own kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GradTargets {
    /// The first image needs a gradient.
    pub img1: bool,
    /// The second image needs a gradient.
    pub img2: bool,
}

impl GradTargets {
    /// Number of stored partial maps: ∂S/∂σ² and ∂S/∂σxy are shared, each tracked input adds its
    /// own ∂S/∂μ.
    pub const fn partial_count(self) -> usize {
        2 + self.img1 as usize + self.img2 as usize
    }

    /// Number of gradient maps the backward writes.
    pub const fn grad_count(self) -> usize {
        self.img1 as usize + self.img2 as usize
    }

    /// Slot of ∂S/∂μ₁ in the partial-map stack.
    pub const fn mu1_slot(self) -> usize {
        2
    }

    /// Slot of ∂S/∂μ₂ in the partial-map stack.
    pub const fn mu2_slot(self) -> usize {
        2 + self.img1 as usize
    }
}

/// Partial-map slot of ∂S/∂σ₁² (equal to ∂S/∂σ₂²).
pub const SIGMA_SQ_SLOT: usize = 0;
/// Partial-map slot of ∂S/∂σ₁₂.
pub const COVARIANCE_SLOT: usize = 1;
