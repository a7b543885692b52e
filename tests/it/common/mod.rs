//! Shared test helpers.
#![allow(dead_code)]

use burn::tensor::{Device, Tensor, TensorData};
use burn_sad::device::{DeviceChoice, select_device};
use burn_sad::sad::{BackwardStrategy, SiteTable};
use burn_sad::ssim::{Padding, SsimLayout, SsimOptions};

/// The test data folder.
pub const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

/// The device under test: `$BURN_SAD_DEVICE` (default `auto`; CI uses wgpu on lavapipe, and
/// `flex` for the reference fallback).
pub fn device() -> Device {
    let choice = DeviceChoice::from_env().expect("valid BURN_SAD_DEVICE");
    select_device(choice).expect("test device").0
}

/// Whether `device` runs the CubeCL kernels: a test of a kernel that the reference fallback
/// (Flex) does not have calls this first and returns when it is false, after a line on stderr
/// that names the test, so a run that skipped it says so.
pub fn runs_kernels(device: &Device, test: &str) -> bool {
    let runs = burn_sad::device::uses_fused_kernels(device);
    if !runs {
        say(&format!(
            "{test}: not run on this device: it has no CubeCL kernels (the reference ops run)"
        ));
    }
    runs
}

/// The backward strategies `device` runs, every one of them where its kernels have plane sums;
/// each one it cannot run is named on stderr (`what` says which test skips it), so a run that
/// covers fewer is visible in the test's output.
pub fn backward_strategies(device: &Device, what: &str) -> Vec<BackwardStrategy> {
    let (run, skipped): (Vec<_>, Vec<_>) = BackwardStrategy::ALL
        .into_iter()
        .partition(|strategy| strategy.supported(device));
    for strategy in skipped {
        say(&format!(
            "{what}: backward strategy {strategy} not run: this device has no plane sums"
        ));
    }
    run
}

/// Writes `line` to the process's stderr past libtest's capture (which keeps a passing test's
/// `eprintln!` to itself), so that what a test could not check shows in every run's output.
pub fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The reference SSIM definition with `same` padding (11 taps, σ = 1.5).
pub const SAME: SsimOptions = SsimOptions::DEFAULT;
/// The reference SSIM definition with `valid` padding.
pub const VALID: SsimOptions = SsimOptions {
    padding: Padding::Valid,
    ..SsimOptions::DEFAULT
};

/// A 3-tap window in 4-row strips: the smallest kernels. For the tests of paths that neither
/// the window nor the tiling changes (input dtypes, memory modes): each combination compiles
/// its own kernels, and on lavapipe the default window's take seconds each.
pub const SMALL: SsimOptions = SsimOptions {
    window: 3,
    sigma: 0.8,
    layout: SsimLayout {
        forward_rows: 4,
        forward_strips: 4,
        backward_rows: 4,
        backward_strips: 4,
    },
    ..SsimOptions::DEFAULT
};

/// Uniform [0, 1) data from a fixed seed, so failures reproduce.
pub fn random<const D: usize>(shape: [usize; D], seed: u64, device: &Device) -> Tensor<D> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let values: Vec<f32> = (0..shape.iter().product::<usize>())
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect();
    Tensor::from_data(TensorData::new(values, shape), device)
}

/// A second image correlated with the first, so SSIM is far from 0 and from 1.
pub fn pair<const D: usize>(
    shape: [usize; D],
    seed: u64,
    device: &Device,
) -> (Tensor<D>, Tensor<D>) {
    let a = random(shape, seed, device);
    let noise = random(shape, seed + 1, device);
    let b = (a.clone() * 0.7 + noise * 0.3).clamp(0.0, 1.0);
    (a, b)
}

/// The upstream gradient `value_and_grads` applies, so the backward's scaling is exercised.
pub const UPSTREAM: f32 = -3.0;

/// Value and both gradients of `UPSTREAM · op(img1, img2)` on an autodiff device.
pub fn value_and_grads<const D: usize>(
    op: impl Fn(Tensor<D>, Tensor<D>) -> Tensor<1>,
    img1: &Tensor<D>,
    img2: &Tensor<D>,
) -> (f32, Vec<f32>, Vec<f32>) {
    let device = img1.device().autodiff();
    let a = Tensor::<D>::from_data(img1.to_data(), &device).require_grad();
    let b = Tensor::<D>::from_data(img2.to_data(), &device).require_grad();
    let loss = op(a.clone(), b.clone()).mul_scalar(UPSTREAM);
    let grads = loss.backward();
    let value = values(loss)[0] / UPSTREAM;
    let ga = values(a.grad(&grads).expect("img1 gradient").inner());
    let gb = values(b.grad(&grads).expect("img2 gradient").inner());
    (value, ga, gb)
}

/// Checks the gradients `analytic` (one per input, of `UPSTREAM · loss`, as
/// `value_and_grads` returns them) against central differences of `loss_of` (in f64, on the f32
/// op) at `indices` of both inputs `bases`, with a step of 10⁻²; `what` names an element
/// ("pixel", "voxel") in the message.
///
/// The f32 loss rounds differently as an input moves (its sums over tiles and planes): each
/// difference carries a few ULPs of the loss, so a gradient is checked to within 8 ULPs of the
/// loss over the step (5e-5 for a loss near 1), or 2e-5 if that is more, plus 3 %.
pub fn assert_matches_central_differences(
    loss_of: impl Fn(&[f32], &[f32]) -> f64,
    bases: [&[f32]; 2],
    analytic: [&[f32]; 2],
    indices: &[usize],
    what: &str,
) {
    let eps = 1e-2f32;
    let loss = loss_of(bases[0], bases[1]);
    let noise = 8.0 * f32::EPSILON as f64 * loss.abs() / (2.0 * eps as f64);
    let floor = noise.max(2e-5);
    for &index in indices {
        for which in 0..2 {
            let mut plus = bases.map(<[f32]>::to_vec);
            let mut minus = plus.clone();
            plus[which][index] += eps;
            minus[which][index] -= eps;
            let numeric =
                (loss_of(&plus[0], &plus[1]) - loss_of(&minus[0], &minus[1])) / (2.0 * eps as f64);
            let analytic = (analytic[which][index] / UPSTREAM) as f64;
            assert!(
                (numeric - analytic).abs() <= floor + 3e-2 * analytic.abs(),
                "input {} {what} {index}: finite difference {numeric}, analytic {analytic}",
                which + 1
            );
        }
    }
}

/// Reads a tensor back as f32 values.
pub fn values<const D: usize>(tensor: Tensor<D>) -> Vec<f32> {
    tensor.try_to_vec_as::<f32>().expect("readable tensor")
}

/// Asserts `|a − b| ≤ atol + rtol·|b|` element-wise, reporting the worst element.
pub fn assert_close(actual: &[f32], expected: &[f32], atol: f32, rtol: f32, what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: length");
    let mut worst = (0usize, 0f32);
    for (i, (a, b)) in actual.iter().zip(expected).enumerate() {
        assert!(a.is_finite(), "{what}: element {i} is {a}");
        let excess = (a - b).abs() - (atol + rtol * b.abs());
        if excess > worst.1 {
            worst = (i, excess);
        }
    }
    let (i, excess) = worst;
    assert!(
        excess <= 0.0,
        "{what}: element {i} is {} but expected {} (atol {atol}, rtol {rtol})",
        actual[i],
        expected[i]
    );
}

/// `count` random live sites over a `width × height` image, plus `dead` inactive slots spread
/// among them; parameters in the ranges training produces.
pub fn random_sites(
    count: usize,
    dead: usize,
    width: usize,
    height: usize,
    seed: u64,
) -> SiteTable {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let mut sites = Vec::new();
    for i in 0..count + dead {
        if i % 7 == 3 && sites.len() < count + dead && i / 7 < dead {
            sites.push([-1.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
            continue;
        }
        let angle = next() * std::f32::consts::TAU;
        sites.push([
            next() * (width - 1) as f32,
            next() * (height - 1) as f32,
            4.0 + 2.5 * next(),
            1.0 + 4.0 * next(),
            next(),
            next(),
            next(),
            angle.cos(),
            angle.sin(),
            2.0 * next() - 1.0,
        ]);
    }
    SiteTable {
        width,
        height,
        sites,
    }
}
