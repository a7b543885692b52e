//! What the SSIM ops reduce their per-pixel map to: the types of [`SsimReduction`].

use burn::tensor::Tensor;

use super::KernelReduction;

/// How an SSIM op reduces its map, and the tensor it returns: [`Mean`] (`[1]`), [`PerImage`]
/// (`[batch]`), [`PerChannel`] (`[batch, channels]`) or [`Map`] (the map itself, of the inputs'
/// rank). Implemented for 2D (`D = 4`) and 3D (`D = 5`) inputs; sealed.
///
/// Every reduction is differentiable and runs in the fused kernels: the per-image and
/// per-channel values come from one sum per (batch, channel) plane, and the map is written by
/// the forward kernel and taken, pixel by pixel, as the backward's upstream gradient.
///
/// ```
/// use burn::tensor::{Device, Distribution, Tensor};
/// use burn_sad::ssim::{Map, PerChannel, PerImage, SsimOptions, fused_ssim_reduced};
///
/// let device = Device::default();
/// let a = Tensor::<4>::random([2, 3, 24, 20], Distribution::Default, &device);
/// let b = Tensor::<4>::random([2, 3, 24, 20], Distribution::Default, &device);
/// let options = SsimOptions::default();
/// let per_image: Tensor<1> = fused_ssim_reduced(a.clone(), b.clone(), options, PerImage);
/// let per_channel: Tensor<2> = fused_ssim_reduced(a.clone(), b.clone(), options, PerChannel);
/// let map: Tensor<4> = fused_ssim_reduced(a, b, options, Map);
/// assert_eq!(per_image.dims(), [2]);
/// assert_eq!(per_channel.dims(), [2, 3]);
/// assert_eq!(map.dims(), [2, 3, 24, 20]);
/// ```
pub trait SsimReduction<const D: usize>: Copy + sealed::Sealed {
    /// The tensor the op returns.
    type Output;

    /// What the kernels compute for this reduction.
    #[doc(hidden)]
    fn kernel_reduction(self) -> KernelReduction;

    /// Shapes the kernels' flat value; `map_dims` is `[batch, channels, ..map extent]`.
    #[doc(hidden)]
    fn shape_value(value: Tensor<1>, map_dims: [usize; D]) -> Self::Output;
}

/// The mean over every pixel of every plane: shape `[1]` (what [`fused_ssim`](super::fused_ssim)
/// returns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mean;

/// One mean per image, over its channels and pixels: shape `[batch]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerImage;

/// One mean per image and channel: shape `[batch, channels]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerChannel;

/// No reduction: the map, `[batch, channels, ..]` with the inputs' spatial size for
/// [`Padding::Same`](super::Padding::Same) and `window / 2` fewer pixels on each side for
/// [`Padding::Valid`](super::Padding::Valid).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Map;

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Mean {}
    impl Sealed for super::PerImage {}
    impl Sealed for super::PerChannel {}
    impl Sealed for super::Map {}
}

macro_rules! reductions_for_rank {
    ($rank:literal) => {
        impl SsimReduction<$rank> for Mean {
            type Output = Tensor<1>;

            fn kernel_reduction(self) -> KernelReduction {
                KernelReduction::Total
            }

            fn shape_value(value: Tensor<1>, _: [usize; $rank]) -> Tensor<1> {
                value
            }
        }

        impl SsimReduction<$rank> for PerImage {
            type Output = Tensor<1>;

            fn kernel_reduction(self) -> KernelReduction {
                KernelReduction::PerPlane
            }

            fn shape_value(value: Tensor<1>, dims: [usize; $rank]) -> Tensor<1> {
                // Every plane averages the same number of pixels.
                value
                    .reshape([dims[0], dims[1]])
                    .mean_dim(1)
                    .reshape([dims[0]])
            }
        }

        impl SsimReduction<$rank> for PerChannel {
            type Output = Tensor<2>;

            fn kernel_reduction(self) -> KernelReduction {
                KernelReduction::PerPlane
            }

            fn shape_value(value: Tensor<1>, dims: [usize; $rank]) -> Tensor<2> {
                value.reshape([dims[0], dims[1]])
            }
        }

        impl SsimReduction<$rank> for Map {
            type Output = Tensor<$rank>;

            fn kernel_reduction(self) -> KernelReduction {
                KernelReduction::Map
            }

            fn shape_value(value: Tensor<1>, dims: [usize; $rank]) -> Tensor<$rank> {
                value.reshape(dims)
            }
        }
    };
}

reductions_for_rank!(4);
reductions_for_rank!(5);
