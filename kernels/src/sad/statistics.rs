//! Per-site statistics of the current render against the target, for pruning and densifying.

use cubecl::prelude::*;

use super::grid::PixelGrid;

use super::blend::{blend_weights, blended_colour};
use super::layout::K;
use super::lists::cell_ids;
use super::record::read_colour;
use super::render::cell_of_pixel;
use super::table_sums::TableSums;
use super::tile_hash::{TileHash, accumulate, flush};

/// Channels of the densify statistics: mass, energy, ω, ω·x, ω·y, ω·x², ω·x·y, ω·y².
pub const DENSIFY_STATS: usize = 8;

/// What [`site_statistics_kernel()`] accumulates per site.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StatisticsKind {
    /// One channel: the increase of the squared error if the site were removed, summed over the
    /// pixels that blend it (1e6 per pixel the site fully owns).
    RemovalDelta,
    /// [`DENSIFY_STATS`] channels: for total blend weight W of the site at a pixel with squared
    /// error e, W, W·e and, with ω = W·min(e, 1), ω, ω·x, ω·y, ω·x², ω·x·y, ω·y².
    Densify,
}

impl StatisticsKind {
    /// Channels per site of the output.
    pub const fn channels(self) -> usize {
        match self {
            StatisticsKind::RemovalDelta => 1,
            StatisticsKind::Densify => DENSIFY_STATS,
        }
    }
}

/// Accumulates per-site statistics into `stats` (`[capacity, kind.channels()]`, zeroed by the
/// caller) from the render of the sites, read from their full records `records` (see
/// [`pack_sites_kernel`](crate::sad::pack_sites_kernel())), against `target` (`[3, height, width]`;
/// a pixel whose red value is negative lies outside the fit's mask and is skipped).
///
/// Every pixel recomputes its blend; a site listed in several slots counts once, with its total
/// weight W. Sums go through the tile hash (see `TileHash`; `sums` is the table's form, see
/// [`TableSums`]); every unit reaches every barrier.
///
/// Launch with `(TILE, TILE)` cubes over the image.
#[cube(launch, launch_unchecked)]
pub fn site_statistics_kernel<F: Float, N: Size>(
    records: &Tensor<Vector<u32, N>>,
    candidates: &Tensor<Vector<i32, N>>,
    target: &Tensor<F>,
    stats: &mut Tensor<Atomic<F>>,
    grid: PixelGrid,
    #[comptime] kind: StatisticsKind,
    #[comptime] sums: TableSums,
    #[define(F)] _dtype: ElemType,
) {
    let channels = comptime![kind.channels()];
    let hash = TileHash::<F>::new(channels, sums);

    let x = CUBE_POS_X as usize * CUBE_DIM_X as usize + UNIT_POS_X as usize;
    let y = CUBE_POS_Y as usize * CUBE_DIM_Y as usize + UNIT_POS_Y as usize;
    if x < grid.width && y < grid.height {
        let cell = cell_of_pixel(x, y, grid.width, grid.height, grid.cand_w, grid.cand_h);
        let qx = F::cast_from(x);
        let qy = F::cast_from(y);
        let blend = blend_weights::<F, N>(records, candidates, &grid, cell, qx, qy, true);
        let plane = grid.height * grid.width;
        let pixel = y * grid.width + x;
        // A target pixel with a negative red value lies outside the fit's mask.
        if blend.any && target[pixel] >= F::new(0.0) {
            let mut pred = Array::<F>::new(3usize);
            let mut truth = Array::<F>::new(3usize);
            let mut err = F::new(0.0);
            let colour = blended_colour::<F, N>(records, &blend);
            #[unroll]
            for c in 0..3 {
                let sum = colour[c];
                pred[c] = sum;
                truth[c] = target[c * plane + pixel];
                let d = sum - truth[c];
                err += d * d;
            }
            let slots = cell_ids::<N>(candidates, cell);
            #[unroll]
            for k in 0..K {
                let share = slot_share(&slots, k, slots[k]);
                // Every slot of one site has the same weight.
                let total = blend.weights[k] * F::cast_from(share.slots);
                if blend.live[k] && share.first && total > F::new(0.0) {
                    let site = blend.ids[k];
                    let mut values = Array::<F>::new(channels);
                    if comptime![kind == StatisticsKind::RemovalDelta] {
                        let colour = read_colour::<F, N>(records, site);
                        values[0] = removal_delta::<F>(&colour, total, &pred, &truth, err);
                    } else {
                        let omega = total * F::min(err, F::new(1.0));
                        values[0] = total;
                        values[1] = total * err;
                        values[2] = omega;
                        values[3] = omega * qx;
                        values[4] = omega * qy;
                        values[5] = omega * qx * qx;
                        values[6] = omega * qx * qy;
                        values[7] = omega * qy * qy;
                    }
                    accumulate::<F>(&hash, stats, site, &values, channels, sums);
                }
            }
        }
    }

    flush::<F>(&hash, stats, channels, sums);
}

/// How often a pixel's list names the site of slot `k` (`id`), and whether `k` is the first slot
/// that names it.
#[derive(CubeType)]
pub struct SlotShare {
    /// Whether no earlier slot names the site.
    pub first: bool,
    /// Slots that name the site, `k` included.
    pub slots: u32,
}

/// [`SlotShare`] of slot `k` of a pixel's candidate list `list` (see [`cell_ids`]).
#[cube]
pub fn slot_share(list: &Array<i32>, k: usize, id: i32) -> SlotShare {
    let mut first = true;
    let mut slots = 0u32;
    #[unroll]
    for j in 0..K {
        if list[j] == id {
            slots += 1;
            if j < k {
                first = false;
            }
        }
    }
    SlotShare { first, slots }
}

/// The increase of a pixel's squared error `err` (prediction `pred`, target `truth`) if a site of
/// colour `colour` and total weight `total` there were removed and the others renormalised; 1e6 where the site
/// owns the pixel (1 − total < 1e-4), as the reference rules.
#[cube]
pub fn removal_delta<F: Float>(
    colour: &Array<F>,
    total: F,
    pred: &Array<F>,
    truth: &Array<F>,
    err: F,
) -> F {
    let rest = F::new(1.0) - total;
    let mut delta = F::new(1e6);
    if rest >= F::new(1e-4) {
        let mut without = F::new(0.0);
        #[unroll]
        for c in 0..3 {
            let d = (pred[c] - total * colour[c]) / rest - truth[c];
            without += d * d;
        }
        delta = without - err;
    }
    delta
}
