//! Fused SSIM kernels: one forward kernel (SSIM sum per tile plus, in training, the partial
//! derivatives the backward needs) and one backward kernel (the input gradients).
//!
//! # Layout
//! A cube covers a tile of [`COLUMNS`] × `rows · strips` output pixels of one (batch, channel)
//! plane; `rows` and `strips` are comptime ([`StripLayout`]). It stages the tile plus its apron
//! in shared memory once. Each unit then owns one column and a strip of `rows` output rows: it
//! blurs each of the `rows + 2·radius` staged rows it needs horizontally, keeps the last
//! `2·radius + 1` results in a register ring, and blurs vertically from that ring. Unlike the
//! reference kernels, no horizontally blurred rows go through shared memory, so shared-memory
//! traffic per output pixel drops from about 80 to about 20 loads.
//!
//! # 3D
//! 3D SSIM runs the same 2D kernels over every slice first: the forward in `moments_only` mode
//! (XY-blurred statistics) and the backward in `blur_only` mode (XY-blurred partial maps). A
//! depth kernel then walks each voxel column through a chunk of slices with the same register
//! ring along Z. Depth chunks are part of the grid, so even one small volume fills a large GPU.

// Comptime loops are unrolled at kernel expansion and index comptime tap tables; iterator
// forms do not exist in `#[cube]` code. Comptime conditions stay in their own `if`, apart from
// runtime ones, so that a false one removes the whole branch at expansion.
#![allow(
    clippy::needless_range_loop,
    clippy::collapsible_if,
    clippy::collapsible_else_if
)]

#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod args;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod backward;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod depth_backward;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod depth_forward;
mod epilogue;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod forward;
#[allow(missing_docs)] // CubeCL-generated expand items: see the crate root.
mod index;
mod load;
mod reduce;
mod ring;
#[allow(missing_docs)] // CubeCL-generated expand items: see the crate root.
mod stage;
mod window;

pub use args::{
    BackwardArgs, BackwardArgsLaunch, BackwardConfig, BackwardOutput, ForwardArgs,
    ForwardArgsLaunch, ForwardConfig, ForwardOutput, InputLayout, InputStrides, InputStridesLaunch,
    Upstream,
};
pub use backward::ssim_backward_kernel;
pub use depth_backward::ssim3d_depth_backward_kernel;
pub use depth_forward::ssim3d_depth_forward_kernel;
pub use epilogue::SsimTerm;
pub use forward::ssim_forward_kernel;
pub use load::InputEncoding;
pub use window::{DEFAULT_RADIUS, DEFAULT_SIGMA, gaussian_taps};

/// Output columns per cube: one unit per column, a warp wide on NVIDIA.
pub const COLUMNS: usize = 32;

/// Comptime tiling of a cube: `strips` units per column, each computing `rows` output rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StripLayout {
    /// Output rows per unit.
    pub rows: usize,
    /// Units per column.
    pub strips: usize,
}

impl StripLayout {
    /// Output rows per cube.
    pub const fn tile_rows(self) -> usize {
        self.rows * self.strips
    }

    /// Units per cube.
    pub const fn units(self) -> usize {
        COLUMNS * self.strips
    }

    /// Shared memory the staged tile takes, in elements, for `maps` interleaved/planar maps.
    pub const fn staged_len(self, radius: usize, maps: usize) -> usize {
        (self.tile_rows() + 2 * radius) * (COLUMNS + 2 * radius) * maps
    }
}

/// Comptime tiling of the 3D depth-stage kernels: a cube of [`COLUMNS`] × `rows` units, each
/// owning one voxel column over `depth_chunk` consecutive slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DepthLayout {
    /// Voxel rows per cube.
    pub rows: usize,
    /// Slices per unit.
    pub depth_chunk: usize,
}

impl DepthLayout {
    /// Units per cube.
    pub const fn units(self) -> usize {
        COLUMNS * self.rows
    }
}

/// Which partial-derivative maps the training forward stores, and so which input gradients the
/// backward can produce. Each combination compiles to its own kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GradTargets {
    /// The first image needs a gradient.
    pub img1: bool,
    /// The second image needs a gradient.
    pub img2: bool,
}

impl GradTargets {
    /// Number of stored partial maps: ∂S/∂σ² and ∂S/∂σxy are shared, each tracked input adds its
    /// own ∂S/∂μ.
    pub const fn partial_count(self) -> usize {
        2 + self.img1 as usize + self.img2 as usize
    }

    /// Number of gradient maps the backward writes.
    pub const fn grad_count(self) -> usize {
        self.img1 as usize + self.img2 as usize
    }

    /// Slot of ∂S/∂μ₁ in the partial-map stack.
    pub const fn mu1_slot(self) -> usize {
        2
    }

    /// Slot of ∂S/∂μ₂ in the partial-map stack.
    pub const fn mu2_slot(self) -> usize {
        2 + self.img1 as usize
    }
}

/// SSIM's luminance constant, (0.01 · L)² for data range L = 1.
pub const C1: f32 = 1e-4;
/// SSIM's contrast constant, (0.03 · L)² for data range L = 1.
pub const C2: f32 = 9e-4;

/// Partial-map slot of ∂S/∂σ₁² (equal to ∂S/∂σ₂²).
pub const SIGMA_SQ_SLOT: usize = 0;
/// Partial-map slot of ∂S/∂σ₁₂.
pub const COVARIANCE_SLOT: usize = 1;
