//! The in-cube sum both SSIM forward kernels end with.

use cubecl::prelude::*;

/// Sums every unit's `value` and writes the total to `tile_sums[cube]`, where `cube` is the
/// linear index of this cube in the grid. `scratch` must hold at least `units` elements and is
/// overwritten; `units` must be a power of two and equal to the cube size. Every unit of the
/// cube must call this (it contains barriers).
#[cube]
pub fn write_tile_sum<F: Float>(
    scratch: &mut Shared<[F]>,
    tile_sums: &mut Tensor<F>,
    value: F,
    #[comptime] units: usize,
) {
    let unit = UNIT_POS as usize;
    // The scratch may still be read by other units (it is the staging buffer in 2D).
    sync_cube();
    scratch[unit] = value;
    sync_cube();
    #[unroll]
    for level in 0..comptime![units.trailing_zeros() as usize] {
        let half = comptime![units >> (level + 1)];
        if unit < half {
            scratch[unit] = scratch[unit] + scratch[unit + half];
        }
        sync_cube();
    }
    if unit == 0 {
        let cube = (CUBE_POS_Z as usize * CUBE_COUNT_Y as usize + CUBE_POS_Y as usize)
            * CUBE_COUNT_X as usize
            + CUBE_POS_X as usize;
        tile_sums[cube] = scratch[0];
    }
}
