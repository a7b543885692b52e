//! Candidate-list maintenance: random initialisation, seeding each site into its own cell, the
//! jump-flood pre-pass and the propagation pass. None of these is differentiable.
//!
//! Every pseudo-random choice is a hash of the cell and the pass index (no RNG state), with the
//! reference's constants, so runs are reproducible.

use cubecl::prelude::*;

use super::half::unpack_site;
use super::score::{score_of, site_score};
use super::{EMPTY, K, LOG_TAU, POSITION, SITE_PARAMS};

/// Marsaglia's xorshift32 step.
#[cube]
pub fn xorshift32(state: u32) -> u32 {
    let mut x = state;
    x ^= x << 13u32;
    x ^= x >> 17u32;
    x ^= x << 5u32;
    x
}

/// The ranking key of `id` at point (`qx`, `qy`): max(τ, 1e-4)·s, smaller is better; `None`
/// (as `valid = false`) for an id out of range or an inactive site.
#[derive(CubeType)]
struct Key<F: Float> {
    value: F,
    valid: bool,
}

#[cube]
fn ranking_key<F: Float>(
    sites: &Tensor<F>,
    id: i32,
    site_count: usize,
    qx: F,
    qy: F,
    inv_scale_sq: F,
) -> Key<F> {
    let mut key = Key::<F> {
        value: F::new(0.0),
        valid: false,
    };
    if id >= 0 && (id as usize) < site_count {
        let site = id as usize;
        if sites[site * SITE_PARAMS + POSITION] >= F::new(0.0) {
            let tau = F::max(F::exp(sites[site * SITE_PARAMS + LOG_TAU]), F::new(1e-4));
            let value = tau * site_score::<F>(sites, site, qx, qy, inv_scale_sq, false).value;
            // NaN and ±∞ keys are never inserted.
            key.valid = F::abs(value) <= F::new(f32::MAX);
            key.value = value;
        }
    }
    key
}

/// [`ranking_key`] from the half-precision copy (see [`pack_sites_kernel`](crate::sad::pack_sites_kernel())), computed in f32 from
/// the f16-rounded values, as the reference's propagation ranks.
#[cube]
fn packed_ranking_key<F: Float>(
    packed: &Tensor<u32>,
    id: i32,
    site_count: usize,
    qx: F,
    qy: F,
    inv_scale_sq: F,
) -> Key<F> {
    let mut key = Key::<F> {
        value: F::new(0.0),
        valid: false,
    };
    if id >= 0 && (id as usize) < site_count {
        let site = unpack_site(packed, id as usize);
        if site.x >= 0.0 {
            let tau = F::max(F::exp(F::cast_from(site.log_tau)), F::new(1e-4));
            let score = score_of::<F>(
                F::cast_from(site.x),
                F::cast_from(site.y),
                F::cast_from(site.ux),
                F::cast_from(site.uy),
                F::cast_from(site.log_aniso),
                F::cast_from(site.radius),
                qx,
                qy,
                inv_scale_sq,
                false,
            );
            let value = tau * score.value;
            key.valid = F::abs(value) <= F::new(f32::MAX);
            key.value = value;
        }
    }
    key
}

/// A list of the best candidates found so far at one cell point, best first.
#[derive(CubeType)]
struct Ranked<F: Float> {
    ids: Array<i32>,
    keys: Array<F>,
    filled: Array<bool>,
    /// The point the keys are measured at.
    qx: F,
    qy: F,
}

/// An empty list of `len` entries for the point of cell (`cx`, `cy`): its top-left pixel, clamped
/// to the image, as the reference ranks it.
#[cube]
fn empty_ranked<F: Float>(
    cx: usize,
    cy: usize,
    downscale: usize,
    width: usize,
    height: usize,
    #[comptime] len: usize,
) -> Ranked<F> {
    let mut ids = Array::<i32>::new(len);
    let mut keys = Array::<F>::new(len);
    let mut filled = Array::<bool>::new(len);
    #[unroll]
    for i in 0..len {
        ids[i] = EMPTY;
        keys[i] = F::new(0.0);
        filled[i] = false;
    }
    Ranked::<F> {
        ids,
        keys,
        filled,
        qx: F::cast_from(usize::min(cx * downscale, width - 1)),
        qy: F::cast_from(usize::min(cy * downscale, height - 1)),
    }
}

/// Whether `list` (length `len`) already holds `id`.
#[cube]
fn holds<F: Float>(list: &mut Ranked<F>, id: i32, #[comptime] len: usize) -> bool {
    let mut seen = false;
    #[unroll]
    for i in 0..len {
        if list.filled[i] && list.ids[i] == id {
            seen = true;
        }
    }
    seen
}

/// Inserts `id` with `key` into `list` (length `len`) unless the key is invalid or ranks worse
/// than every entry of a full list. Ties go after equal keys.
#[cube]
fn insert_keyed<F: Float>(list: &mut Ranked<F>, id: i32, key: Key<F>, #[comptime] len: usize) {
    if key.valid {
        let mut carry_id = id;
        let mut carry_key = key.value;
        let mut carry_filled = true;
        let mut shifting = false;
        #[unroll]
        for i in 0..len {
            if carry_filled && (shifting || !list.filled[i] || carry_key < list.keys[i]) {
                let (old_id, old_key, old_filled) = (list.ids[i], list.keys[i], list.filled[i]);
                list.ids[i] = carry_id;
                list.keys[i] = carry_key;
                list.filled[i] = true;
                carry_id = old_id;
                carry_key = old_key;
                carry_filled = old_filled;
                shifting = true;
            }
        }
    }
}

/// Offers `id` to `list`, ranked from the f32 sites (the jump flood ranks so).
#[cube]
fn offer<F: Float>(
    list: &mut Ranked<F>,
    sites: &Tensor<F>,
    id: i32,
    site_count: usize,
    inv_scale_sq: F,
    #[comptime] len: usize,
) {
    if !holds::<F>(list, id, len) {
        let key = ranking_key::<F>(sites, id, site_count, list.qx, list.qy, inv_scale_sq);
        insert_keyed::<F>(list, id, key, len);
    }
}

/// Offers `id` to `list`, ranked from the half-precision copy (the propagation ranks so).
#[cube]
fn offer_packed<F: Float>(
    list: &mut Ranked<F>,
    packed: &Tensor<u32>,
    id: i32,
    site_count: usize,
    inv_scale_sq: F,
) {
    if !holds::<F>(list, id, K) {
        let key = packed_ranking_key::<F>(packed, id, site_count, list.qx, list.qy, inv_scale_sq);
        insert_keyed::<F>(list, id, key, K);
    }
}

/// Random initial lists: slot i of cell (cx, cy) gets `state % site_count` after
/// `state = xorshift32(state + i)`, starting from `seed ^ cx·1973 ^ cy·9277`. Duplicates are
/// possible (the propagation pass removes them).
///
/// Launch with one unit per cell, 2D over the `cand_w × cand_h` grid.
#[cube(launch)]
pub fn init_candidates_kernel(
    candidates: &mut Tensor<i32>,
    cand_w: usize,
    cand_h: usize,
    site_count: u32,
    seed: u32,
) {
    let cx = CUBE_POS_X as usize * CUBE_DIM_X as usize + UNIT_POS_X as usize;
    let cy = CUBE_POS_Y as usize * CUBE_DIM_Y as usize + UNIT_POS_Y as usize;
    if cx >= cand_w || cy >= cand_h {
        terminate!();
    }
    let mut state = seed ^ (cx as u32 * 1973u32) ^ (cy as u32 * 9277u32);
    let cell = cy * cand_w + cx;
    #[unroll]
    for i in 0..K {
        state = xorshift32(state + i as u32);
        candidates[cell * K + i] = (state % site_count) as i32;
    }
}

/// Writes every active site into slot 0 of the cell under its position. When several sites
/// share a cell, one of them wins (as in the reference, which races too).
///
/// Launch with one unit per site slot, 1D.
#[cube(launch)]
pub fn seed_candidates_kernel<F: Float>(
    sites: &Tensor<F>,
    candidates: &mut Tensor<i32>,
    cand_w: usize,
    cand_h: usize,
    site_count: usize,
    inv_downscale: f32,
    #[define(F)] _dtype: ElemType,
) {
    let site = ABSOLUTE_POS;
    if site >= site_count {
        terminate!();
    }
    let px = sites[site * SITE_PARAMS + POSITION];
    let py = sites[site * SITE_PARAMS + POSITION + 1];
    if px >= F::new(0.0) {
        let scale = F::cast_from(inv_downscale);
        let cx = i32::clamp(i32::cast_from(px * scale), 0, cand_w as i32 - 1) as usize;
        let cy = i32::clamp(i32::cast_from(py * scale), 0, cand_h as i32 - 1) as usize;
        candidates[(cy * cand_w + cx) * K] = site as i32;
    }
}

/// One jump-flood step: each cell keeps the best 4 of the lists held in half `read_half` (slots
/// `4·read_half .. 4·read_half + 4`) by itself and its 8 neighbours at distance `step`, and
/// writes them to the other half.
///
/// Launch with one unit per cell, 2D.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub fn jfa_flood_kernel<F: Float>(
    sites: &Tensor<F>,
    candidates: &mut Tensor<i32>,
    cand_w: usize,
    cand_h: usize,
    width: usize,
    height: usize,
    downscale: usize,
    site_count: usize,
    step: u32,
    read_half: u32,
    inv_scale_sq: f32,
    #[define(F)] _dtype: ElemType,
) {
    let cx = CUBE_POS_X as usize * CUBE_DIM_X as usize + UNIT_POS_X as usize;
    let cy = CUBE_POS_Y as usize * CUBE_DIM_Y as usize + UNIT_POS_Y as usize;
    if cx >= cand_w || cy >= cand_h {
        terminate!();
    }
    let inv_scale_sq = F::cast_from(inv_scale_sq);
    let mut list = empty_ranked::<F>(cx, cy, downscale, width, height, 4usize);
    let read = read_half as usize * 4;
    let step = step as i32;
    // Runtime loops, for the same compile-time reason as in the propagation pass.
    let mut sample = 0i32;
    while sample < 9 {
        let sx = i32::clamp(cx as i32 + (sample % 3 - 1) * step, 0, cand_w as i32 - 1);
        let sy = i32::clamp(cy as i32 + (sample / 3 - 1) * step, 0, cand_h as i32 - 1);
        let neighbour = (sy as usize * cand_w + sx as usize) * K + read;
        let mut i = 0usize;
        while i < 4 {
            let id = candidates[neighbour + i];
            offer::<F>(&mut list, sites, id, site_count, inv_scale_sq, 4usize);
            i += 1;
        }
        sample += 1;
    }
    let write = (cy * cand_w + cx) * K + 4 - read;
    #[unroll]
    for i in 0..4 {
        candidates[write + i] = list.ids[i];
    }
}

/// One propagation pass from `input` to `output`: each cell re-ranks, in this order, its own
/// list, the lists of its 4 neighbours at distance `jump`, `hilbert_probes` sites near its best
/// site along the Hilbert curve (within ±`hilbert_window` positions) and `inject` random sites,
/// and keeps the best [`K`] distinct live ones.
///
/// Candidates are ranked from `packed`, the half-precision copy of the sites (see
/// [`pack_sites_kernel`](crate::sad::pack_sites_kernel())). `hilbert_order[r]` is the site at rank r on the curve and
/// `hilbert_rank[i]` the rank of site i. `pass` is the global pass counter, which seeds the probes. Launch with one unit per cell,
/// 2D.
#[cube(launch)]
// The hashes multiply modulo 2³²; the macro's host-side expansion trips rustc's overflow lint.
#[allow(clippy::too_many_arguments, arithmetic_overflow)]
pub fn candidate_pass_kernel<F: Float>(
    packed: &Tensor<u32>,
    input: &Tensor<i32>,
    output: &mut Tensor<i32>,
    hilbert_order: &Tensor<i32>,
    hilbert_rank: &Tensor<i32>,
    cand_w: usize,
    cand_h: usize,
    width: usize,
    height: usize,
    downscale: usize,
    site_count: usize,
    jump: u32,
    pass: u32,
    inject: u32,
    hilbert_probes: u32,
    hilbert_window: u32,
    inv_scale_sq: f32,
    #[define(F)] _dtype: ElemType,
) {
    let cx = CUBE_POS_X as usize * CUBE_DIM_X as usize + UNIT_POS_X as usize;
    let cy = CUBE_POS_Y as usize * CUBE_DIM_Y as usize + UNIT_POS_Y as usize;
    if cx >= cand_w || cy >= cand_h {
        terminate!();
    }
    let inv_scale_sq = F::cast_from(inv_scale_sq);
    let mut list = empty_ranked::<F>(cx, cy, downscale, width, height, K);
    // Own list first, then the neighbours at (−J, 0), (+J, 0), (0, −J), (0, +J). Runtime loops:
    // unrolled, the 40 insertions make a shader that takes seconds to compile.
    let cell = cy * cand_w + cx;
    let jump = jump as i32;
    let mut source = 0u32;
    while source < 5 {
        let mut sx = cx as i32;
        let mut sy = cy as i32;
        if source == 1 {
            sx -= jump;
        } else if source == 2 {
            sx += jump;
        } else if source == 3 {
            sy -= jump;
        } else if source == 4 {
            sy += jump;
        }
        sx = i32::clamp(sx, 0, cand_w as i32 - 1);
        sy = i32::clamp(sy, 0, cand_h as i32 - 1);
        let neighbour = (sy as usize * cand_w + sx as usize) * K;
        let mut i = 0usize;
        while i < K {
            let id = input[neighbour + i];
            offer_packed::<F>(&mut list, packed, id, site_count, inv_scale_sq);
            i += 1;
        }
        source += 1;
    }

    let cx32 = cx as u32;
    let cy32 = cy as u32;
    if hilbert_probes > 0 && hilbert_window > 0 && list.filled[0] {
        let rank = hilbert_rank[list.ids[0] as usize];
        let span = 2 * hilbert_window + 1;
        let mut state = (cx32 * 2654435761u32) ^ (cy32 * 1597334677u32) ^ (pass * 374761393u32);
        let mut i = 0u32;
        while i < hilbert_probes {
            state = xorshift32(state + i);
            let offset = (state % span) as i32 - hilbert_window as i32;
            let at = i32::clamp(rank + offset, 0, site_count as i32 - 1);
            let id = hilbert_order[at as usize];
            offer_packed::<F>(&mut list, packed, id, site_count, inv_scale_sq);
            i += 1;
        }
    }

    let mut state = (cx32 * 1664525u32) ^ (cy32 * 1013904223u32) ^ (pass * 374761393u32);
    let mut i = 0u32;
    while i < inject {
        state = xorshift32(state + i);
        let id = (state % site_count as u32) as i32;
        offer_packed::<F>(&mut list, packed, id, site_count, inv_scale_sq);
        i += 1;
    }

    #[unroll]
    for i in 0..K {
        output[cell * K + i] = list.ids[i];
    }
}
