//! Where the units of a 2D SSIM cube work: the column and rows each one walks down, and the
//! output pixels each one finishes in the pass across.

use cubecl::prelude::*;

use super::{StripLayout, tile_columns};

/// Where a walking unit reads: its plane, and its column and first row offset by the radius.
#[derive(CubeType)]
pub struct WalkPixel {
    /// The (batch, channel) plane.
    pub plane: usize,
    /// The plane's first element in the outputs (and contiguous inputs).
    pub plane_base: usize,
    /// The mask plane's first element.
    pub mask_base: usize,
    /// Walk column plus the radius' offset: the image column is `col_r − radius`.
    pub col_r: usize,
    /// The walker's first input row, plus the radius: input row `t` is `row_r + t − radius`.
    pub row_r: usize,
    /// The cube's first output column.
    pub x0: usize,
    /// The cube's first output row.
    pub y0: usize,
}

/// This unit's walk in a cube of `layout` over planes of `height × width`, `planes_per_mask`
/// image planes to a mask plane.
#[cube]
pub fn walk_pixel(
    height: usize,
    width: usize,
    planes_per_mask: usize,
    #[comptime] radius: usize,
    #[comptime] layout: StripLayout,
) -> WalkPixel {
    let plane = CUBE_POS_Z as usize;
    let x0 = CUBE_POS_X as usize * comptime![tile_columns(radius)];
    let y0 = CUBE_POS_Y as usize * comptime![layout.tile_rows(radius)];
    WalkPixel {
        plane,
        plane_base: plane * height * width,
        mask_base: (plane / planes_per_mask) * height * width,
        col_r: x0 + UNIT_POS_X as usize,
        row_r: y0 + UNIT_POS_Y as usize * comptime![layout.walk_rows(radius)],
        x0,
        y0,
    }
}

/// One item of the pass across: buffer row `row` (valid below the buffer's rows), pair
/// `pair`, whose first pixel is (`x`, `y`) of the image.
#[derive(CubeType)]
pub struct PairItem {
    /// Row of the buffer.
    pub row: usize,
    /// Pair in the row: output columns `2·pair` and `2·pair + 1` of the tile.
    pub pair: usize,
    /// Image column of the pair's first pixel.
    pub x: usize,
    /// Image row.
    pub y: usize,
}

/// The item this unit takes in round `round` of the pass across chunk `chunk`: items number
/// the buffer's pairs row by row, and the units take them in turn.
#[cube]
pub fn pair_item(
    at: &WalkPixel,
    chunk: usize,
    round: usize,
    #[comptime] radius: usize,
    #[comptime] layout: StripLayout,
) -> PairItem {
    let taps_len = comptime![2 * radius + 1];
    let pairs = comptime![tile_columns(radius) / 2];
    let item = UNIT_POS as usize + round * comptime![layout.units()];
    let row = item / pairs;
    let pair = item % pairs;
    PairItem {
        row,
        pair,
        x: at.x0 + 2 * pair,
        y: at.y0
            + (row / taps_len) * comptime![layout.walk_rows(radius)]
            + chunk * taps_len
            + row % taps_len,
    }
}

/// Rounds of the pass across: every unit takes one item a round.
pub const fn rounds(layout: StripLayout, radius: usize) -> usize {
    (layout.buffer_rows(radius) * (tile_columns(radius) / 2)).div_ceil(layout.units())
}

/// Pixel `q` (0 or 1) of a pair: where it is and where its plane starts.
#[derive(CubeType)]
pub struct OutputPixel {
    /// Image column.
    pub x: usize,
    /// Image row.
    pub y: usize,
    /// The (batch, channel) plane.
    pub plane: usize,
    /// The plane's first element in the outputs (and contiguous inputs).
    pub plane_base: usize,
    /// The mask plane's first element.
    pub mask_base: usize,
}

/// Pixel `q` of the pair of `item`, in the plane `at` walks.
#[cube]
pub fn output_pixel(at: &WalkPixel, item: &PairItem, #[comptime] q: usize) -> OutputPixel {
    OutputPixel {
        x: item.x + q,
        y: item.y,
        plane: at.plane,
        plane_base: at.plane_base,
        mask_base: at.mask_base,
    }
}
