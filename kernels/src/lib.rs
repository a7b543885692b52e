//! Pure CubeCL kernels of `burn-sad`.
//!
//! Nothing in this crate knows about Burn: every kernel takes CubeCL tensors and scalars, so the
//! same source compiles for CUDA, ROCm, Metal, Vulkan/WebGPU and the CubeCL CPU runtime. The Burn
//! glue (launch code, autodiff, fusion) lives in the `burn-sad` crate.

// Every public item is documented, except what CubeCL's macros generate beside a kernel (its
// launch module, its kernel struct and that struct's constructor, the expand module of a public
// `#[cube]` function, the `*Launch` struct of a `#[derive(CubeLaunch)]` type), which take no doc
// comment: the modules that define such items allow the lint (see `sad` and `ssim`).

#[macro_use]
mod launch_struct;

pub mod offline;
pub mod probe;
pub mod sad;
pub mod ssim;
