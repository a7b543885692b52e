//! A kernel that exists to be compiled, not run: the smallest use of shared memory, for checking
//! what a compiler makes of it (burn-sad compiles it to SPIR-V to tell whether the linked
//! `cubecl-spirv` declares workgroup variables correctly).

// CubeCL's macro generates the launch module and kernel struct without doc comments.
#![allow(missing_docs)]

use cubecl::prelude::*;

/// Units of [`shared_memory_probe_kernel()`]'s one cube.
pub const PROBE_UNITS: u32 = 32;

/// Each unit writes its index to shared memory and reads its mirror's back: `out[i] = 31 - i`.
///
/// Launch with one cube of [`PROBE_UNITS`] units, 1D.
#[cube(launch)]
pub fn shared_memory_probe_kernel(out: &mut Tensor<u32>) {
    let mut shared = Shared::<[u32]>::new_slice(PROBE_UNITS as usize);
    shared[UNIT_POS as usize] = UNIT_POS;
    sync_cube();
    out[UNIT_POS as usize] = shared[(PROBE_UNITS - 1 - UNIT_POS) as usize];
}
