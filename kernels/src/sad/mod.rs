//! Soft Anisotropic Diagram kernels: the differentiable render, the candidate lists and the
//! training steps (per-site statistics, tau diffusion, Adam, pruning, the step clock of a replayed
//! iteration).
//!
//! # Sites
//! A site is 10 f32 values in this order ([`SITE_PARAMS`] per site, row-major `[capacity, 10]`):
//! position x, y (pixels, origin top-left, y down), log τ, radius (pixels), colour r, g, b,
//! direction x, y (unit vector), log anisotropy. A site with position x < 0 is inactive: every
//! kernel skips it, so a fixed-capacity buffer can hold pruned slots.
//!
//! # Candidates
//! Each cell of the candidate grid (one cell per pixel, or per `downscale`² pixels) holds
//! [`K`] site ids, `[cells, K]` i32, best first, [`EMPTY`] for an empty slot. A pixel blends the
//! sites of its cell only.
//!
//! # Distances
//! The score of site i at point q is `s = √max(D², 1e-8) − r / S`, with
//! `D² = (e^a·(u·δ)² + e^−a·max(|δ|² − (u·δ)², 0)) / S²`, `δ = q − p`, `S = max(W, H)`.
//! A pixel's logit for i is `−τ·s`; the ranking key of a candidate is `max(τ, 1e-4)·s`.

#![allow(clippy::needless_range_loop, clippy::collapsible_if)]

#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod adam;
mod blend;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod candidates;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod clock;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod grid;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod half;
mod layout;
mod lists;
mod plane_runs;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod prune;
mod ranked;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod record;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod render;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod render_backward;
mod score;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod statistics;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod table_sums;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod tau_diffusion;
mod tile_hash;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod view;
#[allow(missing_docs)] // CubeCL-generated launch items: see the crate root.
mod winner;

pub use adam::{
    ADAM_CUBE, ADAM_STATE, AdamStep, AdamStepCompilationArg, AdamStepLaunch, M_COLOR, M_DIRECTION,
    M_LOG_ANISO, M_LOG_TAU, M_POSITION, M_RADIUS, V_POSITION, adam_kernel,
};
pub use candidates::{
    PassConfig, PassConfigCompilationArg, PassConfigLaunch, candidate_pass_kernel,
    init_candidates_kernel, jfa_flood_kernel, seed_candidates_kernel,
};
pub use clock::{
    CLOCK_COLUMNS, CLOCK_CORRECTION1, CLOCK_CORRECTION2, CLOCK_LAMBDA, TrainingWords,
    TrainingWordsLaunch, advance_clock_kernel, clock_value, copy_state_kernel,
};
pub use grid::{PixelGrid, PixelGridCompilationArg, PixelGridLaunch};
pub use half::{f16_bits, f16_value};
pub use layout::{
    CELL_TILE, COLOR, DIRECTION, EMPTY, K, LOG_ANISO, LOG_TAU, POSITION, RADIUS, SITE_PARAMS, TILE,
};
pub use plane_runs::PlaneSums;
pub use prune::{
    RADIX_BINS, RadixDigit, RadixDigitCompilationArg, RadixDigitLaunch, SELECT_STATE,
    prune_choose_kernel, prune_histogram_kernel, prune_mark_kernel, prune_start_kernel,
};
pub use record::{
    DEAD_X, LIVE_ABOVE, PACK_CUBE, PACKED_WORDS, RANK_COLOR, RANK_DIRECTION, RANK_RADIUS,
    RANK_SQUEEZE, RANK_STRETCH, RANK_TAU, RANK_X, RECORD_WORDS, exact_ranking_kernel,
    pack_sites_kernel,
};
pub use render::render_kernel;
pub use render_backward::{BackwardOutputs, render_backward_kernel};
pub use statistics::{DENSIFY_STATS, StatisticsKind, site_statistics_kernel};
pub use table_sums::{FIXED_LIMIT, FRACTION_BITS, LOW_BITS, SMALL_LIMIT, TableSums};
pub use tau_diffusion::{
    DEAD_HOME, NeighbourSource, TauNeighbours, TauNeighboursCompilationArg, TauNeighboursLaunch,
    tau_diffusion_kernel,
};
pub use view::{
    CELL_HASH, ColourView, ColourViewCompilationArg, ColourViewLaunch, ROUND_GREY, TAU_RAMP,
    ViewColours, cell_colour, mark_sites_kernel, rgba_kernel, view_colour_kernel,
};
pub use winner::winner_kernel;
