//! How the per-pixel kernels that add into per-site sums (the backward, the statistics) do it on
//! the runtime at hand: float atomics in shared memory or compare-and-swap loops, plane sums of
//! neighbouring lanes first, and the order in which a pixel visits its list.

use std::sync::OnceLock;

use burn_cubecl::tensor::CubeTensor;

use crate::launch::switch;

/// Whether the runtime has float atomics in shared memory (CUDA and HIP do; WGSL does not).
pub(super) fn native_shared_atomics(tensor: &CubeTensor) -> bool {
    matches!(tensor.client.name(), "cuda" | "hip")
}

/// The environment variable that turns the backward's plane (warp) sums on (`1`) or off (`0`)
/// where they would otherwise be chosen, for measuring both.
pub const PLANE_SUMS_ENV: &str = "BURN_SAD_PLANE_SUMS";

/// Whether the backward sums runs of equal sites across a plane before its shared-memory
/// atomics: on CUDA and HIP, whose shuffles every unit reaches (WGSL subgroups are optional).
pub(super) fn plane_sums(tensor: &CubeTensor) -> bool {
    static PLANE_SUMS: OnceLock<Option<bool>> = OnceLock::new();
    switch(&PLANE_SUMS, PLANE_SUMS_ENV).unwrap_or_else(|| native_shared_atomics(tensor))
}

/// The environment variable that turns the backward's walk over a list's distinct sites in id
/// order off (`0`: slot by slot in rank order), for measuring both.
pub const SORTED_SLOTS_ENV: &str = "BURN_SAD_SORTED_SLOTS";

/// Whether the backward visits each pixel's distinct sites in increasing id order (see
/// `render_backward_kernel`): neighbouring pixels then meet a shared site at the same step, so
/// runs of lanes that add to one site are longer.
pub(super) fn sorted_slots() -> bool {
    static SORTED_SLOTS: OnceLock<Option<bool>> = OnceLock::new();
    switch(&SORTED_SLOTS, SORTED_SLOTS_ENV).unwrap_or(true)
}
