//! The fused L1+SSIM loss and MS-SSIM against their plain-tensor references, finite differences,
//! a real photo pair and bad input.

use crate::common;

use burn::tensor::{Tensor, TensorData};
use burn_sad::image::load_rgb;
use burn_sad::ssim::{
    MsSsimOptions, Padding, SsimError, SsimOptions, fused_ssim, ms_ssim, ms_ssim_reference,
    ssim_l1_loss, ssim_reference, try_ms_ssim, try_ssim_l1_loss,
};
use common::{UPSTREAM, assert_close, device, pair, random, value_and_grads, values};

fn compare(
    what: &str,
    fused: impl Fn(Tensor<4>, Tensor<4>) -> Tensor<1>,
    reference: impl Fn(Tensor<4>, Tensor<4>) -> Tensor<1>,
    img1: &Tensor<4>,
    img2: &Tensor<4>,
) {
    let (value, g1, g2) = value_and_grads(fused, img1, img2);
    let (want, r1, r2) = value_and_grads(reference, img1, img2);
    assert_close(&[value], &[want], 1e-6, 1e-5, &format!("{what} value"));
    let scale = r1.iter().chain(&r2).fold(0f32, |m, g| m.max(g.abs()));
    assert!(scale > 0.0, "{what}: zero reference gradient");
    assert_close(&g1, &r1, 1e-4 * scale, 1e-3, &format!("{what} d/dimg1"));
    assert_close(&g2, &r2, 1e-4 * scale, 1e-3, &format!("{what} d/dimg2"));
}

fn l1_reference(pred: Tensor<4>, gt: Tensor<4>, lambda: f32, options: SsimOptions) -> Tensor<1> {
    let l1 = (pred.clone() - gt.clone()).abs().mean();
    l1.mul_scalar(1.0 - lambda)
        + ssim_reference(pred, gt, options)
            .neg()
            .add_scalar(1.0)
            .mul_scalar(lambda)
}

#[test]
fn l1_ssim_matches_reference() {
    let device = device();
    for (shape, padding, lambda, seed) in [
        ([2, 3, 37, 53], Padding::Same, 0.2, 1),
        ([1, 3, 64, 45], Padding::Valid, 0.2, 2),
        ([1, 1, 23, 19], Padding::Same, 0.0, 3),
        ([1, 2, 23, 19], Padding::Valid, 1.0, 4),
    ] {
        let options = SsimOptions::default().with_padding(padding);
        let (a, b) = pair(shape, seed, &device);
        compare(
            &format!("L1+SSIM {shape:?} {padding:?} λ={lambda}"),
            |x, y| ssim_l1_loss(x, y, lambda, options),
            |x, y| l1_reference(x, y, lambda, options),
            &a,
            &b,
        );
    }
}

#[test]
fn l1_ssim_matches_finite_differences() {
    let device = device();
    let shape = [1, 2, 13, 17];
    let (a, b) = pair(shape, 5, &device);
    let options = SsimOptions::default();
    let (_, g1, _) = value_and_grads(|x, y| ssim_l1_loss(x, y, 0.2, options), &a, &b);
    let base = values(a.clone());
    let target = values(b.clone());
    let loss_at = |v: &[f32]| -> f64 {
        let x = Tensor::<4>::from_data(TensorData::new(v.to_vec(), shape), &device);
        let y = Tensor::<4>::from_data(TensorData::new(target.clone(), shape), &device);
        values(ssim_l1_loss(x, y, 0.2, options))[0] as f64
    };
    let eps = 2e-3f32;
    for index in [0, 7, 100, 250, 441] {
        if (base[index] - target[index]).abs() < 2.0 * eps {
            continue; // |x| is not differentiable at the kink
        }
        let (mut plus, mut minus) = (base.clone(), base.clone());
        plus[index] += eps;
        minus[index] -= eps;
        let numeric = (loss_at(&plus) - loss_at(&minus)) / (2.0 * eps as f64);
        let analytic = (g1[index] / UPSTREAM) as f64;
        assert!(
            (numeric - analytic).abs() <= 5e-5 + 3e-2 * analytic.abs(),
            "pixel {index}: finite difference {numeric}, analytic {analytic}"
        );
    }
}

#[test]
fn l1_ssim_of_pure_ssim_is_one_minus_ssim() {
    let device = device();
    let (a, b) = pair([1, 3, 40, 41], 6, &device);
    let options = SsimOptions::default();
    let loss = values(ssim_l1_loss(a.clone(), b.clone(), 1.0, options))[0];
    let ssim = values(fused_ssim(a, b, options))[0];
    assert!((loss - (1.0 - ssim)).abs() < 1e-6, "{loss} vs 1 − {ssim}");
}

#[test]
fn ms_ssim_matches_reference() {
    let device = device();
    let options = MsSsimOptions::default();
    for (shape, seed) in [([1, 3, 165, 171], 7), ([2, 1, 177, 162], 8)] {
        let (a, b) = pair(shape, seed, &device);
        compare(
            &format!("MS-SSIM {shape:?}"),
            |x, y| ms_ssim(x, y, &options),
            |x, y| ms_ssim_reference(x, y, &options),
            &a,
            &b,
        );
    }
    // Three scales of a 7-tap window fit a smaller image.
    let small = MsSsimOptions {
        window: 7,
        sigma: 1.0,
        weights: vec![0.3, 0.3, 0.4],
        ..MsSsimOptions::default()
    };
    let (a, b) = pair([1, 2, 31, 40], 9, &device);
    compare(
        "MS-SSIM 3 scales",
        |x, y| ms_ssim(x, y, &small),
        |x, y| ms_ssim_reference(x, y, &small),
        &a,
        &b,
    );
}

/// MS-SSIM's gradient for both inputs against central differences, at pixels of every scale's
/// 2×2 pooling parity (three scales of a 7-tap window keep each evaluation small).
#[test]
fn ms_ssim_matches_finite_differences() {
    let device = device();
    let shape = [1, 2, 31, 40];
    let options = MsSsimOptions {
        window: 7,
        sigma: 1.0,
        weights: vec![0.3, 0.3, 0.4],
        ..MsSsimOptions::default()
    };
    let (a, b) = pair(shape, 10, &device);
    let (_, g1, g2) = value_and_grads(|x, y| ms_ssim(x, y, &options), &a, &b);
    let (base1, base2) = (values(a), values(b));
    let ms_ssim_of = |x: &[f32], y: &[f32]| -> f64 {
        let x = Tensor::<4>::from_data(TensorData::new(x.to_vec(), shape), &device);
        let y = Tensor::<4>::from_data(TensorData::new(y.to_vec(), shape), &device);
        values(ms_ssim(x, y, &options))[0] as f64
    };
    let indices = [0, 41, 82, 600, 1239, 1240 + 523, 2479];
    common::assert_matches_central_differences(
        ms_ssim_of,
        [&base1, &base2],
        [&g1, &g2],
        &indices,
        "MS-SSIM pixel",
    );
}

#[test]
fn ms_ssim_of_a_photo_matches_float64() {
    let device = device();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let row = include_str!("../data/expected_ms_ssim.txt")
        .lines()
        .find(|line| line.starts_with("astronaut_ms"))
        .expect("fixture row");
    let fields: Vec<f64> = row
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().unwrap())
        .collect();
    let a = load_rgb(format!("{dir}/astronaut_ms.png"), &device).unwrap();
    let b = load_rgb(format!("{dir}/astronaut_ms_degraded.png"), &device).unwrap();
    let got = values(ms_ssim(a, b, &MsSsimOptions::default()))[0] as f64;
    // fields[1] uses the same float32 taps as the kernels; fields[0] the exact window.
    assert!((got - fields[1]).abs() < 5e-6, "{got} vs {}", fields[1]);
    assert!(
        (got - fields[0]).abs() < 3e-5,
        "{got} vs {} (exact window)",
        fields[0]
    );
}

#[test]
fn bad_inputs_are_rejected() {
    let device = device();
    let (a, b) = pair([1, 3, 160, 200], 10, &device);
    let err = try_ms_ssim(a.clone(), b.clone(), &MsSsimOptions::default()).unwrap_err();
    assert!(
        matches!(err, SsimError::TooSmallForMsSsim { minimum: 160, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("larger than 160"));
    for weights in [vec![], vec![0.5, f32::NAN], vec![-0.1, 1.1]] {
        let options = MsSsimOptions {
            weights,
            ..MsSsimOptions::default()
        };
        assert!(matches!(
            try_ms_ssim(a.clone(), b.clone(), &options),
            Err(SsimError::BadWeights(_))
        ));
    }
    for lambda in [-0.1, 1.5, f32::NAN] {
        assert!(matches!(
            try_ssim_l1_loss(a.clone(), b.clone(), lambda, SsimOptions::default()),
            Err(SsimError::BadLambda(_))
        ));
    }
    let c = random([1, 3, 160, 201], 11, &device);
    assert!(matches!(
        try_ssim_l1_loss(a, c, 0.2, SsimOptions::default()),
        Err(SsimError::ShapeMismatch { .. })
    ));
}

#[test]
fn ms_ssim_of_anticorrelated_images_is_zero_with_finite_gradients() {
    // 1 − a against a: every scale's contrast-structure term is negative, so the clamped product
    // is 0, and its gradient must be 0, not NaN (ln and powers of values ≤ 0).
    let device = device();
    let (a, _) = pair([1, 2, 170, 180], 12, &device);
    let b = a.clone().neg().add_scalar(1.0);
    let (value, grad_a, grad_b) =
        value_and_grads(|x, y| ms_ssim(x, y, &MsSsimOptions::default()), &a, &b);
    assert_eq!(value, 0.0);
    assert!(
        grad_a.iter().chain(&grad_b).all(|g| *g == 0.0),
        "a gradient through a clamped scale"
    );
}
