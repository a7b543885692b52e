//! SSIM on other data ranges and constants: pytorch-msssim's values on photos scaled to
//! [0, 255] and [−1, 1] (`tests/data/expected_pytorch_msssim.txt`, made by
//! `tests/data/make_pytorch_msssim.py`), the range reaching every op of the family, gradients
//! by finite differences, and bad ranges and constants refused.

use crate::common;

use burn::tensor::{Int, Tensor};
use burn_sad::image::load_rgb;
use burn_sad::ssim::{
    Map, MaskMode, Mean, MsSsimOptions, Padding, PerChannel, PerImage, SsimError, SsimOptions,
    fused_ssim, fused_ssim_masked, fused_ssim_reduced, fused_ssim_u8, fused_ssim3d, ms_ssim,
    ms_ssim_reduced, ssim_l1_loss, ssim_reference, try_fused_ssim, try_ms_ssim,
};
use common::{
    DATA, assert_close, assert_matches_central_differences, device, pair, value_and_grads, values,
};

/// The rows of `expected_pytorch_msssim.txt`: op, photo, range key, pytorch-msssim's value with
/// its own window.
fn pytorch_msssim_rows() -> Vec<(String, String, String, f64)> {
    std::fs::read_to_string(format!("{DATA}/expected_pytorch_msssim.txt"))
        .expect("expected_pytorch_msssim.txt")
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let value = fields[3].parse().expect("a value");
            (fields[0].into(), fields[1].into(), fields[2].into(), value)
        })
        .collect()
}

/// A photo's values mapped as the range key says (from its [0, 1] values `q / 255`), with the
/// data range and constants pytorch-msssim was given.
fn scaled(photo: Tensor<4>, key: &str) -> (Tensor<4>, f32, (f32, f32)) {
    match key {
        "255" => (photo.mul_scalar(255.0).round(), 255.0, (0.01, 0.03)),
        "pm1" => (photo.mul_scalar(2.0).sub_scalar(1.0), 2.0, (0.01, 0.03)),
        "k" => (photo, 1.0, (0.02, 0.05)),
        "255r1" => (photo.mul_scalar(255.0).round(), 1.0, (0.01, 0.03)),
        other => panic!("unknown range key {other}"),
    }
}

#[test]
fn pytorch_msssim_values_on_other_data_ranges() {
    let device = device();
    let rows = pytorch_msssim_rows();
    assert_eq!(rows.len(), 16);
    for (op, name, key, want) in rows {
        let a = load_rgb(format!("{DATA}/{name}.png"), &device).unwrap();
        let b = load_rgb(format!("{DATA}/{name}_degraded.png"), &device).unwrap();
        let (a, range, (k1, k2)) = scaled(a, &key);
        let (b, ..) = scaled(b, &key);
        let what = format!("{op} {name} {key}");
        // 8-bit values with C1 = 1e-4: the variances' f32 cancellation (E[x²] up to 65025)
        // is no longer small against C2, as it is in every other row.
        let tolerance = if key == "255r1" { 2e-4 } else { 1e-5 };
        let got = if op == "ssim" {
            let options = SsimOptions::default()
                .with_padding(Padding::Valid)
                .with_data_range(range)
                .with_constants(k1, k2);
            let reference = values(ssim_reference(a.clone(), b.clone(), options))[0] as f64;
            assert!(
                (reference - want).abs() < tolerance,
                "{what}: reference {reference} vs {want}"
            );
            values(fused_ssim(a, b, options))[0] as f64
        } else {
            let options = MsSsimOptions::default()
                .with_data_range(range)
                .with_constants(k1, k2);
            values(ms_ssim(a, b, &options))[0] as f64
        };
        assert!(
            (got - want).abs() < tolerance,
            "{what}: {got} vs pytorch-msssim's {want}"
        );
    }
}

/// `op` at data range `range` on inputs times `range` against `op` at range 1 on the inputs:
/// the same value (SSIM is scale-free once its constants scale) and gradients over `range`.
fn check_scale_free<const D: usize>(
    op: impl Fn(Tensor<D>, Tensor<D>, SsimOptions) -> Tensor<1>,
    a: &Tensor<D>,
    b: &Tensor<D>,
    options: SsimOptions,
    what: &str,
) {
    let range = 255.0;
    let (value, g1, g2) = value_and_grads(|x, y| op(x, y, options), a, b);
    let wide = options.with_data_range(range);
    let (wide_value, wide_g1, wide_g2) = value_and_grads(
        |x, y| op(x, y, wide),
        &a.clone().mul_scalar(range),
        &b.clone().mul_scalar(range),
    );
    assert!(
        (wide_value - value).abs() <= 2e-6 + 1e-5 * value.abs(),
        "{what}: {wide_value} at range {range} vs {value} at range 1"
    );
    let scale = g1.iter().chain(&g2).fold(0f32, |m, g| m.max(g.abs()));
    let rescaled = |g: Vec<f32>| g.into_iter().map(|g| g * range).collect::<Vec<_>>();
    assert_close(
        &rescaled(wide_g1),
        &g1,
        1e-4 * scale,
        1e-3,
        &format!("{what} d/dimg1"),
    );
    assert_close(
        &rescaled(wide_g2),
        &g2,
        1e-4 * scale,
        1e-3,
        &format!("{what} d/dimg2"),
    );
}

#[test]
fn the_data_range_reaches_every_op() {
    let device = device();
    let (a, b) = pair([2, 3, 23, 30], 71, &device);
    let (va, vb) = pair([1, 2, 13, 12, 14], 72, &device);
    let mask = pair([2, 1, 23, 30], 73, &device).0;
    for padding in [Padding::Same, Padding::Valid] {
        let options = SsimOptions::default().with_padding(padding);
        check_scale_free(
            fused_ssim,
            &a,
            &b,
            options,
            &format!("fused_ssim {padding:?}"),
        );
    }
    let options = SsimOptions::default();
    check_scale_free(
        |x, y, o| fused_ssim_reduced(x, y, o, PerImage).sum(),
        &a,
        &b,
        options,
        "PerImage",
    );
    check_scale_free(
        |x, y, o| fused_ssim_reduced(x, y, o, PerChannel).sum(),
        &a,
        &b,
        options,
        "PerChannel",
    );
    check_scale_free(
        |x, y, o| fused_ssim_reduced(x, y, o, Map).mean(),
        &a,
        &b,
        options,
        "Map",
    );
    // λ = 1: the loss is 1 − SSIM, scale-free; its L1 term is checked below.
    check_scale_free(
        |x, y, o| ssim_l1_loss(x, y, 1.0, o),
        &a,
        &b,
        options,
        "ssim_l1_loss",
    );
    for mode in [MaskMode::Weights, MaskMode::Window] {
        check_scale_free(
            |x, y, o| {
                let m = Tensor::<4>::from_data(mask.to_data(), &x.device());
                fused_ssim_masked(x, y, m, o, Mean)
            },
            &a,
            &b,
            options.with_mask_mode(mode),
            &format!("masked {mode:?}"),
        );
    }
    check_scale_free(
        fused_ssim3d,
        &va,
        &vb,
        options.with_padding(Padding::Valid),
        "fused_ssim3d",
    );
    // The L1 term is in the data's units: L times the unit range's.
    let range = 255.0;
    let loss = |x: Tensor<4>, y: Tensor<4>, o| values(ssim_l1_loss(x, y, 0.2, o))[0];
    let unit = loss(a.clone(), b.clone(), SsimOptions::default());
    let wide = loss(
        a.clone().mul_scalar(range),
        b.clone().mul_scalar(range),
        SsimOptions::default().with_data_range(range),
    );
    let l1 = values((a.clone() - b.clone()).abs().mean())[0];
    let expected = unit + 0.8 * l1 * (range - 1.0);
    assert!(
        (wide - expected).abs() < 1e-4 * expected.abs(),
        "ssim_l1_loss at range {range}: {wide} vs {expected}"
    );
    // MS-SSIM: average pooling keeps the range.
    let (big_a, big_b) = pair([1, 2, 48, 52], 74, &device);
    let small = MsSsimOptions {
        window: 7,
        sigma: 1.0,
        weights: vec![0.3, 0.3, 0.4],
        ..MsSsimOptions::default()
    };
    let unit = values(ms_ssim_reduced(
        big_a.clone(),
        big_b.clone(),
        &small,
        PerChannel,
    ));
    let wide = values(ms_ssim_reduced(
        big_a.mul_scalar(range),
        big_b.mul_scalar(range),
        &small.clone().with_data_range(range),
        PerChannel,
    ));
    assert_close(&wide, &unit, 2e-6, 1e-5, "ms_ssim at range 255");
}

#[test]
fn an_eight_bit_target_stands_for_its_share_of_the_range() {
    let device = device();
    let (pred, target) = pair([1, 3, 17, 21], 75, &device);
    let levels: Vec<u8> = values(target)
        .iter()
        .map(|v| (v * 255.0).round() as u8)
        .collect();
    let q = burn::tensor::TensorData::new(levels, pred.dims());
    let range = 255.0;
    let grad = |x: Tensor<4>, options: SsimOptions| {
        let ad = device.clone().autodiff();
        let x = Tensor::<4>::from_data(x.to_data(), &ad).require_grad();
        let q = Tensor::<4, Int>::from_data(q.clone(), &ad);
        let value = fused_ssim_u8(x.clone(), q, options, Mean);
        let grads = value.clone().backward();
        (
            values(value)[0],
            values(x.grad(&grads).expect("pred gradient").inner()),
        )
    };
    let (unit, unit_grad) = grad(pred.clone(), SsimOptions::default());
    let (wide, wide_grad) = grad(
        pred.mul_scalar(range),
        SsimOptions::default().with_data_range(range),
    );
    assert!((wide - unit).abs() < 1e-6, "u8 target: {wide} vs {unit}");
    let rescaled: Vec<f32> = wide_grad.iter().map(|g| g * range).collect();
    let scale = unit_grad.iter().fold(0f32, |m, g| m.max(g.abs()));
    assert_close(
        &rescaled,
        &unit_grad,
        1e-4 * scale,
        1e-3,
        "u8 target d/dpred",
    );
}

#[test]
fn gradients_on_minus_one_to_one_match_finite_differences() {
    let device = device();
    let (a, b) = pair([1, 2, 14, 17], 76, &device);
    let (a, b) = (
        a.mul_scalar(2.0).sub_scalar(1.0),
        b.mul_scalar(2.0).sub_scalar(1.0),
    );
    let options = SsimOptions::default()
        .with_data_range(2.0)
        .with_constants(0.02, 0.05);
    let (_, g1, g2) = value_and_grads(|x, y| fused_ssim(x, y, options), &a, &b);
    let dims = a.dims();
    let loss_of = |x: &[f32], y: &[f32]| {
        let x = Tensor::<4>::from_data(burn::tensor::TensorData::new(x.to_vec(), dims), &device);
        let y = Tensor::<4>::from_data(burn::tensor::TensorData::new(y.to_vec(), dims), &device);
        values(fused_ssim(x, y, options))[0] as f64
    };
    let (va, vb) = (values(a), values(b));
    assert_matches_central_differences(
        loss_of,
        [&va, &vb],
        [&g1, &g2],
        &[0, 17, 100, 257, 475],
        "pixel",
    );
}

#[test]
fn bad_data_ranges_and_constants_are_errors() {
    let device = device();
    let (a, b) = pair([1, 1, 16, 16], 77, &device);
    for range in [0.0, -1.0, f32::NAN, f32::INFINITY, 1e-30, 1e30] {
        let options = SsimOptions::default().with_data_range(range);
        let error = try_fused_ssim(a.clone(), b.clone(), options).unwrap_err();
        assert!(
            matches!(error, SsimError::BadDataRange(_)),
            "range {range}: {error}"
        );
        assert!(error.to_string().contains("data range"), "{error}");
    }
    for (k1, k2) in [(0.0, 0.03), (0.01, 1.0), (-0.01, 0.03), (0.01, f32::NAN)] {
        let options = SsimOptions::default().with_constants(k1, k2);
        let error = try_fused_ssim(a.clone(), b.clone(), options).unwrap_err();
        assert!(
            matches!(error, SsimError::BadConstants { .. }),
            "k1 {k1}, k2 {k2}: {error}"
        );
    }
    let (big_a, big_b) = pair([1, 1, 170, 170], 78, &device);
    let options = MsSsimOptions::default().with_data_range(-2.0);
    assert!(matches!(
        try_ms_ssim(big_a, big_b, &options),
        Err(SsimError::BadDataRange(_))
    ));
    let half = SsimOptions::default()
        .with_memory(burn_sad::ssim::SsimMemory::StoreHalf)
        .with_constants(0.01, 0.003);
    assert!(matches!(
        try_fused_ssim(a, b, half),
        Err(SsimError::HalfMapsOverflow(_))
    ));
}
