//! How the per-pixel kernels that add into per-site sums (the backward, the statistics) do it on
//! the runtime at hand: float atomics in shared memory, compare-and-swap loops or fixed point,
//! plane sums of neighbouring lanes first, and the order in which a pixel visits its list.

use burn_cubecl::tensor::CubeTensor;
use burn_sad_kernels::sad::{PlaneSums, TableSums};

use crate::runtime::capabilities::Capabilities;
use crate::sad::BackwardStrategy;

/// The form of the tile hash's sums (see [`TableSums`]) for sums whose scale is known to suit
/// fixed point (`fixed_scale`: the fit's squared-error gradients), on the device of `tensor`.
/// Other sums (a gradient from an arbitrary upstream loss, the densify statistics) stay float:
/// shared float atomics where the device adds f32 atomically there, else compare-exchange loops. Through
/// CubeCL's SPIR-V compiler the atomics are also the only correct form measured: the loops of
/// [`TableSums::Bits`] lose updates on Mesa's lavapipe (32 units of one workgroup adding 1
/// sixteen times to each of two shared words by compare-exchange left 5 in each through SPIR-V,
/// 16 through WGSL on the same device; a render's gradient came back mostly zero). The loop's
/// SPIR-V is valid; where it differs from naga's is that pliron-spirv 0.16 makes a loop's whole
/// body its continue construct, the likely trigger.
pub(super) fn table_sums(tensor: &CubeTensor, fixed_scale: bool) -> TableSums {
    let capabilities = Capabilities::of(tensor);
    let sums = table_sums_for(&capabilities, fixed_scale);
    // The loops lost updates through the native compilers (SPIR-V), not through WGSL.
    if sums == TableSums::Bits && capabilities.native_compiler {
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| {
            eprintln!(
                "warning: this device has no f32 atomic add; the SAD backward's float sums fall \
                 back to compare-exchange loops, which lose updates through cubecl's SPIR-V \
                 compiler (see the README)"
            )
        });
    }
    sums
}

/// [`table_sums`]' choice on a device of `capabilities`.
pub(crate) fn table_sums_for(capabilities: &Capabilities, fixed_scale: bool) -> TableSums {
    if fixed_scale {
        TableSums::Fixed
    } else if capabilities.shared_float_atomic_add() {
        TableSums::Float
    } else {
        TableSums::Bits
    }
}

/// Whether plane sums can run on a device of `capabilities`: where its compiler lowers plane
/// operations to the target's own (see [`Capabilities::native_compiler`]).
pub(crate) fn plane_sums_possible(capabilities: &Capabilities) -> bool {
    capabilities.native_compiler
}

/// The plane sums `strategy` asks for on the runtime of `tensor` (see [`BackwardStrategy`]):
/// [`BackwardStrategy::Auto`] takes the ballot where plane sums can run, CubeCL marks the
/// device as having plane operations and it adds f32 atomically (CUDA, where it was measured;
/// HIP; Vulkan GPUs with subgroups on the `vulkan` feature), and no plane sums elsewhere.
///
/// # Panics
/// If `strategy` asks for plane sums on a runtime without them (the public ops check this first).
pub(super) fn plane_sums(tensor: &CubeTensor, strategy: BackwardStrategy) -> PlaneSums {
    plane_sums_for(&Capabilities::of(tensor), strategy).unwrap_or_else(|why| {
        panic!(
            "SAD backward on {}: {why}",
            tensor.client.properties().identity.name
        )
    })
}

/// [`plane_sums`]' choice on a device of `capabilities`, or why `strategy` cannot run there.
pub(crate) fn plane_sums_for(
    capabilities: &Capabilities,
    strategy: BackwardStrategy,
) -> Result<PlaneSums, String> {
    let possible = plane_sums_possible(capabilities);
    if !possible && strategy.uses_planes() {
        return Err(strategy.unsupported_reason());
    }
    Ok(match strategy {
        BackwardStrategy::Auto
            if possible && capabilities.plane_ops && capabilities.shared_float_atomic_add() =>
        {
            PlaneSums::Ballot
        }
        BackwardStrategy::Auto | BackwardStrategy::TableOnly => PlaneSums::Off,
        BackwardStrategy::PlaneScan => PlaneSums::Scan,
        BackwardStrategy::PlaneBallot => PlaneSums::Ballot,
    })
}

/// Whether the backward's plane operations take the whole plane as their member mask, where it
/// has plane sums: on a CUDA device (through the patched cubecl-llvm in `vendor/`), whose shuffles then
/// compile to single instructions instead of an active-mask vote, a move and a divergence check
/// each. Sound because every unit of the backward reaches every plane operation (see
/// `render_backward_kernel`). Registered once per process; the launch passes it as a
/// compile-time argument, so the kernel cache keeps both forms apart.
pub(super) fn full_plane_masks(tensor: &CubeTensor, plane_sums: PlaneSums) -> bool {
    #[cfg(feature = "cuda-hints")]
    if plane_sums != PlaneSums::Off && Capabilities::of(tensor).nvptx {
        static REGISTERED: std::sync::Once = std::sync::Once::new();
        REGISTERED.call_once(|| {
            cubecl_llvm::nvptx::plane_masks::set_full_plane_masks("render_backward_kernel", true)
        });
        return true;
    }
    let _ = (tensor, plane_sums);
    false
}

#[cfg(test)]
mod tests {
    use burn_sad_kernels::sad::{PlaneSums, TableSums};

    use super::{plane_sums_for, table_sums_for};
    use crate::runtime::capabilities::Capabilities;
    use crate::runtime::capabilities::tests::properties;
    use crate::sad::BackwardStrategy;

    #[test]
    fn each_device_gets_its_own_sums() {
        let gpu = Capabilities::from_properties(&properties(true), true);
        let cpu = Capabilities::from_properties(&properties(false), false);
        // A CPU adapter through SPIR-V: a native compiler, no plane mark, f32 atomics.
        let lavapipe = Capabilities {
            native_compiler: true,
            float_atomic_add: true,
            ..cpu
        };
        // The same adapter through WGSL: f32 atomics in global memory only.
        let wgsl = Capabilities {
            float_atomic_add: true,
            ..cpu
        };
        let auto = BackwardStrategy::Auto;
        assert_eq!(plane_sums_for(&gpu, auto), Ok(PlaneSums::Ballot));
        assert_eq!(plane_sums_for(&lavapipe, auto), Ok(PlaneSums::Off));
        assert_eq!(plane_sums_for(&cpu, auto), Ok(PlaneSums::Off));
        let scan = BackwardStrategy::PlaneScan;
        assert_eq!(plane_sums_for(&lavapipe, scan), Ok(PlaneSums::Scan));
        assert!(plane_sums_for(&cpu, scan).is_err());
        assert_eq!(table_sums_for(&gpu, false), TableSums::Float);
        assert_eq!(table_sums_for(&cpu, false), TableSums::Bits);
        assert_eq!(table_sums_for(&wgsl, false), TableSums::Bits);
        assert_eq!(plane_sums_for(&wgsl, auto), Ok(PlaneSums::Off));
        assert_eq!(table_sums_for(&lavapipe, false), TableSums::Float);
        assert_eq!(table_sums_for(&cpu, true), TableSums::Fixed);
    }
}
