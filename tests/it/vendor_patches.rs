//! The patched cubecl-llvm's own unit tests (`vendor/cubecl-llvm/PATCH.md`), compiled here:
//! CI builds that crate only as a dependency of the CUDA and ROCm runtimes, whose tests it never
//! runs. `plane_masks` needs nothing but the standard library, so its source and its tests build
//! in this test crate as they are.

#[path = "../../vendor/cubecl-llvm/src/nvptx/plane_masks.rs"]
#[allow(dead_code, unreachable_pub)]
mod plane_masks;
