//! Plain-tensor reference SSIM: the definition written with Burn tensor ops, differentiated by
//! Burn's autodiff. The tests compare the fused kernels with it, and backends that cannot run
//! CubeCL kernels use it directly.

use std::ops::Range;

use burn::tensor::module::{conv2d, conv3d};
use burn::tensor::ops::ConvOptions;
use burn::tensor::{DType, Tensor, TensorData};
use burn_sad_kernels::ssim::{SsimTerm, gaussian_taps};

use super::reduction::weigh_by_mask;
use super::{KernelReduction, MaskMode, Padding, SsimKernelConfig, SsimOptions, SsimReduction};

/// Mean SSIM computed with separable `conv2d` calls (zero padding for `Same`, none for `Valid`).
///
/// Semantics equal [`fused_ssim`](super::fused_ssim), including its clamps: the variances' sum
/// σx² + σy² (the only form in which SSIM uses them) is clamped at zero in value only (the
/// gradient passes through, as in the fused backward), and the SSIM value is clamped to
/// [−1, 1] with a zero gradient where it was clamped.
/// Inputs are not validated; [`try_fused_ssim`](super::try_fused_ssim) does that.
pub fn ssim_reference(img1: Tensor<4>, img2: Tensor<4>, options: SsimOptions) -> Tensor<1> {
    reference_value(img1, img2, options.into())
}

/// Plain-tensor 3D SSIM of `[batch, channels, depth, height, width]` volumes, the reference
/// [`fused_ssim3d`](super::fused_ssim3d) is tested against (and the fallback where CubeCL
/// kernels cannot run).
pub fn ssim3d_reference(vol1: Tensor<5>, vol2: Tensor<5>, options: SsimOptions) -> Tensor<1> {
    reference_value(vol1, vol2, options.into())
}

/// The plain-tensor reference of [`fused_ssim_reduced`](super::fused_ssim_reduced) (2D or 3D),
/// for any [`SsimReduction`]. Inputs are not validated.
pub fn ssim_reference_reduced<const D: usize, R: SsimReduction<D>>(
    img1: Tensor<D>,
    img2: Tensor<D>,
    options: SsimOptions,
    reduction: R,
) -> R::Output {
    let config = SsimKernelConfig {
        reduction: reduction.kernel_reduction(),
        ..options.into()
    };
    let dims = config.map_dims(img1.dims());
    R::shape_value(reference_value(img1, img2, config), dims)
}

/// What the fused kernels compute for `config`, with plain tensor ops:
/// `ssim_weight · mean(term) + l1_weight · mean(|img1 − img2|)`, overall or per plane, or the
/// same sum pixel by pixel over the map region, flattened.
pub(crate) fn reference_value<const D: usize>(
    img1: Tensor<D>,
    img2: Tensor<D>,
    config: SsimKernelConfig,
) -> Tensor<1> {
    // Half-precision inputs are taken in f32 (their gradients come back in their dtype).
    let (img1, img2) = (img1.cast(DType::F32), img2.cast(DType::F32));
    let dims = img1.dims();
    let planes = dims[0] * dims[1];
    let map = term_map(img1.clone(), img2.clone(), &config);
    let reduce = |values: Tensor<2>| -> Tensor<1> {
        match config.reduction {
            KernelReduction::Total => values.mean(),
            KernelReduction::PerPlane => values.mean_dim(1).reshape([planes]),
            KernelReduction::Map => values.reshape([-1]),
        }
    };
    let mut value = reduce(map);
    if config.ssim_weight != 1.0 {
        value = value.mul_scalar(config.ssim_weight);
    }
    if config.l1_weight != 0.0 {
        let mut l1 = (img1 - img2).abs();
        if config.is_map() {
            // The map's L1 term covers the map region only.
            let crop = config.crop();
            let region: [Range<usize>; D] = std::array::from_fn(|axis| match axis {
                0 | 1 => 0..dims[axis],
                _ => crop..dims[axis] - crop,
            });
            l1 = l1.slice(region);
        }
        value = value + reduce(l1.reshape([planes as i32, -1])).mul_scalar(config.l1_weight);
    }
    value
}

/// The per-pixel (per-voxel) term, `[planes, map pixels]`.
fn term_map<const D: usize>(
    img1: Tensor<D>,
    img2: Tensor<D>,
    config: &SsimKernelConfig,
) -> Tensor<2> {
    let dims = img1.dims();
    let planes = dims[0] * dims[1];
    let x = img1.reshape([planes as i32, -1]);
    let y = img2.reshape([planes as i32, -1]);
    let stats = Tensor::cat(
        vec![
            x.clone(),
            y.clone(),
            x.clone() * x.clone(),
            y.clone() * y.clone(),
            x * y,
        ],
        0,
    );
    let blurred = blur(stats, &dims[2..], config);
    let [mu1, mu2, e11, e22, e12] = blurred
        .chunk(5, 0)
        .try_into()
        .expect("five statistics were stacked");
    term_of_moments([mu1, mu2, e11, e22, e12], config)
}

/// The term at each pixel from its blurred moments μ₁, μ₂, E\[x²\], E\[y²\], E\[xy\].
fn term_of_moments(
    [mu1, mu2, e11, e22, e12]: [Tensor<2>; 5],
    config: &SsimKernelConfig,
) -> Tensor<2> {
    let (c1, c2) = (config.constants.c1(), config.constants.c2());
    let mu1_sq = mu1.clone() * mu1.clone();
    let mu2_sq = mu2.clone() * mu2.clone();
    let mu12 = mu1 * mu2;
    let var_sum = clamp_value_at_zero((e11 - mu1_sq.clone()) + (e22 - mu2_sq.clone()));
    let cov = e12 - mu12.clone();
    let contrast_structure = cov.mul_scalar(2.0).add_scalar(c2) / var_sum.add_scalar(c2);
    match config.term {
        SsimTerm::ContrastStructure => contrast_structure,
        SsimTerm::Ssim => {
            let luminance = mu12.mul_scalar(2.0).add_scalar(c1) / (mu1_sq + mu2_sq).add_scalar(c1);
            (luminance * contrast_structure).clamp(-1.0, 1.0)
        }
    }
}

/// The plain-tensor reference of [`fused_ssim_masked`](super::fused_ssim_masked), in both
/// [`MaskMode`]s (`options.mask_mode`), for any [`SsimReduction`]. Inputs are not validated.
pub fn ssim_masked_reference<const D: usize, R: SsimReduction<D>>(
    img1: Tensor<D>,
    img2: Tensor<D>,
    mask: Tensor<D>,
    options: SsimOptions,
    reduction: R,
) -> R::Output {
    let config = SsimKernelConfig {
        reduction: KernelReduction::Map,
        ..options.into()
    };
    let dims = config.map_dims(img1.dims());
    let map: Tensor<D> = match options.mask_mode {
        MaskMode::Weights => reference_value(img1, img2, config),
        MaskMode::Window => window_masked_reference_value(img1, img2, mask.clone(), config),
    }
    .reshape(dims);
    weigh_by_mask(map, mask, &config, reduction)
}

/// The map of [`MaskMode::Window`] with plain tensor ops, flattened (`config` asks for the
/// map, no L1): the blurs of `m`, `m·x`, `m·y`, `m·x²`, `m·y²`, `m·xy` over explicitly padded
/// planes (images padded with 0, the mask with 1, as the kernels stage them), the moments
/// their ratios to the blurred mask, and 0 where the window holds no weight. 2D inputs; the
/// mask is `[batch, 1 or channels, height, width]` and is not differentiated.
pub(crate) fn window_masked_reference_value<const D: usize>(
    img1: Tensor<D>,
    img2: Tensor<D>,
    mask: Tensor<D>,
    config: SsimKernelConfig,
) -> Tensor<1> {
    let dims = img1.dims();
    assert!(D == 4, "window masks are 2D only");
    let (planes, height, width) = (dims[0] * dims[1], dims[2], dims[3]);
    let device = img1.device();
    let pad = match config.padding {
        Padding::Same => config.radius,
        Padding::Valid => 0,
    };
    let padded = |plane: Tensor<D>, outside: f32| -> Tensor<3> {
        let plane = plane.cast(DType::F32).reshape([planes, height, width]);
        if pad == 0 {
            return plane;
        }
        let shape = [planes, height + 2 * pad, width + 2 * pad];
        Tensor::<3>::full(shape, outside, &device)
            .slice_assign([0..planes, pad..pad + height, pad..pad + width], plane)
    };
    let x = padded(img1, 0.0);
    let y = padded(img2, 0.0);
    let m = padded(mask.detach().expand(dims), 1.0);
    let (mx, my) = (m.clone() * x.clone(), m.clone() * y.clone());
    let stats = Tensor::cat(
        vec![
            m,
            mx.clone(),
            my.clone(),
            mx.clone() * x,
            my * y.clone(),
            mx * y,
        ],
        0,
    )
    .reshape([6 * planes as i32, -1]);
    // The padding is explicit: blur the padded planes without any.
    let unpadded = SsimKernelConfig {
        padding: Padding::Valid,
        ..config
    };
    let blurred = blur(stats, &[height + 2 * pad, width + 2 * pad], &unpadded);
    let [weight, s1, s2, s11, s22, s12] = blurred
        .chunk(6, 0)
        .try_into()
        .expect("six statistics were stacked");
    let covered = weight.clone().greater_elem(0.0);
    let inverse = weight
        .clamp_min(f32::MIN_POSITIVE)
        .recip()
        .mask_fill(covered.clone().bool_not(), 0.0);
    let moments = [s1, s2, s11, s22, s12].map(|s| s * inverse.clone());
    let map = term_of_moments(moments, &config) * covered.float();
    map.reshape([-1]).mul_scalar(config.ssim_weight)
}

/// Separable Gaussian blur of `rows` (each a flattened map of `spatial` extent) along every
/// spatial axis, zero-padded for `Same` and cropped for `Valid`; returns the flattened maps.
fn blur(rows: Tensor<2>, spatial: &[usize], config: &SsimKernelConfig) -> Tensor<2> {
    let count = rows.dims()[0];
    let device = rows.device();
    let radius = config.radius;
    let taps = gaussian_taps(radius, config.sigma_bits);
    let window: Vec<f32> = (0..2 * radius + 1)
        .map(|k| taps[k.abs_diff(radius)])
        .collect();
    let size = window.len();
    let pad = match config.padding {
        Padding::Same => radius,
        Padding::Valid => 0,
    };
    let kernel =
        |shape: [usize; 5]| Tensor::<5>::from_data(TensorData::new(window.clone(), shape), &device);
    match *spatial {
        [height, width] => {
            let maps = rows.reshape([count, 1, height, width]);
            let horizontal = kernel([1, 1, 1, 1, size]).reshape([1, 1, 1, size]);
            let vertical = kernel([1, 1, 1, size, 1]).reshape([1, 1, size, 1]);
            let along = |axes: [usize; 2]| ConvOptions::new([1, 1], axes, [1, 1], 1);
            let maps = conv2d(maps, horizontal, None, along([0, pad]));
            conv2d(maps, vertical, None, along([pad, 0])).reshape([count as i32, -1])
        }
        [depth, height, width] => {
            let maps = rows.reshape([count, 1, depth, height, width]);
            let along = |axes: [usize; 3]| ConvOptions::new([1, 1, 1], axes, [1, 1, 1], 1);
            let maps = conv3d(maps, kernel([1, 1, 1, 1, size]), None, along([0, 0, pad]));
            let maps = conv3d(maps, kernel([1, 1, 1, size, 1]), None, along([0, pad, 0]));
            conv3d(maps, kernel([1, 1, size, 1, 1]), None, along([pad, 0, 0]))
                .reshape([count as i32, -1])
        }
        _ => unreachable!("SSIM inputs have 2 or 3 spatial axes"),
    }
}

fn clamp_value_at_zero(v: Tensor<2>) -> Tensor<2> {
    let correction = (v.clone().clamp_min(0.0) - v.clone()).detach();
    v + correction
}
