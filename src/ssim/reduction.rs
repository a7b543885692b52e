//! What the SSIM ops reduce their per-pixel map to: the types of [`SsimReduction`].

use std::ops::Range;

use burn::tensor::Tensor;

use super::{KernelReduction, SsimKernelConfig};

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

    /// Reduces `map` weighted by `weights` (both of `map`'s shape): the weighted mean over what
    /// this reduction averages, 0 where the weights sum to 0, or the weighted map.
    #[doc(hidden)]
    fn weighted(self, map: Tensor<D>, weights: Tensor<D>) -> Self::Output;
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

/// Weighted sums of `map` per `[batch, channels]` plane: `(Σ w·map, Σ w)`, each `[batch,
/// channels]`.
fn plane_sums<const D: usize>(map: Tensor<D>, weights: Tensor<D>) -> (Tensor<2>, Tensor<2>) {
    let dims = map.dims();
    let planes = [dims[0], dims[1]];
    let flat = |t: Tensor<D>| t.reshape([dims[0] as i32, dims[1] as i32, -1]);
    let weighted = flat(map * weights.clone()).sum_dim(2).reshape(planes);
    (weighted, flat(weights).sum_dim(2).reshape(planes))
}

/// Reduces the masked op's `map` (of `config`'s map region) as `reduction` says, weighted by
/// `mask` (`[batch, 1 or channels, ..]` of the images, cropped as the map is).
pub(crate) fn weigh_by_mask<const D: usize, R: SsimReduction<D>>(
    map: Tensor<D>,
    mask: Tensor<D>,
    config: &SsimKernelConfig,
    reduction: R,
) -> R::Output {
    let dims = map.dims();
    let crop = config.crop();
    let region: [Range<usize>; D] = std::array::from_fn(|axis| match axis {
        0 | 1 => 0..mask.dims()[axis],
        _ => crop..crop + dims[axis],
    });
    let weights = mask.detach().slice(region).expand(dims);
    reduction.weighted(map, weights)
}

/// `sums / totals`, and 0 where a total is 0.
fn ratio<const R: usize>(sums: Tensor<R>, totals: Tensor<R>) -> Tensor<R> {
    sums / totals.clamp_min(f32::MIN_POSITIVE)
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

            fn weighted(self, map: Tensor<$rank>, weights: Tensor<$rank>) -> Tensor<1> {
                let (sums, totals) = plane_sums(map, weights);
                ratio(sums.sum().reshape([1]), totals.sum().reshape([1]))
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

            fn weighted(self, map: Tensor<$rank>, weights: Tensor<$rank>) -> Tensor<1> {
                let batch = map.dims()[0];
                let (sums, totals) = plane_sums(map, weights);
                ratio(sums.sum_dim(1), totals.sum_dim(1)).reshape([batch])
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

            fn weighted(self, map: Tensor<$rank>, weights: Tensor<$rank>) -> Tensor<2> {
                let (sums, totals) = plane_sums(map, weights);
                ratio(sums, totals)
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

            fn weighted(self, map: Tensor<$rank>, weights: Tensor<$rank>) -> Tensor<$rank> {
                map * weights
            }
        }
    };
}

reductions_for_rank!(4);
reductions_for_rank!(5);
