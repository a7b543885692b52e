//! The SSIM backend extension: the three primitive ops every backend with fused kernels provides.

use burn::backend::{Backend, backend_extension, tensor::FloatTensor};
use burn_sad_kernels::ssim::GradTargets;

use super::{Padding, SsimOptions};

/// Compile-time shape of an SSIM kernel: padding and window. Hashable, so each distinct value is
/// one compiled kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SsimKernelConfig {
    /// Border handling.
    pub padding: Padding,
    /// Window radius; the window has `2 · radius + 1` taps.
    pub radius: usize,
    /// `f32::to_bits` of the window's sigma.
    pub sigma_bits: u32,
}

impl From<SsimOptions> for SsimKernelConfig {
    fn from(options: SsimOptions) -> Self {
        Self {
            padding: options.padding,
            radius: options.radius(),
            sigma_bits: options.sigma.to_bits(),
        }
    }
}

impl SsimKernelConfig {
    /// Pixels each side of the map loses: the radius for `Valid`, none for `Same`.
    pub fn crop(&self) -> usize {
        match self.padding {
            Padding::Same => 0,
            Padding::Valid => self.radius,
        }
    }

    /// Number of SSIM-map pixels for a `[.., height, width]` input with `planes` planes.
    pub fn map_len(&self, planes: usize, height: usize, width: usize) -> usize {
        let crop = 2 * self.crop();
        planes * height.saturating_sub(crop) * width.saturating_sub(crop)
    }
}

/// Backends that run the fused SSIM kernels.
///
/// Implemented for the CubeCL backend (every runtime), for `Fusion` over it, and for `Autodiff`
/// (where [`SsimBackend::ssim_mean`] records the hand-written backward). Inputs are validated by
/// [`try_fused_ssim`](super::try_fused_ssim); these primitives assume valid, equal-shape
/// `[batch, channels, height, width]` f32 tensors.
#[backend_extension(Cube: cfg(feature = "cube"), Autodiff)]
pub trait SsimBackend: Backend {
    /// Mean SSIM, shape `[1]`. Keeps nothing for a backward pass.
    fn ssim_mean(
        img1: FloatTensor<Self>,
        img2: FloatTensor<Self>,
        config: SsimKernelConfig,
    ) -> FloatTensor<Self>;

    /// Mean SSIM (shape `[1]`) and the stack of partial-derivative maps the backward needs
    /// (shape `[targets.partial_count(), batch, channels, height, width]`).
    fn ssim_mean_with_partials(
        img1: FloatTensor<Self>,
        img2: FloatTensor<Self>,
        config: SsimKernelConfig,
        targets: GradTargets,
    ) -> (FloatTensor<Self>, FloatTensor<Self>);

    /// Gradients of the mean SSIM scaled by `upstream` (shape `[1]`), stacked as
    /// `[targets.grad_count(), batch, channels, height, width]`, img1's first.
    fn ssim_backward(
        img1: FloatTensor<Self>,
        img2: FloatTensor<Self>,
        partials: FloatTensor<Self>,
        upstream: FloatTensor<Self>,
        config: SsimKernelConfig,
        targets: GradTargets,
    ) -> FloatTensor<Self>;
}
