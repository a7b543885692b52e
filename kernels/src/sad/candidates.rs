//! Candidate-list maintenance: random initialisation, seeding each site into its own cell, the
//! jump-flood pre-pass and the propagation pass. None of these is differentiable.
//!
//! Every pseudo-random choice is a hash of the cell and the pass index (no RNG state), with the
//! reference's constants, so runs are reproducible.

use cubecl::prelude::*;

use super::grid::PixelGrid;
use super::layout::{EMPTY, K};
use super::lists::{lane_of, vector_of};
use super::ranked::{Ranked, empty_ranked, offer};
use super::record::{LIVE_ABOVE, PACKED_WORDS, RANK_X, RECORD_WORDS};

/// Marsaglia's xorshift32 step.
#[cube]
pub fn xorshift32(state: u32) -> u32 {
    let mut x = state;
    x ^= x << 13u32;
    x ^= x >> 17u32;
    x ^= x << 5u32;
    x
}

/// Random initial lists: slot i of cell (cx, cy) gets `state % site_count` after
/// `state = xorshift32(state + i)`, starting from `seed ^ cx·1973 ^ cy·9277`. Duplicates are
/// possible (the propagation pass removes them).
///
/// Launch with one unit per cell, 2D over the `cand_w × cand_h` grid.
#[cube(launch, launch_unchecked)]
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

/// The cell of the candidate grid under site `site`'s position, read from its full record
/// (`records`, `[capacity, RECORD_WORDS]`, see
/// [`pack_sites_kernel`](crate::sad::pack_sites_kernel())), or -1 for an inactive site. A live
/// site outside the image (a viewed record) is in the nearest edge cell.
#[cube]
fn seed_cell(records: &Tensor<u32>, site: usize, grid: &PixelGrid) -> i32 {
    let px = f32::reinterpret(records[site * RECORD_WORDS + RANK_X]);
    let py = f32::reinterpret(records[site * RECORD_WORDS + RANK_X + 1]);
    // Truncated to whole pixels first: ⌊⌊p⌋ / d⌋ = ⌊p / d⌋ for p ≥ 0 and a whole d, and the
    // clamp takes every negative position to cell 0 either way.
    let downscale = grid.downscale as i32;
    let cx = i32::clamp(i32::cast_from(px) / downscale, 0, grid.cand_w as i32 - 1);
    let cy = i32::clamp(i32::cast_from(py) / downscale, 0, grid.cand_h as i32 - 1);
    // Inactive sites' records hold x = DEAD_X.
    select(px > LIVE_ABOVE, cy * grid.cand_w as i32 + cx, -1i32)
}

/// Seeds the candidate lists: every active site goes into slot 0 of the cell under its
/// position. Lists that may hold ids take two launches: with `clear`, each unit empties its
/// site's slot (all units of a cell write the same value, so their order does not matter); then,
/// without, each writes its id there by an atomic maximum (the only launch where every slot is
/// already [`EMPTY`]). Where several sites share a cell the highest id wins, so the
/// seeds, and the flood and a render from them, are the same from run to run (the reference's
/// plain stores race).
///
/// Launch with one unit per site slot, 1D.
#[cube(launch, launch_unchecked)]
pub fn seed_candidates_kernel(
    records: &Tensor<u32>,
    candidates: &mut Tensor<Atomic<i32>>,
    grid: PixelGrid,
    #[comptime] clear: bool,
) {
    let site = ABSOLUTE_POS;
    if site >= grid.site_count {
        terminate!();
    }
    let cell = seed_cell(records, site, &grid);
    if cell >= 0 {
        let slot = cell as usize * K;
        if comptime![clear] {
            candidates[slot].store(EMPTY);
        } else {
            candidates[slot].fetch_max(site as i32);
        }
    }
}

/// One jump-flood step: each cell keeps the best 4 of the lists held in half `read_half` (slots
/// `4·read_half .. 4·read_half + 4`) of `candidates` by itself and its 8 neighbours at distance
/// `step`, and writes them to the other half. Ranked from `records`, exact 32-byte records
/// ([`PACKED_WORDS`] words, made by [`exact_ranking_kernel`](crate::sad::exact_ranking_kernel())
/// from the full records), as the reference floods from its f32 sites. Where the launch gives
/// vectors of 4, a half list is one 16-byte load and one store.
///
/// With `mirror` (the last step, where it writes the upper half) the best 4 go to both halves
/// of `output` instead, as the reference copies the upper half over the lower one after its
/// last step: no copy launch. `candidates` is then only read (neighbours still read its lower
/// half, so the step cannot write there); without `mirror`, `output` is not touched.
///
/// Launch with one unit per cell, 2D.
#[cube(launch, launch_unchecked)]
pub fn jfa_flood_kernel<N: Size>(
    records: &Tensor<Vector<u32, N>>,
    candidates: &mut Tensor<Vector<i32, N>>,
    output: &mut Tensor<Vector<i32, N>>,
    grid: PixelGrid,
    step: u32,
    read_half: u32,
    #[comptime] mirror: bool,
) {
    let cand_w = grid.cand_w;
    let cand_h = grid.cand_h;
    let cx = CUBE_POS_X as usize * CUBE_DIM_X as usize + UNIT_POS_X as usize;
    let cy = CUBE_POS_Y as usize * CUBE_DIM_Y as usize + UNIT_POS_Y as usize;
    if cx >= cand_w || cy >= cand_h {
        terminate!();
    }
    let mut list = empty_ranked::<f32>(cx, cy, grid.downscale, grid.width, grid.height, HALF);
    // A half list is `HALF / lanes` loads of `lanes` ids (one 16-byte load with vectors of 4).
    let lanes = candidates.vector_size();
    let per_cell = comptime![K / lanes];
    let per_half = comptime![HALF / lanes];
    let read = read_half as usize * per_half.runtime();
    let step = step as i32;
    // Runtime loops, for the same compile-time reason as in the propagation pass.
    let mut sample = 0i32;
    while sample < 9 {
        let sx = i32::clamp(cx as i32 + (sample % 3 - 1) * step, 0, cand_w as i32 - 1);
        let sy = i32::clamp(cy as i32 + (sample / 3 - 1) * step, 0, cand_h as i32 - 1);
        let neighbour = (sy as usize * cand_w + sx as usize) * per_cell + read;
        let mut load = 0usize;
        while load < per_half.runtime() {
            let ids = candidates[neighbour + load];
            let mut lane = 0usize;
            while lane < lanes.runtime() {
                let id = lane_of::<N>(ids, lane);
                offer::<f32, N>(
                    &mut list,
                    records,
                    id,
                    grid.site_count,
                    grid.inv_scale_sq,
                    HALF,
                    PACKED_WORDS,
                );
                lane += 1;
            }
            load += 1;
        }
        sample += 1;
    }
    let cell = cy * cand_w + cx;
    #[unroll]
    for load in 0..per_half {
        let ids = vector_of::<N>(&list.ids, load * lanes);
        if comptime![mirror] {
            output[cell * per_cell + load] = ids;
            output[cell * per_cell + per_half + load] = ids;
        } else {
            candidates[cell * per_cell + per_half - read + load] = ids;
        }
    }
}

/// Ids of a half list (slots 0–3 or 4–7): the jump flood keeps that many.
const HALF: usize = K / 2;

/// Offers `id` to the propagation pass's `list`, ranked from the ranking copy `packed`.
#[cube]
fn offer_packed<N: Size>(
    list: &mut Ranked<f32>,
    packed: &Tensor<Vector<u32, N>>,
    id: i32,
    grid: &PixelGrid,
) {
    offer::<f32, N>(
        list,
        packed,
        id,
        grid.site_count,
        grid.inv_scale_sq,
        K,
        PACKED_WORDS,
    );
}

launch_struct! {
    /// One propagation pass: the jump, the global pass counter that seeds its probes, and how
    /// many probes of each kind it makes.
    #[derive(Eq, Hash)]
    pub struct PassConfig(PassConfigLaunch, PassConfigCompilationArg) {
        /// Distance of the 4 neighbour cells merged.
        pub jump: u32,
        /// Global pass counter.
        pub pass: u32,
        /// Random sites injected per cell.
        pub inject: u32,
        /// Sites probed near the cell's best site along the Hilbert curve.
        pub hilbert_probes: u32,
        /// Half-width of the Hilbert probe window, in curve positions.
        pub hilbert_window: u32,
    }
}

/// One propagation pass from `input` to `output`: each cell re-ranks, in this order, its own
/// list, the lists of its 4 neighbours at distance `pass.jump`, `pass.hilbert_probes` sites
/// near its best site along the Hilbert curve (within ±`pass.hilbert_window` positions) and
/// `pass.inject` random sites, and keeps the best [`K`] distinct live ones.
///
/// Candidates are ranked from `packed`, the ranking copy of the sites (see
/// [`pack_sites_kernel`](crate::sad::pack_sites_kernel())), two 16-byte loads per site where the
/// launch gives it vectors of 4 words (else word by word). The lists are read and written in
/// vectors of the same size: a list is two 16-byte loads and two stores. (Read word by word,
/// each load of a warp touched 32 sectors for 4 bytes of each, and the build was slower:
/// `benches/RESULTS.md`.) `hilbert_order[r]` is the site at
/// rank r on the curve and `hilbert_rank[i]` the rank of site i. `pass.pass` is the global
/// pass counter, which seeds the probes.
///
/// Launch with one unit per cell, 2D.
#[cube(launch, launch_unchecked)]
// The hashes multiply modulo 2³²; the macro's host-side expansion trips rustc's overflow lint.
#[allow(arithmetic_overflow)]
pub fn candidate_pass_kernel<N: Size>(
    packed: &Tensor<Vector<u32, N>>,
    input: &Tensor<Vector<i32, N>>,
    output: &mut Tensor<Vector<i32, N>>,
    hilbert_order: &Tensor<i32>,
    hilbert_rank: &Tensor<i32>,
    grid: PixelGrid,
    pass: PassConfig,
) {
    let cand_w = grid.cand_w;
    let cand_h = grid.cand_h;
    let site_count = grid.site_count;
    let cx = CUBE_POS_X as usize * CUBE_DIM_X as usize + UNIT_POS_X as usize;
    let cy = CUBE_POS_Y as usize * CUBE_DIM_Y as usize + UNIT_POS_Y as usize;
    if cx >= cand_w || cy >= cand_h {
        terminate!();
    }
    let mut list = empty_ranked::<f32>(cx, cy, grid.downscale, grid.width, grid.height, K);
    // Own list first, then the neighbours at (−J, 0), (+J, 0), (0, −J), (0, +J). Runtime loops:
    // unrolled, the 40 insertions make a shader that takes seconds to compile.
    let cell = cy * cand_w + cx;
    // A list is `K / lanes` loads of `lanes` ids (two 16-byte loads with vectors of 4).
    let lanes = input.vector_size();
    let per_cell = comptime![K / lanes];
    let jump = pass.jump as i32;
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
        let neighbour = (sy as usize * cand_w + sx as usize) * per_cell;
        let mut load = 0usize;
        while load < per_cell.runtime() {
            let ids = input[neighbour + load];
            let mut lane = 0usize;
            while lane < lanes.runtime() {
                let id = lane_of::<N>(ids, lane);
                offer_packed::<N>(&mut list, packed, id, &grid);
                lane += 1;
            }
            load += 1;
        }
        source += 1;
    }

    let cx32 = cx as u32;
    let cy32 = cy as u32;
    let hilbert_probes = pass.hilbert_probes;
    let hilbert_window = pass.hilbert_window;
    if hilbert_probes > 0 && hilbert_window > 0 && list.ids[0] != EMPTY {
        let rank = hilbert_rank[list.ids[0] as usize];
        let span = 2 * hilbert_window + 1;
        let mut state =
            (cx32 * 2654435761u32) ^ (cy32 * 1597334677u32) ^ (pass.pass * 374761393u32);
        let mut i = 0u32;
        while i < hilbert_probes {
            state = xorshift32(state + i);
            let offset = (state % span) as i32 - hilbert_window as i32;
            let at = i32::clamp(rank + offset, 0, site_count as i32 - 1);
            let id = hilbert_order[at as usize];
            offer_packed::<N>(&mut list, packed, id, &grid);
            i += 1;
        }
    }

    let mut state = (cx32 * 1664525u32) ^ (cy32 * 1013904223u32) ^ (pass.pass * 374761393u32);
    let mut i = 0u32;
    while i < pass.inject {
        state = xorshift32(state + i);
        let id = (state % site_count as u32) as i32;
        offer_packed::<N>(&mut list, packed, id, &grid);
        i += 1;
    }

    #[unroll]
    for load in 0..per_cell {
        output[cell * per_cell + load] = vector_of::<N>(&list.ids, load * lanes);
    }
}
