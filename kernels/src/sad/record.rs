//! Site records: what the per-pixel and per-cell kernels read of a site, in 16-byte words.
//!
//! The `[capacity, 10]` f32 sites make a kernel gather each value with its own load (rows of 40
//! bytes allow no wider one) and compute τ = e^{log τ}, e^a and 1/e^a again for every pixel,
//! slot and candidate. A record holds those already, once per site, in words a kernel reads as
//! 16-byte vectors: x, y, direction x, y | e^a, 1/e^a, radius, τ | and, in the full record,
//! r, g, b, 0. Every kernel forms the same values with the same operations as from the sites,
//! so results do not change; the gathers drop from 10–12 per site visit to 2–3.
//!
//! Two kinds, made by [`pack_sites_kernel`]:
//! - the **full record** ([`RECORD_WORDS`] words), exact values, for the render, the backward,
//!   the statistics and the jump flood (the reference floods from its f32 sites);
//! - the **ranking copy** ([`PACKED_WORDS`] words, no colour), whose position, direction,
//!   radius, log τ and log anisotropy are first rounded to f16 as the reference's 16-byte packed
//!   copy rounds them (`packCandidateSitesKernel`), for the propagation pass, which ranks from
//!   that copy in the reference.

use cubecl::prelude::*;

use super::half::{f16_bits, f16_value};
use super::layout::{COLOR, DIRECTION, LOG_ANISO, LOG_TAU, POSITION, RADIUS, SITE_PARAMS};

/// u32 words per site of the ranking copy: 32 bytes, one L2 sector.
pub const PACKED_WORDS: usize = 8;
/// u32 words per site of the full record.
pub const RECORD_WORDS: usize = 12;
/// Word of x in a record (y follows).
pub const RANK_X: usize = 0;
/// Word of direction x (y follows).
pub const RANK_DIRECTION: usize = 2;
/// Word of e^a.
pub const RANK_STRETCH: usize = 4;
/// Word of 1 / e^a.
pub const RANK_SQUEEZE: usize = 5;
/// Word of the radius.
pub const RANK_RADIUS: usize = 6;
/// Word of τ = e^{log τ}.
pub const RANK_TAU: usize = 7;
/// Word of red in the full record (green and blue follow).
pub const RANK_COLOR: usize = 8;

/// Sites one cube of [`pack_sites_kernel()`] packs: their rows are staged through 5.5 KiB of
/// shared memory, so that every global load and store of the cube is coalesced.
pub const PACK_CUBE: usize = 64;

/// `value` rounded to the nearest f16 (ties to even) where `round_to_f16`.
#[cube]
fn input(value: f32, #[comptime] round_to_f16: bool) -> f32 {
    let mut out = value;
    if comptime![round_to_f16] {
        out = f16_value(f16_bits(value));
    }
    out
}

/// [`input`]'s bits.
#[cube]
fn input_bits(value: f32, #[comptime] round_to_f16: bool) -> u32 {
    u32::reinterpret(input(value, round_to_f16))
}

/// x of an inactive site's record: a record's site is live where its x is above [`LIVE_ABOVE`].
/// Not −1 (a site's own flag, x < 0): a viewed record (see below) may lie left of the image.
pub const DEAD_X: f32 = -1.0e30;
/// A record's site is live where its x is above this.
pub const LIVE_ABOVE: f32 = -1.0e29;

/// Writes the records `packed` (`[capacity, words]` u32, each word an f32's bits) of `sites`:
/// the ranking copy ([`PACKED_WORDS`] words) where `round_to_f16`, else the full record
/// ([`RECORD_WORDS`] words, with the colour). Inactive sites (x < 0) get position
/// ([`DEAD_X`], [`DEAD_X`]) and zeros.
///
/// The records are of the sites as a view shows them (see `ViewTransform` in the library): a
/// live site's position p becomes `p · scale + offset`, its radius `radius · scale` and its
/// log τ `log τ + log_tau_shift`, which magnifies the diagram by `scale` on an image whose
/// `S = max(W, H)` is `S_file · scale · e^{-log_tau_shift}`: every score, so every weight, is
/// the file's. Scale 1, offset 0 and shift 0 leave every value as it is, bit for bit.
///
/// With `zero_columns` > 0 it also zeroes `zeroed` (`[capacity, zero_columns]`), the per-site
/// accumulator that the kernel reading the records adds into (the backward's gradients, the
/// statistics), which saves that kernel's clearing launch; with 0, `zeroed` is not touched.
///
/// A unit's own rows are 40 and 48 bytes apart from its neighbours', so a cube first copies its
/// [`PACK_CUBE`] sites' rows into shared memory word by word across its units, packs from
/// there, and copies the records out the same way (read and written a row per unit, it was
/// several times slower: `benches/RESULTS.md`).
///
/// Launch with cubes of [`PACK_CUBE`] units, one unit per site, 1D.
#[cube(launch, launch_unchecked)]
pub fn pack_sites_kernel<F: Float>(
    sites: &Tensor<F>,
    packed: &mut Tensor<u32>,
    zeroed: &mut Tensor<F>,
    site_count: usize,
    scale: f32,
    offset_x: f32,
    offset_y: f32,
    log_tau_shift: f32,
    #[comptime] round_to_f16: bool,
    #[comptime] zero_columns: usize,
    #[define(F)] _dtype: ElemType,
) {
    let words = comptime![if round_to_f16 {
        PACKED_WORDS
    } else {
        RECORD_WORDS
    }];
    let first = CUBE_POS * PACK_CUBE;
    let unit = UNIT_POS as usize;
    let rows = usize::min(PACK_CUBE, site_count - usize::min(first, site_count));
    let mut staged = Shared::<[f32]>::new_slice(PACK_CUBE * SITE_PARAMS);
    let mut out = Shared::<[u32]>::new_slice(PACK_CUBE * RECORD_WORDS);
    #[unroll]
    for i in 0..SITE_PARAMS {
        let local = i * PACK_CUBE + unit;
        if local < rows * SITE_PARAMS {
            staged[local] = f32::cast_from(sites[first * SITE_PARAMS + local]);
        }
    }
    sync_cube();

    if unit < rows {
        let base = unit * SITE_PARAMS;
        let at = unit * words;
        #[unroll]
        for i in 0..words {
            out[at + i] = 0u32;
        }
        let dead = u32::reinterpret(DEAD_X);
        out[at + RANK_X] = dead;
        out[at + RANK_X + 1] = dead;
        if staged[base + POSITION] >= 0.0 {
            let stretch = f32::exp(input(staged[base + LOG_ANISO], round_to_f16));
            let log_tau = input(staged[base + LOG_TAU] + log_tau_shift, round_to_f16);
            let x = staged[base + POSITION] * scale + offset_x;
            let y = staged[base + POSITION + 1] * scale + offset_y;
            out[at + RANK_X] = input_bits(x, round_to_f16);
            out[at + RANK_X + 1] = input_bits(y, round_to_f16);
            out[at + RANK_DIRECTION] = input_bits(staged[base + DIRECTION], round_to_f16);
            out[at + RANK_DIRECTION + 1] = input_bits(staged[base + DIRECTION + 1], round_to_f16);
            out[at + RANK_STRETCH] = u32::reinterpret(stretch);
            out[at + RANK_SQUEEZE] = u32::reinterpret(1.0f32 / stretch);
            out[at + RANK_RADIUS] = input_bits(staged[base + RADIUS] * scale, round_to_f16);
            out[at + RANK_TAU] = u32::reinterpret(f32::exp(log_tau));
            if comptime![!round_to_f16] {
                #[unroll]
                for c in 0..3 {
                    out[at + RANK_COLOR + c] = u32::reinterpret(staged[base + COLOR + c]);
                }
            }
        }
    }
    sync_cube();

    #[unroll]
    for i in 0..words {
        let local = i * PACK_CUBE + unit;
        if local < rows * words {
            packed[first * words + local] = out[local];
        }
    }
    #[unroll]
    for i in 0..zero_columns {
        let local = i * PACK_CUBE + unit;
        if local < rows * zero_columns {
            zeroed[first * zero_columns + local] = F::new(0.0);
        }
    }
}

/// What the score of a site needs, read from a record.
#[derive(CubeType)]
pub struct RecordSite {
    /// Whether the id named an active site (the other fields are 0 where not).
    pub live: bool,
    /// Position x.
    pub x: f32,
    /// Position y.
    pub y: f32,
    /// Direction x.
    pub ux: f32,
    /// Direction y.
    pub uy: f32,
    /// e^a.
    pub stretch: f32,
    /// 1 / e^a.
    pub squeeze: f32,
    /// Radius.
    pub radius: f32,
    /// τ = e^{log τ}.
    pub tau: f32,
}

/// Words `first .. first + count` of site `site`'s record in `records` (records of `stride`
/// words), read in vectors of `records`' vector size (4 words: 16-byte loads; 1: word by word).
#[cube]
fn record_words<N: Size>(
    records: &Tensor<Vector<u32, N>>,
    site: usize,
    #[comptime] stride: usize,
    #[comptime] first: usize,
    #[comptime] count: usize,
) -> Array<f32> {
    let width = records.vector_size();
    let loads = comptime![count / width];
    let mut word = Array::<f32>::new(count);
    #[unroll]
    for load in 0..loads {
        let words = records[(site * stride + first) / width + load];
        #[unroll]
        for i in 0..width {
            word[load * width + i] = f32::reinterpret(words.extract(i));
        }
    }
    word
}

/// The site `id` names in `records` (records of `stride` words: [`PACKED_WORDS`] or
/// [`RECORD_WORDS`]), not live for an id out of `0..site_count` or an inactive site.
#[cube]
pub fn read_site<N: Size>(
    records: &Tensor<Vector<u32, N>>,
    id: i32,
    site_count: usize,
    #[comptime] stride: usize,
) -> RecordSite {
    let mut site = RecordSite {
        live: false,
        x: 0.0f32,
        y: 0.0f32,
        ux: 0.0f32,
        uy: 0.0f32,
        stretch: 0.0f32,
        squeeze: 0.0f32,
        radius: 0.0f32,
        tau: 0.0f32,
    };
    if id >= 0 && (id as usize) < site_count {
        let word = record_words::<N>(records, id as usize, stride, 0usize, PACKED_WORDS);
        site.live = word[RANK_X] > LIVE_ABOVE;
        site.x = word[RANK_X];
        site.y = word[RANK_X + 1];
        site.ux = word[RANK_DIRECTION];
        site.uy = word[RANK_DIRECTION + 1];
        site.stretch = word[RANK_STRETCH];
        site.squeeze = word[RANK_SQUEEZE];
        site.radius = word[RANK_RADIUS];
        site.tau = word[RANK_TAU];
    }
    site
}

/// The colour of live site `site` from its full record, `[r, g, b]`.
#[cube]
pub fn read_colour<F: Float, N: Size>(records: &Tensor<Vector<u32, N>>, site: usize) -> Array<F> {
    let word = record_words::<N>(records, site, RECORD_WORDS, RANK_COLOR, 4usize);
    let mut colour = Array::<F>::new(3usize);
    #[unroll]
    for c in 0..3 {
        colour[c] = F::cast_from(word[c]);
    }
    colour
}

/// Copies the first [`PACKED_WORDS`] words of every full record of `records` (`[capacity,
/// RECORD_WORDS]`) into `ranking` (`[capacity, PACKED_WORDS]`): exact ranking records of 32
/// bytes, which the jump flood reads one aligned sector at a time (a 48-byte record's first 32
/// bytes straddle two sectors for every other site).
///
/// Launch with one unit per site, 1D.
#[cube(launch, launch_unchecked)]
pub fn exact_ranking_kernel<N: Size>(
    records: &Tensor<Vector<u32, N>>,
    ranking: &mut Tensor<Vector<u32, N>>,
    site_count: usize,
) {
    let site = ABSOLUTE_POS;
    if site >= site_count {
        terminate!();
    }
    let width = records.vector_size();
    #[unroll]
    for load in 0..comptime![PACKED_WORDS / width] {
        ranking[site * comptime![PACKED_WORDS / width] + load] =
            records[site * comptime![RECORD_WORDS / width] + load];
    }
}
