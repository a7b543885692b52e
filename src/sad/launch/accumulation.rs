//! How the per-pixel kernels that add into per-site sums (the backward, the statistics) do it on
//! the runtime at hand: float atomics in shared memory, compare-and-swap loops or fixed point,
//! plane sums of neighbouring lanes first, and the order in which a pixel visits its list.

use std::sync::OnceLock;

use burn_cubecl::tensor::CubeTensor;
use burn_sad_kernels::sad::{PlaneSums, TableSums};
use cubecl::ir::features::AtomicUsage;
use cubecl::ir::{ElemType, FloatKind, Type};

use crate::launch::switch;

/// Whether the runtime has float atomics in shared memory: CUDA and HIP do; WGSL does not;
/// CubeCL's SPIR-V compiler (`wgpu<spirv>`, the `vulkan` feature) does where the device adds
/// f32 atomically. There they are also the only correct form measured: the compare-exchange
/// loops of [`TableSums::Bits`] lose updates on Mesa's lavapipe (32 units of one workgroup
/// adding 1 sixteen times to each of two shared words by compare-exchange left 5 in each
/// through SPIR-V, 16 through WGSL on the same device; a render's gradient came back mostly
/// zero). The loop's SPIR-V is valid; where it differs from naga's is that pliron-spirv 0.16
/// makes a loop's whole body its continue construct, the likely trigger.
fn native_shared_atomics(tensor: &CubeTensor) -> bool {
    match tensor.client.name() {
        "cuda" | "hip" => true,
        "wgpu<spirv>" => {
            let native = tensor
                .client
                .properties()
                .atomic_type_usage(Type::atomic(ElemType::Float(FloatKind::F32)))
                .contains(AtomicUsage::Add);
            if !native {
                static WARNED: std::sync::Once = std::sync::Once::new();
                WARNED.call_once(|| {
                    eprintln!(
                        "warning: this Vulkan device has no f32 atomic add; the SAD backward's \
                         compare-exchange sums may lose updates through cubecl's SPIR-V \
                         compiler (see the README): prefer the default `wgpu` feature"
                    )
                });
            }
            native
        }
        _ => false,
    }
}

/// The environment variable that turns the fixed-point table sums of the squared-error
/// gradients off (`0`: float atomics or compare-exchange loops, as other sums), for measuring
/// both.
pub const FIXED_SUMS_ENV: &str = "BURN_SAD_FIXED_SUMS";

/// The form of the tile hash's sums (see [`TableSums`]) for sums whose scale is known to suit
/// fixed point (`fixed_scale`: the fit's squared-error gradients), on the runtime of `tensor`.
/// Other sums (a gradient from an arbitrary upstream loss, the densify statistics) stay float.
pub(super) fn table_sums(tensor: &CubeTensor, fixed_scale: bool) -> TableSums {
    static FIXED_SUMS: OnceLock<Option<bool>> = OnceLock::new();
    if fixed_scale && switch(&FIXED_SUMS, FIXED_SUMS_ENV).unwrap_or(true) {
        TableSums::Fixed
    } else if native_shared_atomics(tensor) {
        TableSums::Float
    } else {
        TableSums::Bits
    }
}

/// The environment variable that turns the backward's plane (warp) sums on (`1`) or off (`0`)
/// where they would otherwise be chosen, for measuring both.
pub const PLANE_SUMS_ENV: &str = "BURN_SAD_PLANE_SUMS";

/// The environment variable that makes the backward's plane sums find their runs from one
/// ballot (`1`, [`PlaneSums::Ballot`]) or from shuffle scans (`0`, [`PlaneSums::Scan`]), for
/// measuring both. Unset, CUDA takes the ballot (on the H200 it took 5 % off issue 11's data
/// set and as much or nothing off single fits; see the README) and the other runtimes the scan,
/// which no GPU run has compared there.
pub const BALLOT_RUNS_ENV: &str = "BURN_SAD_BALLOT_RUNS";

/// How the backward sums runs of equal sites across a plane before its shared-memory atomics
/// (see [`PlaneSums`]): on CUDA and HIP, whose shuffles every unit reaches (WGSL subgroups are
/// optional), and elsewhere only when [`PLANE_SUMS_ENV`] asks.
pub(super) fn plane_sums(tensor: &CubeTensor) -> PlaneSums {
    static PLANE_SUMS: OnceLock<Option<bool>> = OnceLock::new();
    static BALLOT_RUNS: OnceLock<Option<bool>> = OnceLock::new();
    if !switch(&PLANE_SUMS, PLANE_SUMS_ENV).unwrap_or_else(|| native_shared_atomics(tensor)) {
        PlaneSums::Off
    } else if switch(&BALLOT_RUNS, BALLOT_RUNS_ENV).unwrap_or(tensor.client.name() == "cuda") {
        PlaneSums::Ballot
    } else {
        PlaneSums::Scan
    }
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

/// The environment variable that turns the backward's full plane masks off (`0`: each plane
/// operation synchronises the lanes executing it), for measuring both.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub const FULL_MASKS_ENV: &str = "BURN_SAD_FULL_MASKS";

/// Whether the backward's plane operations take the whole plane as their member mask, where it
/// has plane sums: on CUDA (through the patched cubecl-llvm in `vendor/`), whose shuffles then
/// compile to single instructions instead of an active-mask vote, a move and a divergence check
/// each. Sound because every unit of the backward reaches every plane operation (see
/// `render_backward_kernel`). Registered once per process; the launch passes it as a
/// compile-time argument, so the kernel cache keeps both forms apart.
pub(super) fn full_plane_masks(tensor: &CubeTensor, plane_sums: PlaneSums) -> bool {
    #[cfg(feature = "cuda")]
    if plane_sums != PlaneSums::Off && tensor.client.name() == "cuda" {
        static FULL: OnceLock<bool> = OnceLock::new();
        return *FULL.get_or_init(|| {
            static SWITCH: OnceLock<Option<bool>> = OnceLock::new();
            let full = switch(&SWITCH, FULL_MASKS_ENV).unwrap_or(true);
            cubecl_llvm::nvptx::plane_masks::set_full_plane_masks("render_backward_kernel", full);
            full
        });
    }
    let _ = (tensor, plane_sums);
    false
}
