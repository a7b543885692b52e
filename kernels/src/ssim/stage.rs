//! Where a unit's texels fall as it stages a tile.

use cubecl::prelude::*;

/// A staged texel's row and column in the tile's span (the tile and its apron).
#[derive(CubeType)]
pub struct Texel {
    /// Row in the span.
    pub row: usize,
    /// Column in the span.
    pub col: usize,
}

/// The texel that unit `u` stages in the pass `step / units` of an unrolled staging loop
/// (texel `u + step` of a span `span_x` wide), from `u`'s own row and column: each pass adds a
/// comptime offset and wraps at most once, with no division. The row may pass the span's last
/// in the last pass; the caller skips those texels.
#[cube]
pub fn pass_texel(
    unit_row: usize,
    unit_col: usize,
    #[comptime] step: usize,
    #[comptime] span_x: usize,
) -> Texel {
    let mut row = unit_row + comptime![step / span_x];
    let mut col = unit_col + comptime![step % span_x];
    if col >= span_x {
        col -= span_x;
        row += 1;
    }
    Texel { row, col }
}
