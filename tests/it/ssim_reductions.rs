//! The SSIM ops' reductions (per image, per channel, the map) and masks against the
//! plain-tensor reference: values, gradients under an upstream gradient that differs per
//! element, finite differences of the map, a real photo, and the bad-mask matrix.

use crate::common;

use burn::tensor::{Device, Tensor, TensorData};
use burn_sad::image::load_rgb;
use burn_sad::ssim::{
    Map, Mean, MsSsimOptions, Padding, PerChannel, PerImage, SsimError, SsimOptions, SsimReduction,
    fused_ssim, fused_ssim_masked, fused_ssim_reduced, ms_ssim, ms_ssim_reduced, ssim_l1_loss,
    ssim_l1_loss_reduced, ssim_reference_reduced, try_fused_ssim_masked,
};
use burn_sad_kernels::ssim::gaussian_taps;
use common::{SAME, SMALL, VALID, assert_close, device, pair, random, values};

/// [`SMALL`] with valid padding.
const SMALL_VALID: SsimOptions = SsimOptions {
    padding: Padding::Valid,
    ..SMALL
};

/// How far an f32 map pixel may be from float64 on a photo. E[x²] − μ² cancels in flat
/// regions: on chelsea the kernels' worst pixel is 1.1e-4 off (the f32 conv reference's
/// 1.4e-4), while the errors average out to under 1e-7 over the map.
const MAP_ATOL: f32 = 2e-4;

/// An op's output values and its two inputs' gradients.
pub(crate) type Outputs = (Vec<f32>, Vec<f32>, Vec<f32>);

/// `Σ w · op(a, b)` for fixed weights `w` of the output's size, with its gradients: the
/// backward sees an upstream gradient that differs per element.
pub(crate) fn weighted_value_and_grads<const D: usize, const R: usize>(
    op: impl Fn(Tensor<D>, Tensor<D>) -> Tensor<R>,
    img1: &Tensor<D>,
    img2: &Tensor<D>,
) -> Outputs {
    let device = img1.device().autodiff();
    let a = Tensor::<D>::from_data(img1.to_data(), &device).require_grad();
    let b = Tensor::<D>::from_data(img2.to_data(), &device).require_grad();
    let out = op(a.clone(), b.clone());
    let weights = random(out.dims(), 99, &device).sub_scalar(0.5);
    let grads = (out.clone() * weights).sum().backward();
    let ga = values(a.grad(&grads).expect("img1 gradient").inner());
    let gb = values(b.grad(&grads).expect("img2 gradient").inner());
    (values(out.inner()), ga, gb)
}

/// Values and both gradients of `fused` against `expected` (as `weighted_value_and_grads`
/// returns them), the gradients relative to the largest expected one.
pub(crate) fn assert_matches(fused: &Outputs, expected: &Outputs, what: &str) {
    // Per-pixel map values of two f32 evaluations: E[x²] − μ² cancels differently in each.
    assert_matches_within(fused, expected, 2e-5, what);
}

/// [`assert_matches`] with the values `value_atol` apart at most.
pub(crate) fn assert_matches_within(
    fused: &Outputs,
    expected: &Outputs,
    value_atol: f32,
    what: &str,
) {
    assert_close(
        &fused.0,
        &expected.0,
        value_atol,
        1e-5,
        &format!("{what} value"),
    );
    let scale = expected.1.iter().fold(0f32, |m, g| m.max(g.abs()));
    assert!(scale > 0.0, "{what}: the expected gradient is all zero");
    assert_close(
        &fused.1,
        &expected.1,
        1e-4 * scale,
        1e-3,
        &format!("{what} d/dimg1"),
    );
    assert_close(
        &fused.2,
        &expected.2,
        1e-4 * scale,
        1e-3,
        &format!("{what} d/dimg2"),
    );
}

/// The fused reduction's value and gradients against the reference's, and the no-grad path.
fn check_reduction<const D: usize, R>(
    img1: &Tensor<D>,
    img2: &Tensor<D>,
    options: SsimOptions,
    r: R,
) where
    R: SsimReduction<D> + std::fmt::Debug,
    R::Output: Into<Flat>,
{
    let what = format!("{r:?} {:?} {:?}", img1.dims(), options.padding);
    let fused = weighted_value_and_grads(
        |a, b| flat(fused_ssim_reduced(a, b, options, r)),
        img1,
        img2,
    );
    let reference = weighted_value_and_grads(
        |a, b| flat(ssim_reference_reduced(a, b, options, r)),
        img1,
        img2,
    );
    assert_matches(&fused, &reference, &what);
    let untracked = values(flat(fused_ssim_reduced(
        img1.clone(),
        img2.clone(),
        options,
        r,
    )));
    // The inference and training kernels compile the same formula apart; σx² + σy² cancels in
    // f32, so their roundings may differ by a few parts in a million at a pixel.
    assert_close(&untracked, &fused.0, 3e-6, 1e-6, &format!("{what} no-grad"));
}

/// Any reduction's output, flattened (so one helper checks every rank).
struct Flat(Tensor<1>);

impl<const R: usize> From<Tensor<R>> for Flat {
    fn from(tensor: Tensor<R>) -> Self {
        Flat(tensor.reshape([-1]))
    }
}

fn flat(output: impl Into<Flat>) -> Tensor<1> {
    output.into().0
}

#[test]
fn reductions_match_reference_2d() {
    let device = device();
    let (a, b) = pair([2, 3, 19, 23], 21, &device);
    for options in [SMALL, SMALL_VALID] {
        check_reduction(&a, &b, options, PerImage);
        check_reduction(&a, &b, options, PerChannel);
        check_reduction(&a, &b, options, Map);
    }
}

#[test]
fn reductions_agree_with_the_mean() {
    let device = device();
    let (a, b) = pair([2, 3, 17, 15], 22, &device);
    for options in [SMALL, SMALL_VALID] {
        let mean = values(fused_ssim(a.clone(), b.clone(), options))[0];
        let map = fused_ssim_reduced(a.clone(), b.clone(), options, Map);
        let per_image = fused_ssim_reduced(a.clone(), b.clone(), options, PerImage);
        let per_channel = fused_ssim_reduced(a.clone(), b.clone(), options, PerChannel);
        let crop = 2 * options.radius() * usize::from(options.padding == Padding::Valid);
        assert_eq!(map.dims(), [2, 3, 17 - crop, 15 - crop]);
        let of = |t: Tensor<1>| values(t)[0];
        assert_close(&[of(map.mean())], &[mean], 1e-6, 1e-5, "map mean");
        assert_close(
            &[of(per_image.mean())],
            &[mean],
            1e-6,
            1e-5,
            "per-image mean",
        );
        assert_close(
            &[of(per_channel.mean())],
            &[mean],
            1e-6,
            1e-5,
            "per-channel mean",
        );
    }
}

#[test]
fn map_matches_reference_3d() {
    let device = device();
    let (a, b) = pair([1, 2, 12, 13, 14], 23, &device);
    for options in [SMALL, SMALL_VALID] {
        check_reduction(&a, &b, options, Map);
        check_reduction(&a, &b, options, PerChannel);
    }
}

/// Central differences of `Σ w · map` in f64 on the f32 op, with Valid padding so that the
/// zero-padded upstream outside the map is exercised.
#[test]
fn map_gradients_match_finite_differences() {
    let device = device();
    let shape = [1, 2, 15, 14];
    let (img1, img2) = pair(shape, 24, &device);
    let (_, g1, g2) = weighted_value_and_grads(
        |a, b| fused_ssim_reduced(a, b, SMALL_VALID, Map),
        &img1,
        &img2,
    );
    // weighted_value_and_grads draws its weights from seed 99 over the output's shape.
    let weights = random([1, 2, 13, 12], 99, &device).sub_scalar(0.5);
    let base = [values(img1), values(img2)];
    let loss_of = |v1: &[f32], v2: &[f32]| -> f64 {
        let x = Tensor::<4>::from_data(TensorData::new(v1.to_vec(), shape), &device);
        let y = Tensor::<4>::from_data(TensorData::new(v2.to_vec(), shape), &device);
        let map = fused_ssim_reduced(x, y, SMALL_VALID, Map);
        values(map)
            .iter()
            .zip(values(weights.clone()))
            .map(|(m, w)| *m as f64 * w as f64)
            .sum()
    };
    let eps = 1e-2f32;
    // Border pixels (outside the map but inside its windows), the centre, the second plane.
    for index in [0, 16, 7 * 14 + 7, 210 + 4 * 14 + 9, 419] {
        for which in 0..2 {
            let mut plus = base.clone();
            let mut minus = base.clone();
            plus[which][index] += eps;
            minus[which][index] -= eps;
            let numeric =
                (loss_of(&plus[0], &plus[1]) - loss_of(&minus[0], &minus[1])) / (2.0 * eps as f64);
            let analytic = [&g1, &g2][which][index] as f64;
            assert!(
                (numeric - analytic).abs() <= 2e-5 + 3e-2 * analytic.abs(),
                "input {} pixel {index}: finite difference {numeric}, analytic {analytic}",
                which + 1
            );
        }
    }
}

#[test]
fn l1_ssim_reductions_match_reference() {
    let device = device();
    let (a, b) = pair([2, 3, 18, 21], 26, &device);
    let lambda = 0.2;
    for options in [SMALL, SMALL_VALID] {
        let reference = |x: Tensor<4>, y: Tensor<4>| -> Tensor<4> {
            let ssim = ssim_reference_reduced(x.clone(), y.clone(), options, Map);
            let [_, _, h, w] = ssim.dims();
            let crop = (x.dims()[2] - h) / 2;
            let l1 = (x - y)
                .abs()
                .slice([0..2, 0..3, crop..crop + h, crop..crop + w]);
            l1.mul_scalar(1.0 - lambda) + ssim.neg().add_scalar(1.0).mul_scalar(lambda)
        };
        let what = format!("L1 + SSIM map {:?}", options.padding);
        let fused = weighted_value_and_grads(
            |x, y| ssim_l1_loss_reduced(x, y, lambda, options, Map),
            &a,
            &b,
        );
        let expected = weighted_value_and_grads(reference, &a, &b);
        assert_matches(&fused, &expected, &what);
        // Per image: the mean loss of each image on its own.
        let per_image = values(ssim_l1_loss_reduced(
            a.clone(),
            b.clone(),
            lambda,
            options,
            PerImage,
        ));
        for (image, got) in per_image.iter().enumerate() {
            let one = |t: &Tensor<4>| t.clone().narrow(0, image, 1);
            let alone = values(ssim_l1_loss(one(&a), one(&b), lambda, options))[0];
            assert_close(
                &[*got],
                &[alone],
                1e-6,
                1e-5,
                &format!("{what} image {image}"),
            );
        }
    }
}

/// The SSIM map of one plane in float64 from the window's f32 taps: zero padding, variances
/// clamped at 0, SSIM clamped to [−1, 1]; for valid padding the interior.
fn float64_map(
    x: &[f32],
    y: &[f32],
    (height, width): (usize, usize),
    options: SsimOptions,
) -> Vec<f64> {
    let taps = gaussian_taps(options.radius(), options.sigma.to_bits());
    let radius = options.radius() as isize;
    let crop = options.radius() * usize::from(options.padding == Padding::Valid);
    let at = |img: &[f64], r: isize, c: isize| -> f64 {
        let inside = (0..height as isize).contains(&r) && (0..width as isize).contains(&c);
        if inside {
            img[r as usize * width + c as usize]
        } else {
            0.0
        }
    };
    let blur = |img: Vec<f64>| -> Vec<f64> {
        let mut rows = vec![0.0; height * width];
        for r in 0..height as isize {
            for c in 0..width as isize {
                rows[r as usize * width + c as usize] = (-radius..=radius)
                    .map(|d| taps[d.unsigned_abs()] as f64 * at(&img, r, c + d))
                    .sum();
            }
        }
        let mut out = vec![0.0; height * width];
        for r in 0..height as isize {
            for c in 0..width as isize {
                out[r as usize * width + c as usize] = (-radius..=radius)
                    .map(|d| taps[d.unsigned_abs()] as f64 * at(&rows, r + d, c))
                    .sum();
            }
        }
        out
    };
    let x: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let y: Vec<f64> = y.iter().map(|&v| v as f64).collect();
    let product = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| p * q).collect::<Vec<_>>();
    let (mu1, mu2) = (blur(x.clone()), blur(y.clone()));
    let (e11, e22, e12) = (
        blur(product(&x, &x)),
        blur(product(&y, &y)),
        blur(product(&x, &y)),
    );
    let (c1, c2) = (1e-4, 9e-4);
    let mut map = Vec::new();
    for r in crop..height - crop {
        for c in crop..width - crop {
            let i = r * width + c;
            let var1 = (e11[i] - mu1[i] * mu1[i]).max(0.0);
            let var2 = (e22[i] - mu2[i] * mu2[i]).max(0.0);
            let cov = e12[i] - mu1[i] * mu2[i];
            let luminance = (2.0 * mu1[i] * mu2[i] + c1) / (mu1[i].powi(2) + mu2[i].powi(2) + c1);
            let contrast = (2.0 * cov + c2) / (var1 + var2 + c2);
            map.push((luminance * contrast).clamp(-1.0, 1.0));
        }
    }
    map
}

#[test]
fn map_of_a_real_photo_matches_float64() {
    let device = device();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let a = load_rgb(format!("{dir}/chelsea.png"), &device).unwrap();
    let b = load_rgb(format!("{dir}/chelsea_degraded.png"), &device).unwrap();
    let [_, channels, height, width] = a.dims();
    let (x, y) = (values(a.clone()), values(b.clone()));
    // The default window: this is the one map test of it (one inference kernel).
    for options in [SAME, VALID] {
        let plane = height * width;
        let expected: Vec<f32> = (0..channels)
            .flat_map(|c| {
                let range = c * plane..(c + 1) * plane;
                float64_map(&x[range.clone()], &y[range], (height, width), options)
            })
            .map(|v| v as f32)
            .collect();
        let fused = values(fused_ssim_reduced(a.clone(), b.clone(), options, Map));
        let what = format!("chelsea map {:?}", options.padding);
        assert_close(&fused, &expected, MAP_ATOL, 0.0, &what);
        let bias = fused
            .iter()
            .zip(&expected)
            .map(|(a, b)| (a - b) as f64)
            .sum::<f64>();
        let bias = bias / fused.len() as f64;
        assert!(bias.abs() < 1e-6, "{what}: the map's mean is off by {bias}");
    }
}

/// A smooth mask in [0, 1] with exact zeros and ones, one channel or `channels`.
pub(crate) fn mask(shape: [usize; 4], device: &Device) -> Tensor<4> {
    random(shape, 27, device)
        .mul_scalar(1.6)
        .sub_scalar(0.3)
        .clamp(0.0, 1.0)
}

#[test]
fn a_mask_of_ones_is_the_unmasked_op() {
    let device = device();
    let (a, b) = pair([2, 3, 16, 19], 28, &device);
    for options in [SMALL, SMALL_VALID] {
        let ones = Tensor::<4>::ones([2, 1, 16, 19], &device);
        let masked = values(fused_ssim_masked(
            a.clone(),
            b.clone(),
            ones.clone(),
            options,
            Mean,
        ));
        let plain = values(fused_ssim(a.clone(), b.clone(), options));
        assert_close(&masked, &plain, 1e-6, 0.0, "mask of ones, mean");
        let masked = values(fused_ssim_masked(
            a.clone(),
            b.clone(),
            ones,
            options,
            PerChannel,
        ));
        let plain = values(fused_ssim_reduced(
            a.clone(),
            b.clone(),
            options,
            PerChannel,
        ));
        assert_close(&masked, &plain, 1e-6, 0.0, "mask of ones, per channel");
    }
}

#[test]
fn masked_ssim_matches_the_weighted_reference_map() {
    let device = device();
    let (a, b) = pair([2, 3, 16, 19], 29, &device);
    let weights = mask([2, 1, 16, 19], &device);
    for options in [SMALL, SMALL_VALID] {
        let what = format!("masked {:?}", options.padding);
        let reference = |x: Tensor<4>, y: Tensor<4>| -> Tensor<1> {
            let map = ssim_reference_reduced(x, y, options, Map);
            let [n, c, h, w] = map.dims();
            let crop = (16 - h) / 2;
            let m = weights
                .clone()
                .slice([0..n, 0..1, crop..crop + h, crop..crop + w]);
            let m = Tensor::<4>::from_data(m.to_data(), &map.device()).expand([n, c, h, w]);
            let per_image = (map * m.clone()).reshape([n as i32, -1]).sum_dim(1);
            (per_image / m.reshape([n as i32, -1]).sum_dim(1)).reshape([n])
        };
        let fused = weighted_value_and_grads(
            |x, y| {
                let m = Tensor::<4>::from_data(weights.to_data(), &x.device());
                fused_ssim_masked(x, y, m, options, PerImage)
            },
            &a,
            &b,
        );
        let expected = weighted_value_and_grads(reference, &a, &b);
        assert_matches(&fused, &expected, &what);
        // One mask channel weighs every channel as the same mask repeated does.
        let repeated = weights.clone().repeat_dim(1, 3);
        let one = values(fused_ssim_masked(
            a.clone(),
            b.clone(),
            weights.clone(),
            options,
            Mean,
        ));
        let three = values(fused_ssim_masked(
            a.clone(),
            b.clone(),
            repeated,
            options,
            Mean,
        ));
        assert_close(&one, &three, 1e-7, 1e-6, &format!("{what} broadcast"));
    }
    // A mask of zeros over an image gives 0 for it, not NaN.
    let zeros = Tensor::<4>::zeros([2, 1, 16, 19], &device);
    let got = values(fused_ssim_masked(a, b, zeros, SAME, PerImage));
    assert_eq!(got, [0.0, 0.0]);
}

#[test]
fn bad_masks_are_errors() {
    let device = device();
    let (a, b) = pair([2, 3, 12, 12], 30, &device);
    let attempt = |m: Tensor<4>| try_fused_ssim_masked(a.clone(), b.clone(), m, SAME, Mean);
    for shape in [[2, 2, 12, 12], [1, 1, 12, 12], [2, 1, 12, 11]] {
        let error = attempt(Tensor::<4>::ones(shape, &device)).err();
        assert!(
            matches!(error, Some(SsimError::MaskShape { .. })),
            "{shape:?}: {error:?}"
        );
    }
    for bad in [f32::NAN, 1.5, -0.25, f32::INFINITY] {
        let mut data = vec![0.5f32; 2 * 144];
        data[77] = bad;
        let m = Tensor::<4>::from_data(TensorData::new(data, [2, 1, 12, 12]), &device);
        let error = attempt(m).err();
        assert!(
            matches!(error, Some(SsimError::BadMask(_))),
            "{bad}: {error:?}"
        );
        let message = error.unwrap().to_string();
        assert!(message.contains("between 0 and 1"), "{message}");
    }
}

#[test]
fn ms_ssim_reductions_are_each_image_and_channel_alone() {
    let device = device();
    // Three scales of a 7-tap window fit a small image.
    let options = MsSsimOptions {
        window: 7,
        sigma: 1.0,
        weights: vec![0.3, 0.3, 0.4],
        ..MsSsimOptions::default()
    };
    let (a, b) = pair([2, 2, 31, 40], 31, &device);
    let per_image = values(ms_ssim_reduced(a.clone(), b.clone(), &options, PerImage));
    let per_channel = values(ms_ssim_reduced(a.clone(), b.clone(), &options, PerChannel));
    let mean = values(ms_ssim_reduced(a.clone(), b.clone(), &options, Mean));
    assert_close(
        &mean,
        &values(ms_ssim(a.clone(), b.clone(), &options)),
        1e-7,
        1e-6,
        "mean",
    );
    for image in 0..2 {
        let one = |t: &Tensor<4>| t.clone().narrow(0, image, 1);
        let alone = values(ms_ssim(one(&a), one(&b), &options))[0];
        assert_close(
            &[per_image[image]],
            &[alone],
            1e-6,
            1e-5,
            &format!("image {image}"),
        );
        for channel in 0..2 {
            let plane = |t: &Tensor<4>| one(t).narrow(1, channel, 1);
            let alone = values(ms_ssim(plane(&a), plane(&b), &options))[0];
            let got = per_channel[image * 2 + channel];
            assert_close(
                &[got],
                &[alone],
                1e-6,
                1e-5,
                &format!("image {image} channel {channel}"),
            );
        }
    }
}
