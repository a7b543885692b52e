//! Pure CubeCL kernels of `burn-sad`.
//!
//! Nothing in this crate knows about Burn: every kernel takes CubeCL tensors and scalars, so the
//! same source compiles for CUDA, ROCm, Metal, Vulkan/WebGPU and the CubeCL CPU runtime. The Burn
//! glue (launch code, autodiff, fusion) lives in the `burn-sad` crate.

pub mod sad;
pub mod ssim;
