//! `fused_ssim` against its plain-tensor reference, finite differences, real photos and the
//! bad-input matrix. Run on the device of `$BURN_SAD_DEVICE` (see `common::device`).

use crate::common;

use burn::tensor::Tensor;
use burn_sad::image::load_rgb;
use burn_sad::ssim::{
    Padding, SsimError, SsimLayout, SsimOptions, fused_ssim, ssim_reference, try_fused_ssim,
    uses_fused_kernels,
};
use common::{
    SAME, SMALL, UPSTREAM, VALID, assert_close, assert_matches_central_differences, device, pair,
    random, value_and_grads, values,
};

fn check_against_reference(shape: [usize; 4], options: SsimOptions, seed: u64) {
    check_layouts_against_reference(shape, options, &[options.layout], seed);
}

/// [`check_against_reference`] under each of `layouts`, against one reference evaluation.
fn check_layouts_against_reference(
    shape: [usize; 4],
    options: SsimOptions,
    layouts: &[SsimLayout],
    seed: u64,
) {
    let device = device();
    let (img1, img2) = pair(shape, seed, &device);
    let (reference, ref_g1, ref_g2) =
        value_and_grads(|a, b| ssim_reference(a, b, options), &img1, &img2);
    for &layout in layouts {
        let options = options.with_layout(layout);
        let what = format!("{shape:?} {:?} {layout:?}", options.padding);
        let fused = value_and_grads(|a, b| fused_ssim(a, b, options), &img1, &img2);
        let reference = (reference, ref_g1.clone(), ref_g2.clone());
        compare_with_reference(fused, reference, (&img1, &img2), options, &what);
    }
}

/// The fused value and gradients against the reference's, and the no-grad path's value.
fn compare_with_reference(
    (fused, fused_g1, fused_g2): (f32, Vec<f32>, Vec<f32>),
    (reference, ref_g1, ref_g2): (f32, Vec<f32>, Vec<f32>),
    (img1, img2): (&Tensor<4>, &Tensor<4>),
    options: SsimOptions,
    what: &str,
) {
    assert_close(&[fused], &[reference], 1e-6, 1e-5, &format!("{what} value"));
    let scale = ref_g1.iter().fold(0f32, |m, g| m.max(g.abs()));
    assert!(scale > 0.0, "{what}: the reference gradient is all zero");
    let atol = 1e-4 * scale;
    assert_close(&fused_g1, &ref_g1, atol, 1e-3, &format!("{what} d/dimg1"));
    assert_close(&fused_g2, &ref_g2, atol, 1e-3, &format!("{what} d/dimg2"));
    // The no-grad path is its own kernel: it must give the same value.
    let untracked = values(fused_ssim(img1.clone(), img2.clone(), options))[0];
    assert_close(
        &[untracked],
        &[fused],
        1e-7,
        1e-6,
        &format!("{what} no-grad"),
    );
}

#[test]
fn matches_reference_2x3x37x53() {
    check_against_reference([2, 3, 37, 53], SAME, 1);
    check_against_reference([2, 3, 37, 53], VALID, 2);
}

#[test]
fn matches_reference_1x1x11x11_valid() {
    check_against_reference([1, 1, 11, 11], VALID, 3);
    check_against_reference([1, 1, 11, 11], SAME, 4);
}

#[test]
fn matches_reference_1x4x128x97() {
    check_against_reference([1, 4, 128, 97], SAME, 5);
    check_against_reference([1, 4, 128, 97], VALID, 6);
}

#[test]
fn matches_reference_3x1x300x451() {
    check_against_reference([3, 1, 300, 451], SAME, 7);
    check_against_reference([3, 1, 300, 451], VALID, 8);
}

/// The kernels' layouts (a speed choice only) all compute the reference's values and
/// gradients, on a shape that spans several tiles of each; a layout out of range is an error.
#[test]
fn every_layout_matches_reference() {
    let layouts = [
        SsimLayout::DEFAULT,
        SsimLayout {
            forward_rows: 1,
            forward_strips: 1,
            backward_rows: 1,
            backward_strips: 1,
        },
        SsimLayout {
            forward_rows: 8,
            forward_strips: 8,
            backward_rows: 4,
            backward_strips: 2,
        },
        // More strips than any device's shared memory takes: the launch halves them.
        SsimLayout {
            forward_rows: 22,
            forward_strips: 16,
            backward_rows: 11,
            backward_strips: 16,
        },
    ];
    check_layouts_against_reference([1, 1, 90, 119], SAME, &layouts, 20);
    check_layouts_against_reference([1, 1, 70, 119], VALID, &layouts, 21);
    let (a, b) = pair([1, 1, 16, 16], 40, &device());
    for bad in [
        SsimLayout {
            forward_strips: 3,
            ..SsimLayout::DEFAULT
        },
        SsimLayout {
            forward_rows: 1025,
            ..SsimLayout::DEFAULT
        },
        SsimLayout {
            backward_strips: 32,
            ..SsimLayout::DEFAULT
        },
        SsimLayout {
            backward_rows: 0,
            ..SsimLayout::DEFAULT
        },
    ] {
        assert_eq!(
            try_fused_ssim(a.clone(), b.clone(), SAME.with_layout(bad)).unwrap_err(),
            SsimError::BadLayout(bad)
        );
    }
}

#[test]
fn other_windows_match_reference() {
    // In SMALL's 4-row strips: the windows' kernels compile in a third of the default's time on
    // lavapipe, and the 3-tap one is SMALL itself, which other tests compile anyway. The
    // default layout's windows are the layout sweep's.
    for (window, sigma) in [(3, 0.8), (7, 1.0), (15, 2.5)] {
        let options = SAME.with_window(window, sigma).with_layout(SMALL.layout);
        check_against_reference([1, 2, 23, 19], options, 9);
        check_against_reference([1, 2, 23, 19], options.with_padding(Padding::Valid), 10);
    }
}

/// In SMALL's window: which inputs are tracked is the host's and the kernels' choice of maps,
/// whatever the window, and the default window's kernels compile slowly on lavapipe.
#[test]
fn only_the_tracked_input_gets_a_gradient() {
    let device = device();
    let (img1, img2) = pair([1, 2, 20, 27], 11, &device);
    let (_, ref_g1, ref_g2) = value_and_grads(|a, b| ssim_reference(a, b, SMALL), &img1, &img2);
    let ad = device.autodiff();
    for track_first in [true, false] {
        let a = Tensor::<4>::from_data(img1.to_data(), &ad);
        let b = Tensor::<4>::from_data(img2.to_data(), &ad);
        let (a, b) = if track_first {
            (a.require_grad(), b)
        } else {
            (a, b.require_grad())
        };
        let grads = fused_ssim(a.clone(), b.clone(), SMALL).backward();
        let (tracked, untracked, expected) = if track_first {
            (a, b, &ref_g1)
        } else {
            (b, a, &ref_g2)
        };
        assert!(untracked.grad(&grads).is_none());
        let got = values(tracked.grad(&grads).expect("tracked gradient").inner());
        let expected: Vec<f32> = expected.iter().map(|g| g / UPSTREAM).collect();
        assert_close(&got, &expected, 1e-7, 1e-3, "single-input gradient");
    }
}

/// Central differences in f64 arithmetic on the f32 op, on a small odd image.
#[test]
fn gradients_match_finite_differences() {
    let device = device();
    let shape = [1, 2, 13, 17];
    let (img1, img2) = pair(shape, 12, &device);
    let base1 = values(img1.clone());
    let base2 = values(img2.clone());
    for options in [SAME, VALID] {
        let (_, g1, g2) = value_and_grads(|a, b| fused_ssim(a, b, options), &img1, &img2);
        let ssim_of = |v1: &[f32], v2: &[f32]| -> f64 {
            let a =
                Tensor::<4>::from_data(burn::tensor::TensorData::new(v1.to_vec(), shape), &device);
            let b =
                Tensor::<4>::from_data(burn::tensor::TensorData::new(v2.to_vec(), shape), &device);
            values(fused_ssim(a, b, options))[0] as f64
        };
        // Corners, edges and interior pixels of both planes.
        let indices = [0, 5, 16, 100, 200, 221, 230, 300, 441];
        let what = format!("{:?} pixel", options.padding);
        assert_matches_central_differences(ssim_of, [&base1, &base2], [&g1, &g2], &indices, &what);
    }
}

/// Rows of `data/expected.txt`: name, then same/valid with the exact Gaussian, then same/valid
/// with fused-ssim's float32 taps.
fn expected_photo_values() -> Vec<(String, [f64; 4])> {
    include_str!("../data/expected.txt")
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let values = [1, 2, 3, 4].map(|i| fields[i].parse().unwrap());
            (fields[0].to_string(), values)
        })
        .collect()
}

#[test]
fn real_photos_match_float64_values() {
    let device = device();
    let rows = expected_photo_values();
    assert_eq!(rows.len(), 3);
    for (name, [exact_same, exact_valid, same, valid]) in rows {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
        let a = load_rgb(format!("{dir}/{name}.png"), &device).unwrap();
        let b = load_rgb(format!("{dir}/{name}_degraded.png"), &device).unwrap();
        let got_same = values(fused_ssim(a.clone(), b.clone(), SAME))[0] as f64;
        let got_valid = values(fused_ssim(a.clone(), b.clone(), VALID))[0] as f64;
        // Same taps: only float32 rounding separates the kernel from the float64 value.
        assert!(
            (got_same - same).abs() < 2e-6,
            "{name} same: {got_same} vs {same}"
        );
        assert!(
            (got_valid - valid).abs() < 2e-6,
            "{name} valid: {got_valid} vs {valid}"
        );
        // The reference's taps sum to 1 − 6e-8, which shifts SSIM by ~1e-5 on flat regions.
        assert!(
            (got_same - exact_same).abs() < 3e-5,
            "{name} same (exact window)"
        );
        assert!(
            (got_valid - exact_valid).abs() < 3e-5,
            "{name} valid (exact window)"
        );
        let (_, g1, g2) = value_and_grads(|x, y| fused_ssim(x, y, VALID), &a, &b);
        let (_, r1, r2) = value_and_grads(|x, y| ssim_reference(x, y, VALID), &a, &b);
        let scale = r1.iter().fold(0f32, |m, g| m.max(g.abs()));
        assert_close(&g1, &r1, 1e-4 * scale, 1e-3, &format!("{name} d/dimg1"));
        assert_close(&g2, &r2, 1e-4 * scale, 1e-3, &format!("{name} d/dimg2"));
    }
}

/// Images laid out other than contiguously give the contiguous result: a window of a larger
/// tensor (its rows and planes strided, as CUDA pitches the rows of an f16 image 1920 wide),
/// which the kernels read where it lies, and a transposed view (rows not contiguous), which is
/// copied first. Value and both gradients, for each input in each layout and both windowed
/// (one set of strides for both).
#[test]
fn strided_images_give_the_contiguous_result() {
    let device = device();
    let ad = device.clone().autodiff();
    let shape = [2, 2, 29, 37];
    let (img1, img2) = pair(shape, 31, &device);
    let (value, g1, g2) = value_and_grads(|a, b| fused_ssim(a, b, SMALL), &img1, &img2);
    let [batch, channels, height, width] = shape;
    let window = [0..batch, 0..channels, 0..height, 0..width];
    // A tracked leaf holding `image` in `layout`, the view of it the op reads, and the
    // gradient of the image from the leaf's.
    let lay_out = |image: &Tensor<4>, windowed: bool| {
        if windowed {
            // The top-left corner of a tensor 128 rows and columns larger: the window ends on
            // a 512-byte boundary, so the slice is a view of the larger buffer.
            let larger = Tensor::<4>::zeros([batch, channels, height + 128, width + 128], &device)
                .slice_assign(window.clone(), image.clone());
            let leaf = Tensor::<4>::from_data(larger.to_data(), &ad).require_grad();
            (leaf.clone(), leaf.slice(window.clone()))
        } else {
            let leaf = Tensor::<4>::from_data(image.clone().swap_dims(2, 3).to_data(), &ad);
            let leaf = leaf.require_grad();
            (leaf.clone(), leaf.swap_dims(2, 3))
        }
    };
    let image_grad = |leaf: &Tensor<4>, grads: &_, windowed: bool| {
        let grad = leaf.grad(grads).expect("gradient").inner();
        values(if windowed {
            grad.slice(window.clone())
        } else {
            grad.swap_dims(2, 3)
        })
    };
    let name = |windowed: bool| if windowed { "a window" } else { "transposed" };
    for (windowed1, windowed2) in [(true, false), (false, true), (true, true)] {
        let what = format!("img1 {}, img2 {}", name(windowed1), name(windowed2));
        let (leaf1, a) = lay_out(&img1, windowed1);
        let (leaf2, b) = lay_out(&img2, windowed2);
        let loss = fused_ssim(a, b, SMALL).mul_scalar(UPSTREAM);
        let grads = loss.backward();
        let got = values(loss)[0] / UPSTREAM;
        assert_close(&[got], &[value], 1e-7, 1e-6, &format!("{what}: value"));
        let got1 = image_grad(&leaf1, &grads, windowed1);
        let got2 = image_grad(&leaf2, &grads, windowed2);
        assert_close(&got1, &g1, 1e-7, 1e-5, &format!("{what}: d/dimg1"));
        assert_close(&got2, &g2, 1e-7, 1e-5, &format!("{what}: d/dimg2"));
    }
}

#[test]
fn identical_images_have_ssim_one() {
    let device = device();
    let a = random([1, 3, 40, 33], 13, &device);
    let value = values(fused_ssim(a.clone(), a, SAME))[0];
    assert!((value - 1.0).abs() < 1e-5, "{value}");
    // Flat images hit the variance clamp (fused-ssim #37): still exactly in range.
    let flat = Tensor::<4>::ones([1, 1, 16, 16], &device)
        .mul_scalar(0.5)
        .add_scalar(1e-7);
    let value = values(fused_ssim(flat.clone(), flat, SAME))[0];
    assert!(value <= 1.0 && value > 0.999, "{value}");
}

#[test]
fn bad_inputs_are_rejected_with_a_message() {
    let device = device();
    let a = random([1, 3, 20, 20], 14, &device);
    let b = random([1, 3, 20, 21], 15, &device);
    assert!(matches!(
        try_fused_ssim(a.clone(), b, SAME),
        Err(SsimError::ShapeMismatch { .. })
    ));
    let small = random([1, 1, 10, 30], 16, &device);
    let err = try_fused_ssim(small.clone(), small.clone(), VALID).unwrap_err();
    assert_eq!(
        err,
        SsimError::TooSmallForValid {
            spatial: vec![10, 30],
            window: 11
        }
    );
    assert!(err.to_string().contains("at least 11"));
    assert!(try_fused_ssim(small.clone(), small, SAME).is_ok());
    let empty = Tensor::<4>::zeros([0, 3, 8, 8], &device);
    assert!(matches!(
        try_fused_ssim(empty.clone(), empty, SAME),
        Err(SsimError::Empty { .. })
    ));
    for window in [0, 2, 4, 17] {
        assert_eq!(
            try_fused_ssim(a.clone(), a.clone(), SAME.with_window(window, 1.5)).unwrap_err(),
            SsimError::BadWindow(window)
        );
    }
    for sigma in [0.0, -1.0, f32::NAN] {
        assert!(matches!(
            try_fused_ssim(a.clone(), a.clone(), SAME.with_window(11, sigma)),
            Err(SsimError::BadSigma(_))
        ));
    }
    let panic = std::panic::catch_unwind(|| {
        fused_ssim(
            Tensor::<4>::zeros([1, 1, 4, 4], &device),
            Tensor::<4>::zeros([1, 1, 4, 5], &device),
            SAME,
        )
    })
    .unwrap_err();
    let message = panic.downcast_ref::<String>().expect("formatted panic");
    assert!(message.contains("must match"), "{message}");
}

#[cfg(feature = "flex")]
#[test]
fn inputs_on_different_devices_are_rejected() {
    let device = device();
    let other = if uses_fused_kernels(&device) {
        burn::tensor::Device::flex()
    } else {
        // Flex under test: any compiled-in CubeCL device differs from it.
        match burn_sad::device::DeviceChoice::WgpuCpu.device() {
            Some(other) => other,
            None => return,
        }
    };
    let a = Tensor::<4>::zeros([1, 1, 16, 16], &device);
    let b = Tensor::<4>::zeros([1, 1, 16, 16], &other);
    assert!(matches!(
        try_fused_ssim(a, b, SAME),
        Err(SsimError::DeviceMismatch { .. })
    ));
}

/// An image as a trainable Burn module, for the optimizer test.
#[derive(burn::module::Module, Debug)]
struct Canvas {
    image: burn::module::Param<Tensor<4>>,
}

/// End to end on the default backend with autodiff (and fusion when it is compiled in): a few
/// Adam steps on `1 − SSIM` must raise SSIM.
#[test]
fn optimizer_steps_improve_ssim() {
    use burn::optim::{AdamConfig, GradientsParams};
    let device = device().autodiff();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let target = load_rgb(format!("{dir}/coffee.png"), &device).unwrap();
    let start_image = load_rgb(format!("{dir}/coffee_degraded.png"), &device).unwrap();
    let mut canvas = Canvas {
        image: burn::module::Param::from_tensor(start_image.clone()),
    };
    let mut optimizer = AdamConfig::new().init();
    let start = values(fused_ssim(start_image, target.clone(), SAME))[0];
    for _ in 0..5 {
        let loss = fused_ssim(canvas.image.val(), target.clone(), SAME)
            .neg()
            .add_scalar(1.0);
        let grads = GradientsParams::from_grads(loss.backward(), &canvas);
        canvas = optimizer.step(0.01, canvas, grads);
    }
    let end = values(fused_ssim(canvas.image.val(), target, SAME))[0];
    assert!(end > start + 0.01, "SSIM went from {start} to {end}");
}

#[test]
fn kernels_run_where_expected() {
    let device = device();
    let expect_fused = !matches!(std::env::var("BURN_SAD_DEVICE").as_deref(), Ok("flex"));
    assert_eq!(
        uses_fused_kernels(&device),
        expect_fused && cfg!(feature = "cube")
    );
}
