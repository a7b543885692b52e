//! Tau-gradient diffusion: a Jacobi step of a screened Poisson system over the candidate graph,
//! which smooths log τ updates between neighbouring sites.

use cubecl::prelude::*;

use super::clock::{CLOCK_LAMBDA, clock_value};
use super::layout::{EMPTY, K, POSITION, SITE_PARAMS};
use super::score::is_live;

/// The home row of a dead site's column in the neighbour lists, so that later passes skip it
/// without loading its position.
pub const DEAD_HOME: i32 = -2;

/// Where a Jacobi pass of [`tau_diffusion_kernel()`] finds each site's neighbours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NeighbourSource {
    /// From the candidate lists; the pass writes them to `list` (a step's first pass).
    Find,
    /// From `kept`, the lists of an earlier step over the same candidate lists and the same
    /// live sites, for every site whose home cell has not changed since (from the candidate
    /// lists for the others); the pass writes them all to `list` (a step's first pass).
    Kept,
    /// From `list`, which this step's first pass wrote.
    List,
}

/// One Jacobi pass: `out[i] = (raw[i] + λ Σ_j input[j]) / (1 + λ·n)` over the n distinct live
/// sites j ≠ i listed in the candidate cell nearest to site i (its position / downscale,
/// rounded). Inactive sites, and every site when λ ≤ 0, copy `input` through.
///
/// `raw[i]` is read at `i·raw_stride + raw_offset` and `input[i]` at `i·input_stride +
/// input_offset`, so both can be a column of the `[capacity, 10]` gradients.
///
/// The neighbours do not change between the passes of one step, so the first pass finds them
/// and writes them to `list` (`[K + 1, capacity]`: site i's k-th neighbour at `k·capacity + i`,
/// so that a plane's stores and loads are coalesced; in candidate order, [`EMPTY`] after the
/// last; row K holds the home cell they were found in, −1 at λ ≤ 0, [`DEAD_HOME`] for a dead
/// site), and later passes read them from there:
/// two dependent loads per neighbour instead of five (position, cell, candidate, liveness,
/// value). Between candidate updates, densifications and prunes they do not change from step
/// to step either, except for a site that moved to another cell: with
/// [`NeighbourSource::Kept`] the first pass copies the `kept` lists of the previous step where
/// the home cell is the same, and finds the others again. `kept` is not read otherwise.
///
/// λ is `neighbours.lambda`, or with `clocked` the clock row `tick[0]` names (see
/// [`clock_value()`]; neither buffer is read otherwise). `kept` may be `list` itself: a unit reads
/// and writes only its own site's column.
///
/// Launch with one unit per site, 1D.
#[cube(launch, launch_unchecked)]
// Nine buffers (sites, candidates, kept lists, neighbour lists, raw values, input, output, the
// clock and its tick) beside the launch struct.
#[allow(clippy::too_many_arguments)]
pub fn tau_diffusion_kernel(
    sites: &Tensor<f32>,
    candidates: &Tensor<i32>,
    kept: &Tensor<i32>,
    list: &mut Tensor<i32>,
    raw: &Tensor<f32>,
    raw_stride: usize,
    raw_offset: usize,
    input: &Tensor<f32>,
    output: &mut Tensor<f32>,
    neighbours: TauNeighbours,
    site_count: usize,
    clock: &Tensor<f32>,
    tick: &Tensor<u32>,
    #[comptime] source: NeighbourSource,
    #[comptime] clocked: bool,
) {
    let site = ABSOLUTE_POS;
    let lambda = clock_value(neighbours.lambda, clock, tick, CLOCK_LAMBDA, clocked);
    if site < site_count {
        let copy = site * neighbours.input_stride + neighbours.input_offset;
        if comptime![source == NeighbourSource::List] {
            // The first pass marked the dead sites in the home row: a coalesced load instead
            // of a gather of the position.
            if list[K * site_count + site] == DEAD_HOME {
                output[site] = input[copy];
            } else {
                let own = raw[site * raw_stride + raw_offset];
                output[site] =
                    jacobi_from_list(&*list, input, &neighbours, lambda, site, own, site_count);
            }
        } else {
            let base = site * SITE_PARAMS;
            let px = sites[base + POSITION];
            if px < 0.0 {
                output[site] = input[copy];
                list[K * site_count + site] = DEAD_HOME;
            } else {
                let own = raw[site * raw_stride + raw_offset];
                let py = sites[base + POSITION + 1];
                let mut copied = false;
                if comptime![source == NeighbourSource::Kept] {
                    let home = home_cell(px, py, &neighbours) as i32;
                    if lambda > 0.0 && kept[K * site_count + site] == home {
                        #[unroll]
                        for k in 0..comptime![K + 1] {
                            list[k * site_count + site] = kept[k * site_count + site];
                        }
                        copied = true;
                    }
                }
                if copied {
                    output[site] =
                        jacobi_from_list(kept, input, &neighbours, lambda, site, own, site_count);
                } else {
                    let at = JacobiSite {
                        site,
                        px,
                        py,
                        own,
                        lambda,
                    };
                    output[site] =
                        jacobi_update(sites, candidates, list, input, &neighbours, at, site_count);
                }
            }
        }
    }
}

launch_struct! {
    /// Where a Jacobi pass of tau diffusion finds a site's neighbours and their values (site j's
    /// at `input[j·input_stride + input_offset]`), and its weight.
    pub struct TauNeighbours(TauNeighboursLaunch, TauNeighboursCompilationArg) {
        /// Stride of `input` between sites.
        pub input_stride: usize,
        /// Offset of site 0's value in `input`.
        pub input_offset: usize,
        /// Candidate grid width.
        pub cand_w: usize,
        /// Candidate grid height.
        pub cand_h: usize,
        /// 1 / the candidate grid's downscale.
        pub inv_downscale: f32,
        /// λ; at λ ≤ 0 the pass copies `input` through. A clocked launch reads it from the clock
        /// instead.
        pub lambda: f32,
    }
}

/// One site's Jacobi update: the live site, its position, its raw value and the weight λ.
#[derive(CubeType, Clone, Copy)]
pub struct JacobiSite {
    /// The site's slot.
    pub site: usize,
    /// Position x.
    pub px: f32,
    /// Position y.
    pub py: f32,
    /// The site's raw value.
    pub own: f32,
    /// λ: a clocked launch's, not `neighbours.lambda`.
    pub lambda: f32,
}

/// The Jacobi update of live `at.site` at (`at.px`, `at.py`) with raw value `at.own`:
/// `(own + λ Σ_j input_j) / (1 + λ·n)` over the n distinct live sites j ≠ `site` of its home
/// cell, with λ = `at.lambda`; `input`'s own value where λ ≤ 0. The neighbours also go to
/// column `site` of `list` (`[K + 1, site_count]`, the home cell in row K), for
/// [`jacobi_from_list`].
#[cube]
pub fn jacobi_update(
    sites: &Tensor<f32>,
    candidates: &Tensor<i32>,
    list: &mut Tensor<i32>,
    input: &Tensor<f32>,
    neighbours: &TauNeighbours,
    at: JacobiSite,
    site_count: usize,
) -> f32 {
    let site = at.site;
    let lambda = at.lambda;
    let stride = neighbours.input_stride;
    let offset = neighbours.input_offset;
    let mut value = input[site * stride + offset];
    if lambda > 0.0 {
        let cell = home_cell(at.px, at.py, neighbours);
        list[K * site_count + site] = cell as i32;
        let mut sum = 0.0f32;
        let mut count = 0usize;
        #[unroll]
        for k in 0..K {
            let id = candidates[cell * K + k];
            let mut fresh = id != site as i32 && is_live::<f32>(sites, id, site_count);
            #[unroll]
            for j in 0..K {
                if j < k && candidates[cell * K + j] == id {
                    fresh = false;
                }
            }
            if fresh {
                sum += input[id as usize * stride + offset];
                list[count * site_count + site] = id;
                count += 1;
            }
        }
        for k in count..K {
            list[k * site_count + site] = EMPTY;
        }
        value = screened(at.own, sum, f32::cast_from(count), lambda);
    } else {
        // No lists at λ ≤ 0: the home row says so, so that no later step copies them.
        list[K * site_count + site] = -1;
    }
    value
}

/// [`jacobi_update`] of live `site` over the neighbours a first pass wrote to column `site` of
/// `list` (`[K + 1, site_count]`), in the same order (so the sum is the same, bit for bit), with
/// weight `lambda`.
#[cube]
pub fn jacobi_from_list(
    list: &Tensor<i32>,
    input: &Tensor<f32>,
    neighbours: &TauNeighbours,
    lambda: f32,
    site: usize,
    own: f32,
    site_count: usize,
) -> f32 {
    let stride = neighbours.input_stride;
    let offset = neighbours.input_offset;
    let mut value = input[site * stride + offset];
    if lambda > 0.0 {
        let mut sum = 0.0f32;
        let mut count = 0.0f32;
        #[unroll]
        for k in 0..K {
            let id = list[k * site_count + site];
            if id != EMPTY {
                sum += input[id as usize * stride + offset];
                count += 1.0;
            }
        }
        value = screened(own, sum, count, lambda);
    }
    value
}

/// The Jacobi update `(own + λ·sum) / (1 + λ·n)` of a site with n neighbours whose values add
/// up to `sum`: one expression for [`jacobi_update`] and [`jacobi_from_list`], so their results
/// agree bit for bit.
#[cube]
fn screened(own: f32, sum: f32, neighbours: f32, lambda: f32) -> f32 {
    (own + lambda * sum) / (1.0 + lambda * neighbours)
}

/// The candidate cell nearest to a site at (`px`, `py`): its position / downscale, rounded and
/// clamped to the grid.
#[cube]
fn home_cell(px: f32, py: f32, neighbours: &TauNeighbours) -> usize {
    let cx = home_index(px * neighbours.inv_downscale, neighbours.cand_w);
    let cy = home_index(py * neighbours.inv_downscale, neighbours.cand_h);
    cy * neighbours.cand_w + cx
}

/// `coordinate` rounded to the nearest cell index in `[0, cells)`.
#[cube]
fn home_index(coordinate: f32, cells: usize) -> usize {
    let rounded = i32::cast_from(coordinate + 0.5);
    i32::clamp(rounded, 0, cells as i32 - 1) as usize
}
