//! The columns of a sites file, shared by the text and the packed formats: their names, the
//! largest magnitude each accepts, and where each in-memory parameter sits among them.

use burn_sad_kernels::sad::SITE_PARAMS;

/// Names of the file's columns, in file order.
pub(super) const COLUMN_NAMES: [&str; 10] = [
    "position_x",
    "position_y",
    "color_r",
    "color_g",
    "color_b",
    "log_tau",
    "radius",
    "aniso_dir_x",
    "aniso_dir_y",
    "log_anisotropy",
];

/// Largest magnitude accepted per file column: e^80 is near f32's limit, so larger log τ or
/// log anisotropy overflow the score to infinity and the blend to NaN; a position, radius or
/// direction beyond 10⁹ overflows squared distances the same way. Colours are clamped on output.
pub(super) const COLUMN_LIMITS: [f32; SITE_PARAMS] = [
    1e9,
    1e9,
    f32::MAX,
    f32::MAX,
    f32::MAX,
    80.0,
    1e9,
    1e9,
    1e9,
    80.0,
];

/// File column of each in-memory parameter (memory order: px, py, log τ, radius, r, g, b,
/// dir x, dir y, log anisotropy).
pub(super) const FILE_COLUMN: [usize; 10] = [0, 1, 5, 6, 2, 3, 4, 7, 8, 9];
