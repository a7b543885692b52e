//! `SsimMemory::Recompute` and `StoreHalf` against `Store`: the same value, the same
//! gradients (to f16's rounding for `StoreHalf`), and less device memory held between the
//! forward and the backward.

use crate::common;

use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_sad::image::load_rgb;
use burn_sad::ssim::{
    Mean, Padding, SsimError, SsimMemory, SsimOptions, fused_ssim, fused_ssim_u8, fused_ssim3d,
    ssim_l1_loss, try_fused_ssim,
};
use common::{DATA, SMALL, assert_close, device, pair, runs_kernels, say, value_and_grads, values};

const LEAN: SsimMemory = SsimMemory::Recompute;

#[test]
fn recomputing_gives_the_stored_modes_values_and_gradients() {
    let device = device();
    let (a, b) = pair([2, 3, 19, 22], 51, &device);
    let (va, vb) = pair([1, 2, 11, 12, 13], 52, &device);
    for options in [SMALL, SMALL.with_padding(Padding::Valid)] {
        let lean = options.with_memory(LEAN);
        let what = format!("{:?}", options.padding);
        let pairs = [
            (
                value_and_grads(|x, y| fused_ssim(x, y, options), &a, &b),
                value_and_grads(|x, y| fused_ssim(x, y, lean), &a, &b),
                "fused_ssim",
            ),
            (
                value_and_grads(|x, y| ssim_l1_loss(x, y, 0.2, options), &a, &b),
                value_and_grads(|x, y| ssim_l1_loss(x, y, 0.2, lean), &a, &b),
                "ssim_l1_loss",
            ),
            (
                value_and_grads(|x, y| fused_ssim3d(x, y, options), &va, &vb),
                value_and_grads(|x, y| fused_ssim3d(x, y, lean), &va, &vb),
                "fused_ssim3d",
            ),
        ];
        for ((value, g1, g2), (lean_value, lean_g1, lean_g2), op) in pairs {
            let what = format!("{op} {what}");
            assert_close(&[lean_value], &[value], 0.0, 1e-6, &format!("{what} value"));
            assert_close(&lean_g1, &g1, 1e-9, 1e-5, &format!("{what} d/dimg1"));
            assert_close(&lean_g2, &g2, 1e-9, 1e-5, &format!("{what} d/dimg2"));
        }
    }
    // An 8-bit target: only the prediction is tracked.
    let target = Tensor::<4, Int>::from_data(
        TensorData::new(
            (0..2 * 3 * 19 * 22).map(|i: i32| i * 37 % 256).collect(),
            b.dims(),
        ),
        &device,
    );
    let grad_of = |memory: SsimMemory| {
        let ad = device.clone().autodiff();
        let x = Tensor::<4>::from_data(a.to_data(), &ad).require_grad();
        let q = Tensor::<4, Int>::from_data(target.to_data(), &ad);
        let options = SMALL.with_memory(memory);
        let grads = fused_ssim_u8(x.clone(), q, options, Mean).backward();
        values(x.grad(&grads).expect("pred gradient").inner())
    };
    let stored = grad_of(SsimMemory::Store);
    assert_close(&grad_of(LEAN), &stored, 1e-9, 1e-5, "u8 target d/dpred");
}

/// Whether `device` takes [`SsimMemory::StoreHalf`]: a device that stores no f16 values refuses
/// it with [`SsimError::UnsupportedDevice`] (checked here), and `test` then says it skipped.
fn stores_half(device: &Device, test: &str) -> bool {
    let (a, b) = pair([1, 1, 16, 16], 60, device);
    let half = SsimOptions::default().with_memory(SsimMemory::StoreHalf);
    match try_fused_ssim(a, b, half) {
        Ok(_) => true,
        Err(SsimError::UnsupportedDevice(line)) => {
            assert!(line.contains("f16"), "the refusal names f16: {line}");
            say(&format!(
                "{test}: this device stores no f16 ({line}); skipped"
            ));
            false
        }
        Err(other) => panic!("{test}: unexpected error {other}"),
    }
}

/// `|actual − expected| ≤ bound · max|expected|` element-wise: the error of maps rounded to
/// f16, blurred and summed, relative to the gradient's largest magnitude.
fn assert_within_scale(actual: &[f32], expected: &[f32], bound: f32, what: &str) {
    let scale = expected.iter().fold(0f32, |m, v| m.max(v.abs()));
    assert!(scale > 0.0, "{what}: a zero gradient checks nothing");
    let worst = actual
        .iter()
        .zip(expected)
        .fold(0f32, |m, (a, b)| m.max((a - b).abs()));
    say(&format!(
        "{what}: largest error {:.2e} of the largest gradient",
        worst / scale
    ));
    assert_close(actual, expected, bound * scale, 0.0, what);
}

#[test]
fn half_maps_give_the_stored_modes_value_and_gradients_to_f16_rounding() {
    let device = device();
    let test = "half_maps_give_the_stored_modes_value_and_gradients_to_f16_rounding";
    if !runs_kernels(&device, test) || !stores_half(&device, test) {
        return;
    }
    let (a, b) = pair([2, 3, 19, 22], 61, &device);
    let (va, vb) = pair([1, 2, 11, 12, 13], 62, &device);
    let photo = load_rgb(format!("{DATA}/coffee.png"), &device).unwrap();
    let degraded = load_rgb(format!("{DATA}/coffee_degraded.png"), &device).unwrap();
    for options in [SMALL, SsimOptions::default().with_padding(Padding::Valid)] {
        let half = options.with_memory(SsimMemory::StoreHalf);
        let what = format!("{:?}", options.padding);
        let pairs = [
            (
                value_and_grads(|x, y| fused_ssim(x, y, options), &a, &b),
                value_and_grads(|x, y| fused_ssim(x, y, half), &a, &b),
                "fused_ssim",
            ),
            (
                value_and_grads(|x, y| fused_ssim(x, y, options), &photo, &degraded),
                value_and_grads(|x, y| fused_ssim(x, y, half), &photo, &degraded),
                "fused_ssim on a photo",
            ),
            (
                value_and_grads(|x, y| ssim_l1_loss(x, y, 0.2, options), &a, &b),
                value_and_grads(|x, y| ssim_l1_loss(x, y, 0.2, half), &a, &b),
                "ssim_l1_loss",
            ),
        ];
        for ((value, g1, g2), (half_value, half_g1, half_g2), op) in pairs {
            let what = format!("{op} {what}");
            assert_eq!(
                half_value, value,
                "{what}: the value is computed in f32 alike"
            );
            assert_within_scale(&half_g1, &g1, 1e-2, &format!("{what} d/dimg1"));
            assert_within_scale(&half_g2, &g2, 1e-2, &format!("{what} d/dimg2"));
            assert_ne!(half_g1, g1, "{what}: f16 maps round something");
        }
        let (value, g1, g2) = value_and_grads(|x, y| fused_ssim3d(x, y, options), &va, &vb);
        let (half_value, half_g1, half_g2) =
            value_and_grads(|x, y| fused_ssim3d(x, y, half), &va, &vb);
        assert_eq!(half_value, value, "fused_ssim3d {what} value");
        assert_within_scale(&half_g1, &g1, 1e-2, &format!("fused_ssim3d {what} d/dimg1"));
        assert_within_scale(&half_g2, &g2, 1e-2, &format!("fused_ssim3d {what} d/dimg2"));
    }
}

/// Bytes the device's memory pool has in use, where it reports them.
fn bytes_in_use(device: &Device) -> Option<u64> {
    device.memory_pool_usage().map(|usage| usage.bytes_in_use)
}

/// Set in the process that [`recomputing_holds_no_partial_maps_until_the_backward`] starts to
/// measure alone.
const MEASURE_ALONE: &str = "BURN_SAD_TEST_MEASURE_ALONE";

#[test]
fn recomputing_holds_no_partial_maps_until_the_backward() {
    let test = "recomputing_holds_no_partial_maps_until_the_backward";
    // The memory pool is the device's: the other tests of this process allocate in it as they
    // run beside this one, so the measurement runs alone, in a process of its own.
    if std::env::var_os(MEASURE_ALONE).is_none() {
        let name = format!("ssim_memory::{test}");
        let status = std::process::Command::new(std::env::current_exe().expect("the test binary"))
            .args([
                name.as_str(),
                "--exact",
                "--test-threads",
                "1",
                "--nocapture",
            ])
            .env(MEASURE_ALONE, "1")
            .status()
            .expect("the test binary runs again");
        assert!(
            status.success(),
            "{test}, measured alone, failed ({status})"
        );
        return;
    }
    let device = device();
    if bytes_in_use(&device).is_none() {
        say(&format!(
            "{test}: this device reports no memory pool use; skipped"
        ));
        return;
    }
    let shape = [1, 3, 128, 160];
    let (a, b) = pair(shape, 53, &device);
    let ad = device.clone().autodiff();
    // Device memory the graph holds after a synchronised training forward of both inputs.
    let held = |memory: SsimMemory| -> u64 {
        let x = Tensor::<4>::from_data(a.to_data(), &ad).require_grad();
        let y = Tensor::<4>::from_data(b.to_data(), &ad).require_grad();
        let before = bytes_in_use(&device).unwrap();
        let loss = fused_ssim(
            x.clone(),
            y.clone(),
            SsimOptions::default().with_memory(memory),
        );
        values(loss.clone());
        let after = bytes_in_use(&device).unwrap();
        drop(loss.backward());
        after.saturating_sub(before)
    };
    // Warm the pools and the kernels, then measure each mode.
    held(SsimMemory::Store);
    held(LEAN);
    let (store, lean) = (held(SsimMemory::Store), held(LEAN));
    // Store keeps ∂S/∂σ², ∂S/∂σ₁₂ and both ∂S/∂μ: four f32 maps.
    let maps = 4 * 4 * shape.iter().product::<usize>() as u64;
    say(&format!(
        "{test}: held after the forward: store {store} B, recompute {lean} B (the maps: {maps} B)"
    ));
    assert!(
        store >= lean + maps * 3 / 4 && lean < maps / 4,
        "store holds {store} B, recompute {lean} B: expected a difference of about {maps} B"
    );
    if burn_sad::device::uses_fused_kernels(&device) && stores_half(&device, test) {
        held(SsimMemory::StoreHalf);
        let half = held(SsimMemory::StoreHalf);
        say(&format!(
            "{test}: held after the forward: store-half {half} B"
        ));
        // The same four maps in f16: half the bytes.
        assert!(
            half >= lean + maps * 3 / 8 && store >= half + maps * 3 / 8,
            "store-half holds {half} B, store {store} B, recompute {lean} B: expected half the \
             maps' {maps} B"
        );
    }
}
