//! How the SSIM and SAD glue launches its kernels: without CubeCL's per-access bounds checks, as
//! Burn launches its own, once the launching function has checked every shape on the host.
//!
//! A checked launch clamps every global index to its buffer's length: one more load of the
//! length and a `min` per access, and no vector loads of neighbouring words. The SAD kernels make
//! dozens of gathers per pixel, and the candidate pass over two hundred per cell, so that cost
//! shows. The kernels guard their own indices instead (ids against the site count, units past the
//! grid's edge clamped or stopped), and each launching function checks the shapes those guards
//! rely on ([`expect_dims`]), so a wrong shape is a panic on the host, never a stray access.

use std::sync::OnceLock;

use burn::backend::TensorMetadata;
use burn::tensor::{DType, Shape};
use burn_cubecl::{ops::numeric::empty_device_contiguous_dtype, tensor::CubeTensor};

/// Set to `1` to launch every kernel with CubeCL's bounds checks (each out-of-range index is
/// clamped to the buffer): slower, for telling a kernel's indexing bug from anything else.
pub const CHECKED_KERNELS_ENV: &str = "BURN_SAD_CHECKED_KERNELS";

/// Whether kernels are launched with CubeCL's bounds checks ([`CHECKED_KERNELS_ENV`]).
pub(crate) fn bounds_checked() -> bool {
    static CHECKED: OnceLock<Option<bool>> = OnceLock::new();
    switch(&CHECKED, CHECKED_KERNELS_ENV) == Some(true)
}

/// The `0`/`1` switch `name` of the environment, read once per process into `cell` (launches
/// ask on every call): `Some(false)` for `0`, `Some(true)` for `1`, `None` otherwise.
pub(crate) fn switch(cell: &'static OnceLock<Option<bool>>, name: &str) -> Option<bool> {
    *cell.get_or_init(|| match std::env::var(name).as_deref() {
        Ok("0") => Some(false),
        Ok("1") => Some(true),
        _ => None,
    })
}

/// Launches a `#[cube(launch, launch_unchecked)]` kernel: `launch_kernel!(kernel(args...))`
/// (or `kernel::<T>(args...)`), the client first. Refuses a device the kernels cannot run on
/// ([`expect_runnable`]). Unchecked unless [`CHECKED_KERNELS_ENV`] asks for checks; the
/// caller has checked the shapes the kernel's own guards rely on (see [`expect_dims`]).
macro_rules! launch_kernel {
    ($kernel:ident $(::<$($generic:ty),+>)? ($client:expr, $($arg:expr),+ $(,)?)) => {{
        let client = $client;
        $crate::runtime::launch::expect_runnable(client);
        if $crate::runtime::launch::bounds_checked() {
            $kernel::launch$(::<$($generic),+>)?(client, $($arg),+)
        } else {
            // SAFETY: the kernel keeps its indices inside the buffers whose shapes the caller
            // checked on the host before this launch.
            unsafe { $kernel::launch_unchecked$(::<$($generic),+>)?(client, $($arg),+) }
        }
    }};
}

/// Panics with [`kernel_support`](crate::device::kernel_support)'s line where `client`'s device
/// cannot run the kernels: the ops' `try_` forms return it as an error before they get here.
#[track_caller]
pub(crate) fn expect_runnable(client: &cubecl::client::Client) {
    #[cfg(feature = "vulkan")]
    if let Some(problem) = crate::runtime::vulkan_check::shared_memory_problem(client) {
        panic!("{problem}");
    }
    let _ = client;
}
pub(crate) use launch_kernel;

/// Panics unless `tensor` has exactly `dims`: `op` names the op and `what` the argument, for a
/// message that says which call was wrong.
#[track_caller]
pub(crate) fn expect_dims(op: &str, what: &str, tensor: &CubeTensor, dims: &[usize]) {
    let shape = tensor.shape();
    assert!(
        shape.as_slice() == dims,
        "{op}: {what} is {:?}, expected {dims:?}",
        shape.as_slice()
    );
}

/// Panics unless `tensor` is a matrix of `columns` columns; returns its row count (see
/// [`expect_dims`]).
#[track_caller]
pub(crate) fn expect_rows_of(op: &str, what: &str, tensor: &CubeTensor, columns: usize) -> usize {
    let shape = tensor.shape();
    assert!(
        shape.num_dims() == 2 && shape[1] == columns,
        "{op}: {what} is {:?}, expected [rows, {columns}]",
        shape.as_slice()
    );
    shape[0]
}

/// Panics unless `tensor` holds at least `len` elements (see [`expect_dims`]).
#[track_caller]
pub(crate) fn expect_len_at_least(op: &str, what: &str, tensor: &CubeTensor, len: usize) {
    let elements = tensor.shape().num_elements();
    assert!(
        elements >= len,
        "{op}: {what} has {elements} elements, expected at least {len}"
    );
}

/// An uninitialised contiguous tensor of `shape` and `dtype` on `like`'s device: kernel outputs
/// are allocated so, as the kernels index them linearly (`float_zeros` may hand out pitched
/// rows).
pub(crate) fn empty_contiguous(like: &CubeTensor, shape: Shape, dtype: DType) -> CubeTensor {
    empty_device_contiguous_dtype(like.client.clone(), like.device.clone(), shape, dtype)
}

/// [`empty_contiguous`] of f32.
pub(crate) fn empty_f32(like: &CubeTensor, shape: Shape) -> CubeTensor {
    empty_contiguous(like, shape, DType::F32)
}

/// Panics unless `tensor` is contiguous, as a kernel that writes it in place indexes it.
#[track_caller]
pub(crate) fn expect_contiguous(op: &str, what: &str, tensor: &CubeTensor) {
    assert!(
        tensor.is_contiguous(),
        "{op}: {what} must be one contiguous buffer, got strides {:?}",
        tensor.meta.strides()
    );
}
