//! `fused_ssim_masked` in `MaskMode::Window` (normalised convolution): a mask of ones is the
//! unmasked op, values and gradients match the plain-tensor reference and finite differences,
//! what lies behind the mask changes nothing, both memory modes agree, a photo with a hole
//! matches a float64 evaluation written here, and volumes are refused.

use crate::common;
use crate::ssim_reductions::{
    assert_matches, assert_matches_within, mask, weighted_value_and_grads,
};

use burn::tensor::{Tensor, TensorData};
use burn_sad::image::load_rgb;
use burn_sad::ssim::{
    Map, MaskMode, Mean, Padding, PerChannel, PerImage, SsimError, SsimMemory, SsimOptions,
    fused_ssim_masked, fused_ssim_reduced, ssim_masked_reference, try_fused_ssim_masked,
};
use burn_sad_kernels::ssim::gaussian_taps;
use common::{
    SAME, SMALL, assert_close, assert_matches_central_differences, device, pair, value_and_grads,
    values,
};

/// [`SMALL`] under a window mask, with each padding.
const WINDOW_SAME: SsimOptions = SsimOptions {
    mask_mode: MaskMode::Window,
    ..SMALL
};
const WINDOW_VALID: SsimOptions = SsimOptions {
    padding: Padding::Valid,
    ..WINDOW_SAME
};

#[test]
fn a_window_mask_of_ones_is_the_unmasked_op() {
    let device = device();
    let (a, b) = pair([2, 3, 19, 23], 41, &device);
    let ones = Tensor::<4>::ones([2, 1, 19, 23], &device);
    for options in [WINDOW_SAME, WINDOW_VALID] {
        let what = format!("window mask of ones, {:?}", options.padding);
        let masked = fused_ssim_masked(a.clone(), b.clone(), ones.clone(), options, PerChannel);
        let plain = fused_ssim_reduced(a.clone(), b.clone(), options, PerChannel);
        assert_close(&values(masked), &values(plain), 1e-6, 0.0, &what);
        let masked = fused_ssim_masked(a.clone(), b.clone(), ones.clone(), options, Map);
        let plain = fused_ssim_reduced(a.clone(), b.clone(), options, Map);
        // A pixel's value rounds apart by a few parts in a million (m·x² + m·y² against
        // x² + y², divided by a blurred mask within an ulp of 1, before σx² + σy² cancels).
        assert_close(
            &values(masked),
            &values(plain),
            4e-6,
            0.0,
            &format!("{what}, map"),
        );
    }
}

#[test]
fn window_masked_ssim_matches_the_reference() {
    let device = device();
    let (a, b) = pair([2, 3, 17, 21], 42, &device);
    for options in [WINDOW_SAME, WINDOW_VALID] {
        // One mask for every channel, and one per channel.
        for channels in [1, 3] {
            let weights = mask([2, channels, 17, 21], &device);
            let what = format!("window mask {:?}, {channels} channel(s)", options.padding);
            let with_mask = |x: &Tensor<4>| Tensor::<4>::from_data(weights.to_data(), &x.device());
            let fused = weighted_value_and_grads(
                |x, y| {
                    let m = with_mask(&x);
                    fused_ssim_masked(x, y, m, options, PerImage)
                },
                &a,
                &b,
            );
            let expected = weighted_value_and_grads(
                |x, y| {
                    let m = with_mask(&x);
                    ssim_masked_reference(x, y, m, options, PerImage)
                },
                &a,
                &b,
            );
            assert_matches(&fused, &expected, &what);
            let fused = weighted_value_and_grads(
                |x, y| {
                    let m = with_mask(&x);
                    fused_ssim_masked(x, y, m, options, Map).reshape([-1])
                },
                &a,
                &b,
            );
            let expected = weighted_value_and_grads(
                |x, y| {
                    let m = with_mask(&x);
                    ssim_masked_reference(x, y, m, options, Map).reshape([-1])
                },
                &a,
                &b,
            );
            // A window holding few weighted pixels has little variance, so E[x²] − μ² cancels
            // more there than in an unmasked window: the two f32 maps differ by up to 1e-4 at
            // such pixels (the float64 photo test bounds the fused op's own error).
            assert_matches_within(&fused, &expected, 1e-4, &format!("{what}, map"));
        }
    }
}

#[test]
fn window_masked_gradients_match_finite_differences() {
    let device = device();
    let shape = [1, 1, 11, 13];
    let (a, b) = pair(shape, 43, &device);
    let weights = values(mask(shape, &device));
    for options in [WINDOW_SAME, WINDOW_VALID] {
        let mask_of = |device: &burn::tensor::Device| {
            Tensor::<4>::from_data(TensorData::new(weights.clone(), shape), device)
        };
        let (_, g1, g2) = value_and_grads(
            |x, y| {
                let m = mask_of(&x.device());
                fused_ssim_masked(x, y, m, options, Mean)
            },
            &a,
            &b,
        );
        let ssim_of = |v1: &[f32], v2: &[f32]| -> f64 {
            let x = Tensor::<4>::from_data(TensorData::new(v1.to_vec(), shape), &device);
            let y = Tensor::<4>::from_data(TensorData::new(v2.to_vec(), shape), &device);
            values(fused_ssim_masked(x, y, mask_of(&device), options, Mean))[0] as f64
        };
        let (base1, base2) = (values(a.clone()), values(b.clone()));
        // Corners, edges, interior pixels, and pixels whose weight is 0 (gradient 0) or 1.
        let mut indices = vec![0, 6, 12, 70, 71, 100, 142];
        indices.extend(weights.iter().position(|&w| w == 0.0));
        indices.extend(weights.iter().position(|&w| w == 1.0));
        let what = format!("window-masked {:?} pixel", options.padding);
        assert_matches_central_differences(ssim_of, [&base1, &base2], [&g1, &g2], &indices, &what);
    }
}

#[test]
fn what_lies_behind_a_window_mask_changes_nothing() {
    let device = device();
    let (a, b) = pair([1, 3, 20, 24], 44, &device);
    let weights = mask([1, 1, 20, 24], &device);
    let hidden = weights
        .clone()
        .equal_elem(0.0)
        .float()
        .expand([1, 3, 20, 24]);
    // Noise of up to ±0.5 only where the weight is 0.
    let noise = common::random([1, 3, 20, 24], 45, &device).sub_scalar(0.5);
    let garbled = (b.clone() + noise * hidden).clamp(0.0, 1.0);
    let of = |target: Tensor<4>, options: SsimOptions| {
        values(fused_ssim_masked(
            a.clone(),
            target,
            weights.clone(),
            options,
            PerChannel,
        ))
    };
    let clean = of(b.clone(), WINDOW_SAME);
    assert_close(
        &of(garbled.clone(), WINDOW_SAME),
        &clean,
        1e-7,
        0.0,
        "window mask",
    );
    // The weighted map, by contrast, does see those pixels through the windows around them.
    let weighted = SsimOptions {
        mask_mode: MaskMode::Weights,
        ..WINDOW_SAME
    };
    let moved = of(garbled, weighted)
        .iter()
        .zip(of(b, weighted))
        .map(|(x, y)| (x - y).abs())
        .fold(0f32, f32::max);
    assert!(moved > 1e-3, "the weighted map moved by only {moved}");
}

#[test]
fn window_masks_recompute_as_they_store() {
    let device = device();
    let (a, b) = pair([1, 2, 15, 18], 46, &device);
    let weights = mask([1, 1, 15, 18], &device);
    let run = |memory: SsimMemory| {
        let options = WINDOW_SAME.with_memory(memory);
        value_and_grads(
            |x, y| {
                let m = Tensor::<4>::from_data(weights.to_data(), &x.device());
                fused_ssim_masked(x, y, m, options, Mean)
            },
            &a,
            &b,
        )
    };
    let (stored, recomputed) = (run(SsimMemory::Store), run(SsimMemory::Recompute));
    assert_close(&[recomputed.0], &[stored.0], 0.0, 0.0, "value");
    assert_close(&recomputed.1, &stored.1, 0.0, 0.0, "d/dimg1");
    assert_close(&recomputed.2, &stored.2, 0.0, 0.0, "d/dimg2");
}

#[test]
fn window_masks_on_volumes_are_an_error() {
    let device = device();
    let (a, b) = pair([1, 1, 8, 12, 12], 47, &device);
    let ones = Tensor::<5>::ones([1, 1, 8, 12, 12], &device);
    let error = try_fused_ssim_masked(a, b, ones, WINDOW_SAME, Mean).err();
    assert_eq!(error, Some(SsimError::WindowMaskIn3d));
}

/// Window-masked SSIM in float64, written from the definition and independent of the crate's
/// code: per channel, the images padded with zeros and the mask with ones (`Same` padding), a
/// separable blur with `taps` (centre first), the moments as ratios of the blurred `m·x`, …
/// to the blurred `m`, fused-ssim's clamps, and the mean of the map weighted by the mask.
fn window_masked_ssim_f64(
    a: &[f32],
    b: &[f32],
    m: &[f32],
    [channels, height, width]: [usize; 3],
    taps: &[f32],
) -> f64 {
    let r = taps.len() - 1;
    let (ph, pw) = (height + 2 * r, width + 2 * r);
    let tap = |d: isize| taps[d.unsigned_abs()] as f64;
    let blur = |plane: &[f64]| -> Vec<f64> {
        let mut rows = vec![0.0; ph * width];
        for y in 0..ph {
            for x in 0..width {
                rows[y * width + x] = (0..=2 * r)
                    .map(|k| tap(k as isize - r as isize) * plane[y * pw + x + k])
                    .sum();
            }
        }
        let mut out = vec![0.0; height * width];
        for y in 0..height {
            for x in 0..width {
                out[y * width + x] = (0..=2 * r)
                    .map(|k| tap(k as isize - r as isize) * rows[(y + k) * width + x])
                    .sum();
            }
        }
        out
    };
    let (c1, c2) = (1e-4, 9e-4);
    let (mut sum, mut weight) = (0.0, 0.0);
    for c in 0..channels {
        let plane = c * height * width;
        let mut maps = vec![vec![0.0; ph * pw]; 6];
        for y in 0..ph {
            for x in 0..pw {
                let inside = (r..r + height).contains(&y) && (r..r + width).contains(&x);
                let (p, q, w) = if inside {
                    let i = (y - r) * width + x - r;
                    (a[plane + i] as f64, b[plane + i] as f64, m[i] as f64)
                } else {
                    (0.0, 0.0, 1.0)
                };
                let values = [w, w * p, w * q, w * p * p, w * q * q, w * p * q];
                for (map, value) in maps.iter_mut().zip(values) {
                    map[y * pw + x] = value;
                }
            }
        }
        let blurred: Vec<Vec<f64>> = maps.iter().map(|map| blur(map)).collect();
        for i in 0..height * width {
            let w = blurred[0][i];
            if w <= 0.0 {
                continue;
            }
            let [mu1, mu2, e11, e22, e12] = [1, 2, 3, 4, 5].map(|k| blurred[k][i] / w);
            let var1 = (e11 - mu1 * mu1).max(0.0);
            let var2 = (e22 - mu2 * mu2).max(0.0);
            let cov = e12 - mu1 * mu2;
            let ssim = ((2.0 * mu1 * mu2 + c1) * (2.0 * cov + c2)
                / ((mu1 * mu1 + mu2 * mu2 + c1) * (var1 + var2 + c2)))
                .clamp(-1.0, 1.0);
            sum += m[i] as f64 * ssim;
            weight += m[i] as f64;
        }
    }
    sum / weight
}

#[test]
fn a_photo_with_a_hole_matches_float64() {
    let device = device();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let a = load_rgb(format!("{dir}/chelsea.png"), &device).unwrap();
    let b = load_rgb(format!("{dir}/chelsea_degraded.png"), &device).unwrap();
    let [_, channels, height, width] = a.dims();
    // A hole with a soft edge: weight 0 inside a 40×30 rectangle, rising linearly to 1 over
    // 4 pixels around it.
    let weights: Vec<f32> = (0..height * width)
        .map(|i| {
            let (y, x) = ((i / width) as f32, (i % width) as f32);
            let outside_y = (44.0 - y).max(y - 74.0).max(0.0);
            let outside_x = (40.0 - x).max(x - 80.0).max(0.0);
            (outside_y.max(outside_x) / 4.0).min(1.0)
        })
        .collect();
    assert!(weights.contains(&0.0) && weights.contains(&1.0));
    let m = Tensor::<4>::from_data(
        TensorData::new(weights.clone(), [1, 1, height, width]),
        &device,
    );
    let options = SAME.with_mask_mode(MaskMode::Window);
    let got = values(fused_ssim_masked(a.clone(), b.clone(), m, options, Mean))[0] as f64;
    let taps = gaussian_taps(options.radius(), options.sigma.to_bits());
    let expected = window_masked_ssim_f64(
        &values(a),
        &values(b),
        &weights,
        [channels, height, width],
        &taps,
    );
    assert!(
        (got - expected).abs() < 1e-5,
        "chelsea with a hole: {got} against float64 {expected}"
    );
}
