//! The pixel grid the per-pixel kernels cover: the image, the candidate grid its pixels read,
//! and the sites' count and distance scale.

use cubecl::prelude::*;

launch_struct! {
    /// What the per-pixel and per-cell kernels of a render take (the render, the winners, the
    /// backward, the statistics, the jump flood and the propagation pass), one launch argument
    /// for all of them: the image and candidate grid sizes, the sites' count and the squared
    /// distance scale. The library's launches and the viewer's export build it from here, so
    /// that an argument added is added once.
    pub struct PixelGrid(PixelGridLaunch, PixelGridCompilationArg) {
        /// Image width in pixels.
        pub width: usize,
        /// Image height in pixels.
        pub height: usize,
        /// Candidate grid width in cells.
        pub cand_w: usize,
        /// Candidate grid height in cells.
        pub cand_h: usize,
        /// Pixels per side of a candidate cell (the grid's downscale, at least 1): where the
        /// flood and the propagation pass place a cell's centre.
        pub downscale: usize,
        /// Sites in the records (their capacity; inactive ones included).
        pub site_count: usize,
        /// 1 / max(width, height)², the scale of squared distances.
        pub inv_scale_sq: f32,
    }
}
