//! # burn-sad
//!
//! Fused, differentiable image kernels for [Burn](https://burn.dev), written once in CubeCL so the
//! same source runs on CUDA, ROCm, Metal, Vulkan/WebGPU and CPU.
//!
//! - [`ssim`]: SSIM as a loss with hand-written forward and backward kernels
//!   ([`ssim::fused_ssim`]), the 3DGS L1 + SSIM loss ([`ssim::ssim_l1_loss`]), MS-SSIM
//!   ([`ssim::ms_ssim`]) and 3D SSIM ([`ssim::fused_ssim3d`]).
//! - [`sad`]: Soft Anisotropic Diagrams: sites as a Burn module, the differentiable render
//!   ([`sad::render`]), the reference trainer's fitting recipe ([`sad::fit::fit`]), data sets
//!   ([`sad::dataset`]) and render-only mode ([`sad::render_sites`]).
//! - [`device`], [`image`], [`kernel_cache`]: choosing a device, reading and writing images,
//!   keeping compiled kernels between runs. The browser viewer (its page, and these kernels
//!   compiled to WGSL) is the `burn-sad-viewer` crate, which `sad view` serves.
//!
//! Every op has a plain-tensor reference implementation beside it. On backends that cannot run
//! CubeCL kernels (Flex, NdArray, LibTorch) the op falls back to that reference, so it works on
//! every Burn backend.
//!
//! ```
//! use burn::tensor::{Device, Distribution, Tensor};
//! use burn_sad::ssim::{SsimOptions, fused_ssim, ssim_l1_loss};
//!
//! let device = Device::default().autodiff();
//! let target = Tensor::<4>::random([2, 3, 32, 32], Distribution::Default, &device);
//! let pred = Tensor::<4>::random([2, 3, 32, 32], Distribution::Default, &device).require_grad();
//!
//! // SSIM of the batch, and its gradient with respect to the prediction.
//! let ssim = fused_ssim(pred.clone(), target.clone(), SsimOptions::default());
//! let grads = ssim.backward();
//! assert_eq!(pred.grad(&grads).unwrap().dims(), [2, 3, 32, 32]);
//!
//! // The 3DGS loss: 0.8 · L1 + 0.2 · (1 − SSIM), in the same kernels.
//! let loss = ssim_l1_loss(pred, target, 0.2, SsimOptions::default());
//! assert!(loss.into_scalar::<f32>() > 0.0);
//! ```
//!
//! ## Features
//!
//! Each backend is a feature; enable the ones your project runs on (Burn's own features of the
//! same names come with them). The CubeCL crates are the crates.io releases: no `[patch]` needed.
//!
//! | feature | what it adds |
//! |---|---|
//! | `wgpu` (default) | WebGPU through wgpu (Vulkan, Metal, DX12), kernels compiled to WGSL |
//! | `flex` (default) | Burn's pure-Rust CPU backend; the ops run their references there |
//! | `vulkan` | Vulkan with kernels compiled to SPIR-V (plane operations, faster than WGSL) |
//! | `cuda` | NVIDIA GPUs; compiled kernels kept on disk ([`kernel_cache`]) |
//! | `cuda-hints` | `cuda` plus two NVPTX options for the SAD backward (see below) |
//! | `rocm` | AMD GPUs through HIP |
//! | `metal` | Apple GPUs, kernels compiled to MSL |
//! | `cpu` | CubeCL's CPU runtime (kernels compiled through LLVM) |
//! | `fusion` | Burn's operation fusion around the ops (`Fusion<CubeBackend>`); Burn's default features turn it on too |
//! | `train` | burn-train, for the multi-device training example |
//!
//! `cuda`, `rocm` and `cpu` build CubeCL's LLVM back end, whose build script downloads an LLVM
//! bundle once (about 300 MB); offline, point it at a local LLVM as the repository's
//! `.ci/llvm-bundle.sh` does.
//!
//! ### `cuda-hints`
//!
//! On CUDA the SAD backward can ask `ptxas` for an occupancy (`.minnctapersm`) and give its plane
//! operations the full member mask, which the crates.io `cubecl-llvm` 0.11 cannot express. The
//! feature calls the patched copy in the repository's `vendor/cubecl-llvm` (see its `PATCH.md`),
//! which a project brings in with a `[patch]` of its own, since Cargo applies a dependency's
//! patches only in that dependency's workspace:
//!
//! ```toml
//! [dependencies]
//! burn-sad = { version = "0.1", features = ["cuda-hints"] }
//!
//! [patch.crates-io]
//! # A checkout of burn-sad's repository, or `git = "<its URL>"` instead of `path`.
//! cubecl-llvm = { path = "../burn-sad/vendor/cubecl-llvm" }
//! ```
//!
//! Without it the backward compiles as CubeCL emits it; the `sad` command line has it on.
//!
//! ### Vulkan on devices without explicit workgroup layout
//!
//! The crates.io `cubecl-spirv` 0.11.3 writes invalid SPIR-V for shared memory on Vulkan
//! devices that lack `VK_KHR_workgroup_memory_explicit_layout` (Mesa's lavapipe, many
//! integrated and mobile GPUs), and their driver can crash on it. burn-sad finds such a device
//! before its first kernel and refuses it with one line instead
//! ([`device::kernel_support`]). Use the `wgpu` feature there, or patch `cubecl-spirv` with the
//! repository's `vendor/cubecl-spirv` as above:
//!
//! ```toml
//! [patch.crates-io]
//! cubecl-spirv = { path = "../burn-sad/vendor/cubecl-spirv" }
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod image;
#[cfg(feature = "kernel-report")]
#[cfg_attr(docsrs, doc(cfg(feature = "kernel-report")))]
pub mod kernel_report;
mod runtime;
pub mod sad;
pub mod ssim;

pub use runtime::{device, kernel_cache};

#[cfg(feature = "cube")]
pub use runtime::launch::CHECKED_KERNELS_ENV;

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
