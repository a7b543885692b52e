//! Fused SSIM kernels: one forward kernel (SSIM sum per tile plus, in training, the partial
//! derivatives the backward needs) and one backward kernel (the input gradients).
//!
//! # Layout
//! A cube covers [`tile_columns`] output columns (the [`WALK_COLUMNS`] it reads less the
//! window's apron) and [`StripLayout::tile_rows`] output rows of one (batch, channel) plane.
//! Both kernels blur vertically first, then horizontally:
//!
//! 1. **Walk.** Each unit owns one of the [`WALK_COLUMNS`] columns and walks down a strip of
//!    rows, reading its inputs straight from global memory (coalesced: a warp reads 32
//!    neighbouring pixels of one row). It forms each pixel's values once (x, y, x², y², xy in the
//!    forward; the partial maps in the backward), keeps the last `2·radius + 1` rows of them in a
//!    register ring, and blurs each output row vertically from the ring into a shared buffer.
//! 2. **Across.** After every `2·radius + 1` output rows (one chunk, so that the ring's slots
//!    repeat from chunk to chunk and the walk is a runtime loop), the cube blurs the buffered
//!    rows horizontally, each unit two neighbouring output pixels from one run of shared loads,
//!    and finishes them (the SSIM formula and partials, or the gradients).
//!
//! The buffer keeps a pixel's values four at a time in planes of 4-wide vectors (one 128-bit
//! shared access for four) and the rest in scalar planes. Each plane keeps a row's even columns
//! first and its odd ones from slot [`ODD_QUAD_SLOTS`] (vectors) or [`ODD_SLOTS`] (scalars),
//! rows [`StripLayout::quad_row_stride`] or [`StripLayout::row_stride`] apart: the walk's
//! stores and the pairs' loads each touch every bank once a quarter warp (vectors) or a warp
//! (scalars).
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
mod buffer;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod depth_backward;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod depth_forward;
#[allow(missing_docs)] // CubeCL-generated expand items: see the crate root.
mod depth_walk;
mod epilogue;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod forward;
#[allow(missing_docs)] // CubeCL-generated expand items: see the crate root.
mod index;
mod load;
#[allow(missing_docs)] // CubeCL-generated expand items: see the crate root.
mod pairs;
mod reduce;
mod ring;
#[allow(missing_docs)] // CubeCL-generated expand items: see the crate root.
mod walk;
mod window;

pub use args::{
    BackwardArgs, BackwardArgsCompilationArg, BackwardArgsLaunch, BackwardConfig, BackwardOutput,
    BackwardSources, BackwardSourcesCompilationArg, BackwardSourcesLaunch, DepthArgs,
    DepthArgsCompilationArg, DepthArgsLaunch, DepthBackwardConfig, DepthBackwardSources,
    DepthBackwardSourcesCompilationArg, DepthBackwardSourcesLaunch, DepthForwardConfig,
    ForwardArgs, ForwardArgsCompilationArg, ForwardArgsLaunch, ForwardConfig, ForwardOutput,
    ForwardSources, ForwardSourcesCompilationArg, ForwardSourcesLaunch, InputLayout, InputStrides,
    InputStridesCompilationArg, InputStridesLaunch, Upstream,
};
pub use backward::ssim_backward_kernel;
pub use depth_backward::ssim3d_depth_backward_kernel;
pub use depth_forward::ssim3d_depth_forward_kernel;
pub use epilogue::SsimTerm;
pub use forward::ssim_forward_kernel;
pub use load::InputEncoding;
pub use pairs::PairWrites;
pub use walk::rounds;
pub use window::{DEFAULT_RADIUS, DEFAULT_SIGMA, gaussian_taps};

/// Columns of the 3D depth-stage cubes: one unit per voxel column, a warp wide on NVIDIA.
pub const COLUMNS: usize = 32;

/// Columns a 2D cube walks: its output columns and the window's apron on both sides.
pub const WALK_COLUMNS: usize = 64;

/// Buffer slot of the first odd column of a row of a scalar plane (see the module docs).
pub const ODD_SLOTS: usize = 48;

/// Buffer slot of the first odd column of a row of a 4-wide vector plane: past the 32 even
/// columns, and 4 past a multiple of 8, so that a quarter warp's eight 128-bit stores (even and
/// odd columns alternating) fall in eight distinct 16-byte bank groups.
pub const ODD_QUAD_SLOTS: usize = 36;

/// Output columns of a 2D cube for a window of `radius`: [`WALK_COLUMNS`] less the apron.
pub const fn tile_columns(radius: usize) -> usize {
    WALK_COLUMNS - 2 * radius
}

/// Comptime tiling of a 2D cube: `strips` walkers per column, each producing `chunks` chunks
/// of `2·radius + 1` output rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StripLayout {
    /// Chunks of `2·radius + 1` output rows each walker produces.
    pub chunks: usize,
    /// Walkers per column.
    pub strips: usize,
}

impl StripLayout {
    /// Output rows per walker.
    pub const fn walk_rows(self, radius: usize) -> usize {
        self.chunks * (2 * radius + 1)
    }

    /// Output rows per cube.
    pub const fn tile_rows(self, radius: usize) -> usize {
        self.walk_rows(radius) * self.strips
    }

    /// Units per cube.
    pub const fn units(self) -> usize {
        WALK_COLUMNS * self.strips
    }

    /// Rows of the shared buffer: one chunk of every walker.
    pub const fn buffer_rows(self, radius: usize) -> usize {
        self.strips * (2 * radius + 1)
    }

    /// Slots from one buffer row to the next: at least the row's [`ODD_SLOTS`] + 32, and one
    /// pair count past a multiple of 32, so that consecutive output pairs, across a row's end,
    /// fall in consecutive banks.
    pub const fn row_stride(radius: usize) -> usize {
        WALK_COLUMNS + tile_columns(radius) / 2
    }

    /// Vector slots from one row of a 4-wide plane to the next: at least the row's
    /// [`ODD_QUAD_SLOTS`] + 32, and as many past a multiple of 8 as a row has output pairs, so
    /// that a quarter warp's eight consecutive pairs, across a row's end, fall in distinct
    /// 16-byte bank groups.
    pub const fn quad_row_stride(radius: usize) -> usize {
        let least = ODD_QUAD_SLOTS + WALK_COLUMNS / 2;
        let pairs = tile_columns(radius) / 2;
        least + (pairs % 8 + 8 - least % 8) % 8
    }

    /// Vectors of the buffer's 4-wide planes, for `stats` values a pixel.
    pub const fn quad_len(self, radius: usize, stats: usize) -> usize {
        buffer::quad_planes(stats) * self.buffer_rows(radius) * Self::quad_row_stride(radius)
    }

    /// Elements of the buffer's scalar planes, for `stats` values a pixel.
    pub const fn scalar_len(self, radius: usize, stats: usize) -> usize {
        buffer::scalar_planes(stats) * self.buffer_rows(radius) * Self::row_stride(radius)
    }

    /// Shared memory the buffer takes, in f32 elements, for `stats` values a pixel.
    pub const fn buffer_len(self, radius: usize, stats: usize) -> usize {
        4 * self.quad_len(radius, stats) + self.scalar_len(radius, stats)
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

/// Blurred statistics SSIM needs at a pixel: μ₁, μ₂, E\[x² + y²\] and E\[xy\] (the variances
/// enter only as their sum). 3D's in-slice stage stores these, in this order.
pub const MOMENTS: usize = 4;

/// Partial-map slot of ∂S/∂σ₁² (equal to ∂S/∂σ₂²).
pub const SIGMA_SQ_SLOT: usize = 0;
/// Partial-map slot of ∂S/∂σ₁₂.
pub const COVARIANCE_SLOT: usize = 1;
