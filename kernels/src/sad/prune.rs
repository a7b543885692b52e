//! Pruning on the device: the `count` live sites whose removal costs least are marked inactive
//! without a round trip to the host.
//!
//! Each live site with a finite removal delta Δ gets the key `bits(max(Δ·norm, 0))` (for
//! non-negative floats the bit patterns order as the values do); the doomed sites are the `count`
//! smallest `(key, id)` pairs, which is what the reference's stable radix sort of `(key, id)`
//! pairs selects (ties by id). A radix select finds the count-th smallest pair one 8-bit digit
//! at a time, most significant first: [`prune_histogram_kernel`] counts the candidates still in
//! play per digit value, [`prune_choose_kernel`] picks the digit that holds the count-th one.
//! [`prune_mark_kernel`] then marks every pair at or below it. The selection state lives in a
//! 4-word buffer: the chosen key bits, the chosen id bits, and the rank still to find.

use cubecl::prelude::*;

use super::layout::{POSITION, SITE_PARAMS};

/// Bins of one radix digit.
pub const RADIX_BINS: usize = 256;
/// Words of the selection state buffer.
pub const SELECT_STATE: usize = 4;
/// Key of a site that cannot be pruned (inactive, or a non-finite delta).
const NEVER: u32 = u32::MAX;

/// The prune key of `site` (see the module docs).
#[cube]
fn prune_key(sites: &Tensor<f32>, removal: &Tensor<f32>, site: usize, norm: f32) -> u32 {
    let delta = removal[site] * norm;
    // False for NaN and ±∞ alike.
    let finite = f32::abs(delta) <= f32::MAX;
    let mut key = u32::new(NEVER as i64);
    if sites[site * SITE_PARAMS + POSITION] >= 0.0 && finite {
        // Negative deltas count as 0, as the reference clamps them.
        key = 0u32;
        if delta > 0.0 {
            key = u32::reinterpret(delta);
        }
    }
    key
}

/// Starts a selection of the `count` smallest pairs: the state gets no chosen bits and rank
/// `count`, and the histogram is cleared.
///
/// Launch with one cube of [`RADIX_BINS`] units.
#[cube(launch)]
pub fn prune_start_kernel(state: &mut Tensor<u32>, histogram: &mut Tensor<u32>, count: u32) {
    let unit = UNIT_POS as usize;
    histogram[unit] = 0u32;
    if unit == 0 {
        state[0] = 0u32;
        state[1] = 0u32;
        state[2] = count;
        state[3] = 0u32;
    }
}

launch_struct! {
    /// The digit one histogram pass of the radix select counts, and the bits chosen before it.
    pub struct RadixDigit(RadixDigitLaunch, RadixDigitCompilationArg) {
        /// 0: a digit of the key; 1: a digit of the site id.
        pub word: u32,
        /// The digit's lowest bit.
        pub shift: u32,
        /// The key's bits already chosen.
        pub key_mask: u32,
        /// The id's bits already chosen.
        pub id_mask: u32,
    }
}

/// Counts, per value of the digit at `digit.shift` of the key (`digit.word` 0) or of the id
/// (`digit.word` 1), the sites whose bits above that digit equal the bits chosen so far
/// (`digit.key_mask` and `digit.id_mask` name the bits already chosen).
///
/// Launch with [`RADIX_BINS`]-unit 1D cubes, one unit per site.
#[cube(launch)]
pub fn prune_histogram_kernel(
    sites: &Tensor<f32>,
    removal: &Tensor<f32>,
    state: &Tensor<u32>,
    histogram: &mut Tensor<Atomic<u32>>,
    norm: f32,
    site_count: usize,
    digit: RadixDigit,
) {
    let bins = Shared::<[Atomic<u32>]>::new_slice(RADIX_BINS);
    let unit = UNIT_POS as usize;
    bins[unit].store(0u32);
    sync_cube();
    let site = ABSOLUTE_POS;
    if site < site_count {
        let key = prune_key(sites, removal, site, norm);
        let id = site as u32;
        let key_mask = digit.key_mask;
        if key != NEVER
            && (key & key_mask) == (state[0] & key_mask)
            && (id & digit.id_mask) == state[1]
        {
            let value = if digit.word == 0 { key } else { id };
            let bin = (value >> digit.shift) & 255u32;
            bins[bin as usize].fetch_add(1u32);
        }
    }
    sync_cube();
    let total = bins[unit].load();
    if total > 0 {
        histogram[unit].fetch_add(total);
    }
}

/// Picks the digit value that holds the rank still to find, adds it to the chosen bits of
/// `word` at `shift`, lowers the rank by the pairs below it, and clears the histogram for the
/// next digit. If fewer pairs than the rank remain, the largest digit is chosen, so every
/// candidate ends up marked.
///
/// Launch with one cube of [`RADIX_BINS`] units.
#[cube(launch)]
pub fn prune_choose_kernel(
    state: &mut Tensor<u32>,
    histogram: &mut Tensor<u32>,
    word: u32,
    shift: u32,
) {
    let mut counts = Shared::<[u32]>::new_slice(RADIX_BINS);
    let unit = UNIT_POS as usize;
    counts[unit] = histogram[unit];
    histogram[unit] = 0u32;
    sync_cube();
    if unit == 0 {
        let rank = state[2];
        let mut below = 0u32;
        let mut chosen = u32::new(RADIX_BINS as i64 - 1);
        let mut found = false;
        for bin in 0..RADIX_BINS {
            if !found {
                let count = counts[bin];
                if below + count >= rank {
                    chosen = bin as u32;
                    found = true;
                } else {
                    below += count;
                }
            }
        }
        state[word as usize] |= chosen << shift;
        state[2] = rank - below;
    }
}

/// Copies `sites` to `out_sites`, moving every site whose `(key, id)` is at or below the chosen
/// pair to position (−1, −1), which marks it inactive. Sites that can never be pruned are copied
/// unchanged. Run only for a count of at least 1.
///
/// Launch with one unit per site, 1D.
#[cube(launch)]
pub fn prune_mark_kernel(
    sites: &Tensor<f32>,
    removal: &Tensor<f32>,
    state: &Tensor<u32>,
    out_sites: &mut Tensor<f32>,
    norm: f32,
    site_count: usize,
) {
    let site = ABSOLUTE_POS;
    if site < site_count {
        let base = site * SITE_PARAMS;
        #[unroll]
        for i in 0..SITE_PARAMS {
            out_sites[base + i] = sites[base + i];
        }
        let key = prune_key(sites, removal, site, norm);
        let chosen_key = state[0];
        let chosen_id = state[1];
        let id = site as u32;
        let doomed = key < chosen_key || (key == chosen_key && id <= chosen_id);
        if key != NEVER && doomed {
            out_sites[base + POSITION] = -1.0f32;
            out_sites[base + POSITION + 1] = -1.0f32;
        }
    }
}
