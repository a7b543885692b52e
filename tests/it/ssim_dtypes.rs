//! The SSIM ops on half-precision inputs and 8-bit targets: the kernels read f16, bf16 and
//! integer (`q / 255`) inputs, compute in f32 and return f32 values and gradients in the
//! inputs' dtype, equal to the f32 op on the same values.

use crate::common;

use burn::tensor::{DType, Int, Tensor, TensorData};
use burn_sad::ssim::{
    Mean, SsimError, fused_ssim, fused_ssim_u8, fused_ssim3d, ssim_l1_loss, ssim_l1_loss_u8,
    try_fused_ssim, try_fused_ssim_u8,
};
use common::{SAME, SMALL, assert_close, device, pair, say, values};

/// The half-precision dtypes this device holds; says which it cannot.
fn half_dtypes(test: &str) -> Vec<DType> {
    let device = device();
    [DType::F16, DType::BF16]
        .into_iter()
        .filter(|&dtype| {
            let supported = device.supports_dtype(dtype);
            if !supported {
                say(&format!(
                    "{test}: {dtype:?} skipped, this device has no {dtype:?} tensors"
                ));
            }
            supported
        })
        .collect()
}

/// `op` on `inputs` cast to `dtype` against `op` on the same (rounded) values in f32: the value
/// (which is f32 either way) and both gradients (in `dtype`, so within its rounding).
fn check_against_f32<const D: usize, const R: usize>(
    op: impl Fn(Tensor<D>, Tensor<D>) -> Tensor<R>,
    (img1, img2): (&Tensor<D>, &Tensor<D>),
    dtype: DType,
    what: &str,
) {
    let device = img1.device().autodiff();
    let run = |as_dtype: DType| {
        // Round to the half type first, so that both runs see the same values.
        let input = |t: &Tensor<D>| {
            let rounded = t.clone().cast(dtype).cast(as_dtype);
            let leaf =
                Tensor::<D>::from_data(rounded.to_data(), (&device, as_dtype)).require_grad();
            assert_eq!(leaf.dtype(), as_dtype, "{what}: the input's dtype");
            leaf
        };
        let (a, b) = (input(img1), input(img2));
        let out = op(a.clone(), b.clone());
        assert_eq!(out.dtype(), DType::F32, "{what}: the value is f32");
        let grads = out.clone().sum().backward();
        let ga = a.grad(&grads).expect("img1 gradient").inner();
        let gb = b.grad(&grads).expect("img2 gradient").inner();
        assert_eq!(ga.dtype(), as_dtype, "{what}: the gradient's dtype");
        let as_f32 = |t: Tensor<D>| values(t.cast(DType::F32));
        (values(out.inner()), as_f32(ga), as_f32(gb))
    };
    let (value, g1, g2) = run(dtype);
    let (expected, e1, e2) = run(DType::F32);
    let what = format!("{what} {dtype:?}");
    assert_close(&value, &expected, 1e-6, 1e-6, &format!("{what} value"));
    // The gradients differ only by their rounding to the half type.
    let rtol = if dtype == DType::BF16 { 8e-3 } else { 1e-3 };
    for (got, expected, which) in [(g1, e1, "d/dimg1"), (g2, e2, "d/dimg2")] {
        let scale = expected.iter().fold(0f32, |m, g| m.max(g.abs()));
        assert!(scale > 0.0, "{what}: the f32 gradient is all zero");
        assert_close(
            &got,
            &expected,
            1e-3 * scale,
            rtol,
            &format!("{what} {which}"),
        );
    }
}

#[test]
fn half_precision_ssim_equals_the_f32_op_on_its_values() {
    let device = device();
    let (a, b) = pair([2, 3, 21, 18], 41, &device);
    for dtype in half_dtypes("half_precision_ssim_equals_the_f32_op_on_its_values") {
        check_against_f32(
            |x, y| fused_ssim(x, y, SMALL),
            (&a, &b),
            dtype,
            "fused_ssim",
        );
    }
}

/// The 3D stages' half-precision paths (the slice stage reads the inputs, the depth stage
/// writes the gradients).
#[test]
fn half_precision_volumes_equal_the_f32_op() {
    let device = device();
    let (va, vb) = pair([1, 2, 12, 11, 13], 42, &device);
    for dtype in half_dtypes("half_precision_volumes_equal_the_f32_op") {
        check_against_f32(
            |x, y| fused_ssim3d(x, y, SMALL),
            (&va, &vb),
            dtype,
            "fused_ssim3d",
        );
    }
}

#[test]
fn mixed_or_integer_dtypes_are_errors() {
    let device = device();
    let (a, b) = pair([1, 1, 12, 12], 43, &device);
    for dtype in half_dtypes("mixed_or_integer_dtypes_are_errors") {
        let error = try_fused_ssim(a.clone(), b.clone().cast(dtype), SAME).err();
        assert!(
            matches!(&error, Some(SsimError::UnsupportedDtype(message)) if message.contains("one dtype")),
            "{dtype:?}: {error:?}"
        );
    }
    if device.supports_dtype(DType::F64) {
        let error = try_fused_ssim(a.cast(DType::F64), b.cast(DType::F64), SAME).err();
        assert!(
            matches!(error, Some(SsimError::UnsupportedDtype(_))),
            "{error:?}"
        );
    }
}

/// `image` quantised to 8 bits as an int tensor (u8 where the device has 8-bit storage).
fn quantised(image: &Tensor<4>) -> Tensor<4, Int> {
    let levels: Vec<u8> = values(image.clone())
        .iter()
        .map(|v| (v * 255.0).round() as u8)
        .collect();
    let device = image.device();
    let data = TensorData::new(levels, image.dims());
    if device.supports_dtype(DType::U8) {
        Tensor::from_data(data, (&device, DType::U8))
    } else {
        Tensor::from_data(data, &device)
    }
}

/// `loss(pred, target)` with an integer target against the f32 op on `target / 255`: the value
/// and pred's gradient, which must agree to float rounding (the kernels divide as the host does).
fn check_u8<O, E>(pred: &Tensor<4>, target: &Tensor<4, Int>, u8_op: O, f32_op: E, what: &str)
where
    O: Fn(Tensor<4>, Tensor<4, Int>) -> Tensor<1>,
    E: Fn(Tensor<4>, Tensor<4>) -> Tensor<1>,
{
    let device = pred.device().autodiff();
    let run = |with_u8: bool| {
        let x = Tensor::<4>::from_data(pred.to_data(), &device).require_grad();
        let q = Tensor::<4, Int>::from_data(target.to_data(), (&device, target.dtype()));
        let out = if with_u8 {
            u8_op(x.clone(), q)
        } else {
            f32_op(x.clone(), q.float().div_scalar(255.0))
        };
        let grads = out.clone().mul_scalar(-3.0).sum().backward();
        (
            values(out.inner()),
            values(x.grad(&grads).expect("pred gradient").inner()),
        )
    };
    let (value, grad) = run(true);
    let (expected, expected_grad) = run(false);
    assert_close(&value, &expected, 1e-7, 1e-6, &format!("{what} value"));
    assert_close(
        &grad,
        &expected_grad,
        1e-9,
        1e-5,
        &format!("{what} d/dpred"),
    );
}

#[test]
fn u8_targets_equal_the_f32_op_on_their_values() {
    let device = device();
    let (pred, gt) = pair([2, 3, 21, 18], 45, &device);
    let target = quantised(&gt);
    if target.dtype() != DType::U8 {
        say(&format!(
            "u8_targets_equal_the_f32_op_on_their_values: this device holds the target as {:?}",
            target.dtype()
        ));
    }
    check_u8(
        &pred,
        &target,
        |x, q| fused_ssim_u8(x, q, SMALL, Mean),
        |x, y| fused_ssim(x, y, SMALL),
        "fused_ssim",
    );
    check_u8(
        &pred,
        &target,
        |x, q| ssim_l1_loss_u8(x, q, 0.2, SMALL, Mean),
        |x, y| ssim_l1_loss(x, y, 0.2, SMALL),
        "ssim_l1_loss",
    );
    // The no-grad path is its own kernel.
    let untracked = values(fused_ssim_u8(pred.clone(), target.clone(), SMALL, Mean));
    let expected = values(fused_ssim(pred, target.float().div_scalar(255.0), SMALL));
    assert_close(&untracked, &expected, 1e-7, 1e-6, "no-grad");
}

#[test]
fn u8_target_errors() {
    let device = device();
    let (pred, gt) = pair([1, 1, 12, 12], 47, &device);
    let target = quantised(&gt);
    let error = try_fused_ssim_u8(
        pred.clone(),
        target.clone().reshape([1, 1, 6, 24]),
        SAME,
        Mean,
    );
    assert!(
        matches!(error, Err(SsimError::ShapeMismatch { .. })),
        "{:?}",
        error.err()
    );
    if device.supports_dtype(DType::F64) {
        let error = try_fused_ssim_u8(pred.cast(DType::F64), target, SAME, Mean).err();
        assert!(
            matches!(error, Some(SsimError::UnsupportedDtype(_))),
            "{error:?}"
        );
    }
}
