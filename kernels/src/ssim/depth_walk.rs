//! Where a unit of the 3D depth kernels works: the voxel column it owns and the slices it walks.

use cubecl::prelude::*;

use super::args::DepthArgs;
use super::{COLUMNS, DepthLayout};

/// The voxel column a unit of a depth kernel walks down.
#[derive(CubeType)]
pub struct DepthColumn {
    /// The column's x in its slice.
    pub x: usize,
    /// The column's y in its slice.
    pub y: usize,
    /// The volume.
    pub volume: usize,
    /// The first slice of the unit's depth chunk.
    pub z0: usize,
    /// Voxels per slice.
    pub slice: usize,
    /// The column's voxel in slice 0 of its volume: slice z's is `column + z · slice`.
    pub column: usize,
    /// Whether (x, y) lies inside the slice.
    pub in_slice: bool,
}

/// This unit's column in a cube of `layout` (grid z: volume · chunks + chunk).
#[cube]
pub fn depth_column(args: &DepthArgs, #[comptime] layout: DepthLayout) -> DepthColumn {
    let x = CUBE_POS_X as usize * COLUMNS + UNIT_POS_X as usize;
    let y = CUBE_POS_Y as usize * comptime![layout.rows] + UNIT_POS_Y as usize;
    let volume = CUBE_POS_Z as usize / args.chunks;
    let z0 = (CUBE_POS_Z as usize % args.chunks) * comptime![layout.depth_chunk];
    let slice = args.height * args.width;
    DepthColumn {
        x,
        y,
        volume,
        z0,
        slice,
        column: volume * args.depth * slice + y * args.width + x,
        in_slice: x < args.width && y < args.height,
    }
}
