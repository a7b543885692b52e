//! # burn-sad
//!
//! Fused, differentiable image kernels for [Burn](https://burn.dev), written once in CubeCL so the
//! same source runs on CUDA, ROCm, Metal, Vulkan/WebGPU and CPU.
//!
//! - [`ssim`]: a fully fused SSIM loss with hand-written forward and backward kernels
//!   ([`ssim::fused_ssim`]), 3D SSIM, MS-SSIM and a fused L1+SSIM loss.
//! - [`sad`]: Soft Anisotropic Diagrams: sites, candidate lists and the differentiable render.
//!
//! Every op has a plain-tensor reference implementation beside it. On backends that cannot run
//! CubeCL kernels (Flex, NdArray, LibTorch) the op falls back to that reference, so it works on
//! every Burn backend.

#![warn(missing_docs)]

pub mod device;
mod fusion_op;
pub mod image;
pub mod kernel_cache;
#[cfg(feature = "cube")]
mod launch;
pub mod sad;
pub mod ssim;
#[cfg(feature = "wgpu")]
pub mod viewer;
#[cfg(any(feature = "vulkan", test))]
mod spirv_words;
#[cfg(feature = "vulkan")]
mod vulkan_check;

#[cfg(feature = "cube")]
pub use launch::CHECKED_KERNELS_ENV;
