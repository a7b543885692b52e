//! `fused_ssim3d` against its plain-tensor reference, finite differences, a volume of real
//! photo content and the bad-input matrix. Run on the device of `$BURN_SAD_DEVICE`.

use crate::common;

use burn::tensor::{Tensor, TensorData};
use burn_sad::image::load_rgb;
use burn_sad::ssim::{
    Padding, SsimError, SsimLayout, SsimOptions, fused_ssim3d, ssim3d_reference, try_fused_ssim3d,
};
use common::{
    SAME, SMALL, UPSTREAM, VALID, assert_close, assert_matches_central_differences, device, pair,
    random, value_and_grads, values,
};

fn check_volumes(vol1: &Tensor<5>, vol2: &Tensor<5>, options: SsimOptions, what: &str) {
    let (fused, fused_g1, fused_g2) =
        value_and_grads(|a, b| fused_ssim3d(a, b, options), vol1, vol2);
    let (reference, ref_g1, ref_g2) =
        value_and_grads(|a, b| ssim3d_reference(a, b, options), vol1, vol2);
    let what = format!("{what} {:?} window {}", options.padding, options.window);
    assert_close(&[fused], &[reference], 1e-6, 1e-5, &format!("{what} value"));
    let scale = ref_g1.iter().fold(0f32, |m, g| m.max(g.abs()));
    assert!(scale > 0.0, "{what}: the reference gradient is all zero");
    assert_close(
        &fused_g1,
        &ref_g1,
        1e-4 * scale,
        1e-3,
        &format!("{what} d/dvol1"),
    );
    assert_close(
        &fused_g2,
        &ref_g2,
        1e-4 * scale,
        1e-3,
        &format!("{what} d/dvol2"),
    );
    // The no-grad path skips the partial maps: it must give the same value.
    let untracked = values(fused_ssim3d(vol1.clone(), vol2.clone(), options))[0];
    assert_close(
        &[untracked],
        &[fused],
        1e-7,
        1e-6,
        &format!("{what} no-grad"),
    );
}

fn check_against_reference(shape: [usize; 5], options: SsimOptions, seed: u64) {
    let (vol1, vol2) = pair(shape, seed, &device());
    check_volumes(&vol1, &vol2, options, &format!("{shape:?}"));
}

#[test]
fn matches_reference_2x1x23x31x29() {
    check_against_reference([2, 1, 23, 31, 29], SAME, 1);
    check_against_reference([2, 1, 23, 31, 29], VALID, 2);
}

#[test]
fn matches_reference_1x2x11x11x11_valid() {
    check_against_reference([1, 2, 11, 11, 11], VALID, 3);
    check_against_reference([1, 2, 11, 11, 11], SAME, 4);
}

#[test]
fn deep_volumes_span_several_depth_chunks() {
    // 37 slices: three depth chunks, the last one partial.
    check_against_reference([1, 1, 37, 9, 40], SAME, 5);
    check_against_reference([1, 1, 37, 12, 13], VALID, 6);
}

#[test]
fn other_layouts_match_reference() {
    let layout = SsimLayout {
        forward_rows: 4,
        forward_strips: 2,
        backward_rows: 2,
        backward_strips: 8,
    };
    check_against_reference([1, 2, 19, 37, 21], SAME.with_layout(layout), 12);
}

#[test]
fn other_windows_match_reference() {
    for (window, sigma) in [(3, 0.8), (7, 2.0)] {
        let options = SAME.with_window(window, sigma);
        check_against_reference([1, 2, 9, 13, 17], options, 7);
        check_against_reference([1, 2, 9, 13, 17], options.with_padding(Padding::Valid), 8);
    }
}

/// In SMALL's window, as the 2D test.
#[test]
fn only_the_tracked_input_gets_a_gradient() {
    let device = device();
    let (vol1, vol2) = pair([1, 1, 12, 14, 15], 9, &device);
    let ad = device.autodiff();
    let (_, full1, full2) = value_and_grads(|a, b| fused_ssim3d(a, b, SMALL), &vol1, &vol2);
    for (tracked, full) in [(0, &full1), (1, &full2)] {
        let a = Tensor::<5>::from_data(vol1.to_data(), &ad);
        let b = Tensor::<5>::from_data(vol2.to_data(), &ad);
        let (a, b) = if tracked == 0 {
            (a.require_grad(), b)
        } else {
            (a, b.require_grad())
        };
        let grads = fused_ssim3d(a.clone(), b.clone(), SMALL)
            .mul_scalar(UPSTREAM)
            .backward();
        let grad = if tracked == 0 {
            a.grad(&grads)
        } else {
            b.grad(&grads)
        };
        let grad = values(grad.expect("tracked input has a gradient").inner());
        assert_close(&grad, full, 1e-9, 1e-5, "single-input gradient");
        let other = if tracked == 0 {
            b.grad(&grads)
        } else {
            a.grad(&grads)
        };
        assert!(other.is_none(), "the untracked input got a gradient");
    }
}

#[test]
fn gradients_match_finite_differences() {
    let device = device();
    let shape = [1, 1, 7, 8, 9];
    for options in [SAME, VALID.with_window(5, 1.0)] {
        let (vol1, vol2) = pair(shape, 10, &device);
        let base1 = values(vol1.clone());
        let base2 = values(vol2.clone());
        let (_, g1, g2) = value_and_grads(|a, b| fused_ssim3d(a, b, options), &vol1, &vol2);
        let ssim_of = |v1: &[f32], v2: &[f32]| -> f64 {
            let a = Tensor::<5>::from_data(TensorData::new(v1.to_vec(), shape), &device);
            let b = Tensor::<5>::from_data(TensorData::new(v2.to_vec(), shape), &device);
            values(fused_ssim3d(a, b, options))[0] as f64
        };
        // Corners, faces and interior voxels.
        let indices = [0, 4, 37, 72, 200, 251, 300, 503];
        let what = format!("{:?} voxel", options.padding);
        assert_matches_central_differences(ssim_of, [&base1, &base2], [&g1, &g2], &indices, &what);
    }
}

/// A volume of real photo content: slice z is the crop of the photo shifted z pixels down and
/// right, like a slow camera pan.
fn photo_volume(name: &str, slices: usize, side: usize) -> Tensor<5> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let photo = load_rgb(format!("{dir}/{name}.png"), &device()).unwrap();
    let crops = (0..slices)
        .map(|z| photo.clone().slice([0..1, 0..3, z..z + side, z..z + side]))
        .collect();
    Tensor::stack(crops, 2)
}

#[test]
fn real_photo_volumes_match_reference() {
    let clean = photo_volume("astronaut", 13, 41);
    let degraded = photo_volume("astronaut_degraded", 13, 41);
    check_volumes(&clean, &degraded, SAME, "astronaut pan");
    check_volumes(&clean, &degraded, VALID, "astronaut pan");
    let value = values(fused_ssim3d(clean.clone(), degraded, SAME))[0];
    assert!(value > 0.2 && value < 0.95, "{value}");
    let identical = values(fused_ssim3d(clean.clone(), clean, SAME))[0];
    assert!((identical - 1.0).abs() < 1e-5, "{identical}");
}

#[test]
fn bad_volumes_are_rejected_with_a_message() {
    let device = device();
    let a = random([1, 1, 12, 12, 12], 11, &device);
    let b = random([1, 1, 12, 12, 13], 12, &device);
    assert!(matches!(
        try_fused_ssim3d(a.clone(), b, SAME),
        Err(SsimError::ShapeMismatch { .. })
    ));
    let shallow = random([1, 1, 10, 30, 30], 13, &device);
    let err = try_fused_ssim3d(shallow.clone(), shallow.clone(), VALID).unwrap_err();
    assert_eq!(
        err,
        SsimError::TooSmallForValid {
            spatial: vec![10, 30, 30],
            window: 11
        }
    );
    assert!(err.to_string().contains("at least 11"), "{err}");
    assert!(try_fused_ssim3d(shallow.clone(), shallow.clone(), SAME).is_ok());
    assert!(matches!(
        try_fused_ssim3d(a.clone(), a.clone(), SAME.with_window(4, 1.5)),
        Err(SsimError::BadWindow(4))
    ));
    assert!(matches!(
        try_fused_ssim3d(a.clone(), a.clone(), SAME.with_window(5, 0.0)),
        Err(SsimError::BadSigma(_))
    ));
    let empty = Tensor::<5>::zeros([1, 1, 0, 8, 8], &device);
    assert!(matches!(
        try_fused_ssim3d(empty.clone(), empty, SAME),
        Err(SsimError::Empty { .. })
    ));
    let slices = Tensor::<5>::zeros([2, 2, 16_400, 1, 1], &device);
    assert!(matches!(
        try_fused_ssim3d(slices.clone(), slices, SAME),
        Err(SsimError::TooManyPlanes(65_600))
    ));
}
