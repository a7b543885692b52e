//! Choosing the device the CLI and examples run on ([`select_device`], [`DeviceChoice`]), and
//! what a device runs: this crate's CubeCL kernels ([`uses_fused_kernels`], which every op of
//! both capabilities asks), each [`KernelFamily`] ([`family_support`]). A refusal is a
//! [`DeviceError`].
//!
//! `auto` takes the best compiled-in runtime that answers: CUDA, ROCm, a Vulkan (SPIR-V) GPU, a
//! wgpu GPU adapter, then a wgpu or Vulkan CPU adapter (e.g. Mesa lavapipe), then Flex, the
//! pure-Rust CPU backend, which runs the reference ops. Each candidate is probed with a tiny
//! round trip, so a missing driver costs one warning instead of a crash.
//!
//! ```
//! use burn_sad::device::{DeviceChoice, select_device, uses_fused_kernels};
//!
//! // `$BURN_SAD_DEVICE` if set (auto, cuda, wgpu, vulkan, flex, ...), else the best found.
//! let (device, description) = select_device(DeviceChoice::from_env()?)?;
//! println!("{description}: CubeCL kernels {}", uses_fused_kernels(&device));
//! # Ok::<(), burn_sad::device::DeviceError>(())
//! ```

mod choice;
mod error;
mod support;

pub use choice::{
    DEVICE_ENV, DeviceChoice, select_device, select_device_for, select_devices, select_devices_for,
};
pub use error::DeviceError;
pub(crate) use support::{families_support, half_storage_support};
pub use support::{
    family_support, has_plane_sums, kernel_support, memory_on_host, uses_fused_kernels,
};

pub use crate::runtime::kernel_families::KernelFamily;
