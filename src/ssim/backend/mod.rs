//! The SSIM backend extension: the three primitive ops every backend with fused kernels provides
//! ([`SsimBackend`]), with its `Autodiff` implementation in `autodiff`, its `Fusion` one in
//! `fusion`, and the `CubeBackend` launches and strategies in `cube`.

use burn::backend::{
    Backend, backend_extension,
    tensor::{FloatTensor, IntTensor},
};
use burn::tensor::{DType, Shape};
use burn_sad_kernels::ssim::{GradTargets, SsimTerm};

use crate::ssim::{Padding, SsimConstants, SsimLayout, SsimMemory, SsimOptions};

mod autodiff;
#[cfg(feature = "cube")]
pub(crate) mod cube;
mod fusion;

/// What the SSIM kernels compute: the window and padding, which term they average, whether per
/// plane, and the weights of the fused loss
/// `ssim_weight · mean(term) + l1_weight · mean(|img1 − img2|)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SsimKernelConfig {
    /// Border handling.
    pub padding: Padding,
    /// Window radius; the window has `2 · radius + 1` taps.
    pub radius: usize,
    /// `f32::to_bits` of the window's sigma.
    pub sigma_bits: u32,
    /// The averaged term: SSIM, or MS-SSIM's contrast-structure factor.
    pub term: SsimTerm,
    /// What the kernels reduce the term's map to.
    pub reduction: KernelReduction,
    /// Weight of the term's mean.
    pub ssim_weight: f32,
    /// Weight of the mean absolute difference; 0 leaves the L1 term out of the kernels.
    pub l1_weight: f32,
    /// How the kernels tile the image.
    pub layout: SsimLayout,
    /// What a training forward keeps for its backward (read by the Autodiff backend).
    pub memory: SsimMemory,
    /// The data range and SSIM's constants (the kernels read C1 and C2 at run time).
    pub constants: SsimConstants,
}

impl From<SsimOptions> for SsimKernelConfig {
    /// Plain mean SSIM.
    fn from(options: SsimOptions) -> Self {
        Self {
            padding: options.padding,
            radius: options.radius(),
            sigma_bits: options.sigma.to_bits(),
            term: SsimTerm::Ssim,
            reduction: KernelReduction::Total,
            ssim_weight: 1.0,
            l1_weight: 0.0,
            layout: options.layout,
            memory: options.memory,
            constants: options.constants,
        }
    }
}

/// What the SSIM kernels reduce the per-pixel term to. The value is always one flat tensor;
/// the public ops shape it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum KernelReduction {
    /// One value over every plane, shape `[1]`.
    #[default]
    Total,
    /// One value per (batch, channel) plane, shape `[batch · channels]`.
    PerPlane,
    /// No reduction: the weighted term at every pixel of the map region, flattened from
    /// `[batch, channels, ..map extent]`. With the L1 term, `|img1 − img2|` is added at the
    /// map's pixels only.
    Map,
}

impl SsimKernelConfig {
    /// Shape of the value for `[batch, channels, ..]` inputs of `shape`.
    pub fn value_shape(&self, shape: &Shape) -> Shape {
        match self.reduction {
            KernelReduction::Total => Shape::new([1]),
            KernelReduction::PerPlane => Shape::new([shape[0] * shape[1]]),
            KernelReduction::Map => {
                let map = self.map_extent(&shape[2..]).iter().product::<usize>();
                Shape::new([shape[0] * shape[1] * map])
            }
        }
    }

    /// Whether the value is the unreduced map.
    pub fn is_map(&self) -> bool {
        self.reduction == KernelReduction::Map
    }

    /// The storage type of the partial-derivative maps a training forward writes: f16 under
    /// [`SsimMemory::StoreHalf`], else f32.
    pub fn partials_dtype(&self) -> DType {
        match self.memory {
            SsimMemory::StoreHalf => DType::F16,
            SsimMemory::Store | SsimMemory::Recompute => DType::F32,
        }
    }

    /// Whether the kernels include the L1 term.
    pub fn has_l1(&self) -> bool {
        self.l1_weight != 0.0
    }

    /// The kernels' `(ssim_scale, l1_scale)` for `[batch, channels, ..spatial]` inputs of
    /// `shape`: the weights divided by the pixel (voxel) counts each value averages over, or
    /// the weights themselves for the map.
    pub fn scales(&self, shape: &Shape) -> (f32, f32) {
        let planes = match self.reduction {
            KernelReduction::Map => return (self.ssim_weight, self.l1_weight),
            KernelReduction::PerPlane => 1,
            KernelReduction::Total => shape[0] * shape[1],
        };
        let spatial = &shape[2..];
        let map = planes as f64 * self.map_extent(spatial).iter().product::<usize>() as f64;
        let pixels = planes as f64 * spatial.iter().product::<usize>() as f64;
        (
            (self.ssim_weight as f64 / map) as f32,
            (self.l1_weight as f64 / pixels) as f32,
        )
    }

    /// Pixels each side of the map loses: the radius for `Valid`, none for `Same`.
    pub fn crop(&self) -> usize {
        match self.padding {
            Padding::Same => 0,
            Padding::Valid => self.radius,
        }
    }

    /// `[batch, channels, ..map extent]`: the map's shape for inputs of shape `dims`.
    pub fn map_dims<const D: usize>(&self, dims: [usize; D]) -> [usize; D] {
        let extent = self.map_extent(&dims[2..]);
        std::array::from_fn(|axis| {
            if axis < 2 {
                dims[axis]
            } else {
                extent[axis - 2]
            }
        })
    }

    /// Extent of the SSIM map along each spatial axis of `spatial`.
    pub fn map_extent(&self, spatial: &[usize]) -> Vec<usize> {
        let crop = 2 * self.crop();
        spatial
            .iter()
            .map(|&side| side.saturating_sub(crop))
            .collect()
    }
}

/// `[count, ..shape]`: the shape of a stack of `count` maps of `shape` (partials, gradients).
pub(crate) fn stacked_shape(count: usize, shape: &Shape) -> Shape {
    let mut dims = vec![count];
    dims.extend(shape.iter().copied());
    Shape::from(dims)
}

/// Backends that run the fused SSIM kernels.
///
/// Implemented for the CubeCL backend (every runtime), for `Fusion` over it, and for `Autodiff`
/// (where [`SsimBackend::ssim_value`] records the hand-written backward). Inputs are validated by
/// [`try_fused_ssim`](super::try_fused_ssim); these primitives assume valid, equal-shape
/// `[batch, channels, ..spatial]` tensors of one float dtype (f32, f16 or bf16). The `_unorm8`
/// twins take the second image as integers `q` standing for `q / 255` (u8 where the runtime
/// has 8-bit storage); it is never tracked.
#[backend_extension(Cube: cfg(feature = "cube"), Autodiff)]
pub trait SsimBackend: Backend {
    /// The configured value (see [`SsimKernelConfig`]), shape [`SsimKernelConfig::value_shape`].
    /// Keeps nothing for a backward pass.
    fn ssim_value(
        img1: FloatTensor<Self>,
        img2: FloatTensor<Self>,
        config: SsimKernelConfig,
    ) -> FloatTensor<Self>;

    /// The configured value and the stack of partial-derivative maps the backward needs
    /// (shape `[targets.partial_count(), batch, channels, height, width]`).
    fn ssim_value_with_partials(
        img1: FloatTensor<Self>,
        img2: FloatTensor<Self>,
        config: SsimKernelConfig,
        targets: GradTargets,
    ) -> (FloatTensor<Self>, FloatTensor<Self>);

    /// Gradients of the value scaled by `upstream` (the value's shape), stacked as
    /// `[targets.grad_count(), batch, channels, height, width]`, img1's first.
    fn ssim_backward(
        img1: FloatTensor<Self>,
        img2: FloatTensor<Self>,
        partials: FloatTensor<Self>,
        upstream: FloatTensor<Self>,
        config: SsimKernelConfig,
        targets: GradTargets,
    ) -> FloatTensor<Self>;

    /// [`SsimBackend::ssim_value`] under a window mask (normalised convolution): every window
    /// statistic is the weighted mean over the window's pixels with `mask`'s weights
    /// (`[batch, 1 or channels, height, width]`, f32 in [0, 1], taken as 1 outside the
    /// image); a pixel whose window holds no weight has the value 0. 2D only; `config` asks
    /// for the map ([`KernelReduction::Map`]) and no L1 term.
    fn ssim_window_masked_value(
        img1: FloatTensor<Self>,
        img2: FloatTensor<Self>,
        mask: FloatTensor<Self>,
        config: SsimKernelConfig,
    ) -> FloatTensor<Self>;

    /// [`SsimBackend::ssim_value_with_partials`] under a window mask (see
    /// [`SsimBackend::ssim_window_masked_value`]).
    fn ssim_window_masked_value_with_partials(
        img1: FloatTensor<Self>,
        img2: FloatTensor<Self>,
        mask: FloatTensor<Self>,
        config: SsimKernelConfig,
        targets: GradTargets,
    ) -> (FloatTensor<Self>, FloatTensor<Self>);

    /// [`SsimBackend::ssim_backward`] of [`SsimBackend::ssim_window_masked_value`], from the
    /// partials of [`SsimBackend::ssim_window_masked_value_with_partials`].
    fn ssim_window_masked_backward(
        img1: FloatTensor<Self>,
        img2: FloatTensor<Self>,
        mask: FloatTensor<Self>,
        partials: FloatTensor<Self>,
        upstream: FloatTensor<Self>,
        config: SsimKernelConfig,
        targets: GradTargets,
    ) -> FloatTensor<Self>;

    /// [`SsimBackend::ssim_value`] of a float `img1` and an integer `img2` (`q / 255`).
    fn ssim_value_unorm8(
        img1: FloatTensor<Self>,
        img2: IntTensor<Self>,
        config: SsimKernelConfig,
    ) -> FloatTensor<Self>;

    /// [`SsimBackend::ssim_value_with_partials`] of a float `img1` and an integer `img2`, for
    /// img1's gradient only (`GradTargets { img1: true, img2: false }`).
    fn ssim_value_with_partials_unorm8(
        img1: FloatTensor<Self>,
        img2: IntTensor<Self>,
        config: SsimKernelConfig,
    ) -> (FloatTensor<Self>, FloatTensor<Self>);

    /// [`SsimBackend::ssim_backward`] of a float `img1` and an integer `img2`: img1's gradient,
    /// shape `[1, batch, channels, ..]`.
    fn ssim_backward_unorm8(
        img1: FloatTensor<Self>,
        img2: IntTensor<Self>,
        partials: FloatTensor<Self>,
        upstream: FloatTensor<Self>,
        config: SsimKernelConfig,
    ) -> FloatTensor<Self>;
}
