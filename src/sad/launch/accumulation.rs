//! How the per-pixel kernels that add into per-site sums (the backward, the statistics) do it on
//! the runtime at hand: float atomics in shared memory, compare-and-swap loops or fixed point,
//! plane sums of neighbouring lanes first, and the order in which a pixel visits its list.

use burn_cubecl::tensor::CubeTensor;
use burn_sad_kernels::sad::{PlaneSums, TableSums};
use cubecl::client::Client;
use cubecl::ir::features::{AtomicUsage, Plane};
use cubecl::ir::{ElemType, FloatKind, Type};

use crate::sad::BackwardStrategy;

/// Whether the runtime has float atomics in shared memory: CUDA and HIP do; WGSL does not;
/// CubeCL's SPIR-V compiler (`wgpu<spirv>`, the `vulkan` feature) does where the device adds
/// f32 atomically. There they are also the only correct form measured: the compare-exchange
/// loops of [`TableSums::Bits`] lose updates on Mesa's lavapipe (32 units of one workgroup
/// adding 1 sixteen times to each of two shared words by compare-exchange left 5 in each
/// through SPIR-V, 16 through WGSL on the same device; a render's gradient came back mostly
/// zero). The loop's SPIR-V is valid; where it differs from naga's is that pliron-spirv 0.16
/// makes a loop's whole body its continue construct, the likely trigger.
fn native_shared_atomics(client: &Client) -> bool {
    match client.name() {
        "cuda" | "hip" => true,
        "wgpu<spirv>" => {
            let native = client
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

/// The form of the tile hash's sums (see [`TableSums`]) for sums whose scale is known to suit
/// fixed point (`fixed_scale`: the fit's squared-error gradients), on the runtime of `tensor`.
/// Other sums (a gradient from an arbitrary upstream loss, the densify statistics) stay float.
pub(super) fn table_sums(tensor: &CubeTensor, fixed_scale: bool) -> TableSums {
    if fixed_scale {
        TableSums::Fixed
    } else if native_shared_atomics(&tensor.client) {
        TableSums::Float
    } else {
        TableSums::Bits
    }
}

/// Whether plane sums can run on `client`'s runtime: a runtime with plane operations, or
/// CubeCL's SPIR-V compiler, whose subgroup operations run on Vulkan CPU adapters (lavapipe)
/// too, though CubeCL does not mark those as having plane operations; never WGSL, which takes
/// no subgroup id in a two-dimensional workgroup.
pub(crate) fn plane_sums_possible(client: &Client) -> bool {
    match client.name() {
        "wgpu" => false,
        "wgpu<spirv>" => true,
        _ => has_plane_ops(client),
    }
}

/// Whether CubeCL marks `client`'s device as having plane operations.
fn has_plane_ops(client: &Client) -> bool {
    client.properties().features.plane.contains(Plane::Ops)
}

/// The plane sums `strategy` asks for on the runtime of `tensor` (see [`BackwardStrategy`]):
/// [`BackwardStrategy::Auto`] takes the ballot where plane sums can run, CubeCL marks the
/// device as having plane operations and shared float atomics are native (CUDA, where it was
/// measured; HIP; Vulkan GPUs with subgroups on the `vulkan` feature), and no plane sums
/// elsewhere.
///
/// # Panics
/// If `strategy` asks for plane sums on a runtime without them (the public ops check this first).
pub(super) fn plane_sums(tensor: &CubeTensor, strategy: BackwardStrategy) -> PlaneSums {
    let possible = plane_sums_possible(&tensor.client);
    assert!(
        possible || !strategy.uses_planes(),
        "SAD backward on {}: {}",
        tensor.client.name(),
        strategy.unsupported_reason()
    );
    match strategy {
        BackwardStrategy::Auto
            if possible
                && has_plane_ops(&tensor.client)
                && native_shared_atomics(&tensor.client) =>
        {
            PlaneSums::Ballot
        }
        BackwardStrategy::Auto | BackwardStrategy::TableOnly => PlaneSums::Off,
        BackwardStrategy::PlaneScan => PlaneSums::Scan,
        BackwardStrategy::PlaneBallot => PlaneSums::Ballot,
    }
}

/// Whether the backward's plane operations take the whole plane as their member mask, where it
/// has plane sums: on CUDA (through the patched cubecl-llvm in `vendor/`), whose shuffles then
/// compile to single instructions instead of an active-mask vote, a move and a divergence check
/// each. Sound because every unit of the backward reaches every plane operation (see
/// `render_backward_kernel`). Registered once per process; the launch passes it as a
/// compile-time argument, so the kernel cache keeps both forms apart.
pub(super) fn full_plane_masks(tensor: &CubeTensor, plane_sums: PlaneSums) -> bool {
    #[cfg(feature = "cuda-hints")]
    if plane_sums != PlaneSums::Off && tensor.client.name() == "cuda" {
        static REGISTERED: std::sync::Once = std::sync::Once::new();
        REGISTERED.call_once(|| {
            cubecl_llvm::nvptx::plane_masks::set_full_plane_masks("render_backward_kernel", true)
        });
        return true;
    }
    let _ = (tensor, plane_sums);
    false
}
