//! The device and runtime plumbing under the ops: which device to run on and what it can run
//! ([`device`]), what the kernels read of a device's properties, how kernels are launched and
//! cached on disk ([`kernel_cache`]), and how an op registers with Burn's Fusion.

#[cfg(feature = "cube")]
pub(crate) mod capabilities;
pub mod device;
pub(crate) mod fusion_op;
pub mod kernel_cache;
pub(crate) mod kernel_families;
#[cfg(feature = "cube")]
pub(crate) mod launch;
#[cfg(any(feature = "vulkan", test))]
pub(crate) mod spirv_words;
#[cfg(feature = "vulkan")]
pub(crate) mod vulkan_check;
