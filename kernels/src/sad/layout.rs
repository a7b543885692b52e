//! The layout every SAD kernel shares: candidates per pixel, a site's columns and the render's
//! tile (see the module documentation for what a site and a candidate list hold).

/// Candidates per pixel.
pub const K: usize = 8;
/// f32 values per site.
pub const SITE_PARAMS: usize = 10;
/// An empty candidate slot.
pub const EMPTY: i32 = -1;

/// Column of position x in the site layout (y follows).
pub const POSITION: usize = 0;
/// Column of log τ.
pub const LOG_TAU: usize = 2;
/// Column of the radius.
pub const RADIUS: usize = 3;
/// Column of colour r (g and b follow).
pub const COLOR: usize = 4;
/// Column of direction x (y follows).
pub const DIRECTION: usize = 7;
/// Column of log anisotropy.
pub const LOG_ANISO: usize = 9;

/// Side of the square tile of pixels one render cube covers.
pub const TILE: usize = 16;

/// Units per side of the square cubes of the per-cell candidate kernels (a unit a cell), as the
/// library and the viewer's kernel export launch them.
pub const CELL_TILE: u32 = 16;
