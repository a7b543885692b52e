//! The ranking copy of the sites that the propagation pass reads: the ranking inputs rounded to
//! f16 as the reference's `packCandidateSitesKernel` rounds them, so lists built from the same
//! sites agree with its lists, and the per-site part of the ranking key (τ, e^a, 1/e^a) computed
//! once per site in f32 from the rounded values, as the reference computes it on every offer: its
//! pass spends most of its instructions on two exponentials and a division per candidate scored,
//! 40 to 45 times per cell. 32 bytes a site, one L2 sector, read as two 16-byte loads.
//!
//! The conversions are integer bit operations (round to nearest even), so they run on runtimes
//! without f16 arithmetic (WGSL without `shader-f16`, lavapipe).

use cubecl::prelude::*;

use super::{DIRECTION, LOG_ANISO, LOG_TAU, POSITION, RADIUS, SITE_PARAMS};

/// u32 words per site of the ranking copy (see [`pack_sites_kernel`]): 32 bytes, one L2 sector.
pub const PACKED_WORDS: usize = 8;
/// Word of x̃ in the ranking copy (ỹ follows).
pub const RANK_X: usize = 0;
/// Word of ũx (ũy follows).
pub const RANK_DIRECTION: usize = 2;
/// Word of e^ã.
pub const RANK_STRETCH: usize = 4;
/// Word of 1 / e^ã.
pub const RANK_SQUEEZE: usize = 5;
/// Word of r̃.
pub const RANK_RADIUS: usize = 6;
/// Word of max(e^ℓ̃, 1e-4).
pub const RANK_TAU: usize = 7;

/// The f16 nearest to `value` (ties to even), as its 16 bits.
#[cube]
pub fn f16_bits(value: f32) -> u32 {
    let bits = u32::reinterpret(value);
    let sign = (bits >> 16) & 0x8000u32;
    let magnitude = bits & 0x7fff_ffffu32;
    let mut half = 0u32;
    if magnitude > 0x7f80_0000u32 {
        half = 0x7e00u32; // NaN
    } else if magnitude >= 0x477f_f000u32 {
        half = 0x7c00u32; // rounds to infinity
    } else if magnitude >= 0x3880_0000u32 {
        // Normal: drop 13 mantissa bits, rounding to even, and rebias the exponent.
        let rounded = magnitude + 0x0fffu32 + ((magnitude >> 13) & 1u32);
        half = (rounded >> 13) - (112u32 << 10);
    } else if magnitude >= 0x3300_0000u32 {
        // Subnormal: the value in units of 2^-24, rounded to even.
        let exponent = magnitude >> 23;
        let mantissa = (magnitude & 0x007f_ffffu32) | 0x0080_0000u32;
        let shift = 126u32 - exponent;
        let halfway = (1u32 << (shift - 1)) - 1u32;
        half = (mantissa + halfway + ((mantissa >> shift) & 1u32)) >> shift;
    }
    sign | half
}

/// The f32 value of the f16 whose bits are the low 16 of `half`: the bits moved into f32
/// position and rebiased with one multiply by 2^112, which is exact for normal values (and for
/// subnormal ones where the runtime keeps f32 subnormals; else they become 0). Infinities and
/// NaNs, which packing makes only of non-finite inputs, come out finite, at 2^16 or more.
#[cube]
pub fn f16_value(half: u32) -> f32 {
    let sign = (half & 0x8000u32) << 16;
    let scaled = f32::reinterpret((half & 0x7fffu32) << 13) * f32::reinterpret(0x7780_0000u32);
    f32::reinterpret(sign | u32::reinterpret(scaled))
}

/// Column `index` of `sites` as an f32, rounded to the nearest f16 (ties to even) where
/// `round_to_f16`.
#[cube]
fn ranking_input<F: Float>(sites: &Tensor<F>, index: usize, #[comptime] round_to_f16: bool) -> f32 {
    let value = f32::cast_from(sites[index]);
    let mut out = value;
    if comptime![round_to_f16] {
        out = f16_value(f16_bits(value));
    }
    out
}

/// [`ranking_input`]'s bits.
#[cube]
fn ranking_input_bits<F: Float>(
    sites: &Tensor<F>,
    index: usize,
    #[comptime] round_to_f16: bool,
) -> u32 {
    u32::reinterpret(ranking_input::<F>(sites, index, round_to_f16))
}

/// Writes the ranking copy `packed` (`[capacity, PACKED_WORDS]` u32) of `sites`: the f32 bits of
/// x̃, ỹ, ũx, ũy, e^ã, 1/e^ã, r̃ and max(e^ℓ̃, 1e-4), where ~ marks a value rounded to f16 as the
/// reference packs it (its `packCandidateSitesKernel`) when `round_to_f16` (the propagation pass
/// ranks so) and the value itself otherwise (the jump flood ranks so); the rest is what the
/// reference's ranking computes in f32 from those, once per site here instead of once per offer.
/// Inactive sites get position (−1, −1) and zeros.
///
/// Launch with one unit per site, 1D.
#[cube(launch, launch_unchecked)]
pub fn pack_sites_kernel<F: Float>(
    sites: &Tensor<F>,
    packed: &mut Tensor<u32>,
    site_count: usize,
    #[comptime] round_to_f16: bool,
    #[define(F)] _dtype: ElemType,
) {
    let site = ABSOLUTE_POS;
    if site < site_count {
        let base = site * SITE_PARAMS;
        let out = site * PACKED_WORDS;
        let x = f32::cast_from(sites[base + POSITION]);
        let mut word = Array::<u32>::new(PACKED_WORDS);
        #[unroll]
        for i in 0..PACKED_WORDS {
            word[i] = 0u32;
        }
        let minus_one = u32::reinterpret(-1.0f32);
        word[RANK_X] = minus_one;
        word[RANK_X + 1] = minus_one;
        if x >= 0.0 {
            let stretch = f32::exp(ranking_input::<F>(sites, base + LOG_ANISO, round_to_f16));
            let log_tau = ranking_input::<F>(sites, base + LOG_TAU, round_to_f16);
            word[RANK_X] = ranking_input_bits::<F>(sites, base + POSITION, round_to_f16);
            word[RANK_X + 1] = ranking_input_bits::<F>(sites, base + POSITION + 1, round_to_f16);
            word[RANK_DIRECTION] = ranking_input_bits::<F>(sites, base + DIRECTION, round_to_f16);
            word[RANK_DIRECTION + 1] =
                ranking_input_bits::<F>(sites, base + DIRECTION + 1, round_to_f16);
            word[RANK_STRETCH] = u32::reinterpret(stretch);
            word[RANK_SQUEEZE] = u32::reinterpret(1.0f32 / stretch);
            word[RANK_RADIUS] = ranking_input_bits::<F>(sites, base + RADIUS, round_to_f16);
            word[RANK_TAU] = u32::reinterpret(f32::max(f32::exp(log_tau), 1e-4f32));
        }
        #[unroll]
        for i in 0..PACKED_WORDS {
            packed[out + i] = word[i];
        }
    }
}

/// A site as the ranking reads it from the ranking copy.
#[derive(CubeType)]
pub struct RankingSite {
    /// Position x (negative: inactive).
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
    /// max(τ, 1e-4).
    pub tau: f32,
}

/// Site `site` of the ranking copy, read in vectors of `packed`'s vector size (4 words: two
/// 16-byte loads, one 32-byte sector; 1: word by word).
#[cube]
pub fn unpack_site<N: Size>(packed: &Tensor<Vector<u32, N>>, site: usize) -> RankingSite {
    let words_per_load = packed.vector_size();
    let loads = comptime![PACKED_WORDS / words_per_load];
    let mut word = Array::<f32>::new(PACKED_WORDS);
    #[unroll]
    for load in 0..loads {
        let words = packed[site * loads + load];
        #[unroll]
        for i in 0..words_per_load {
            word[load * words_per_load + i] = f32::reinterpret(words.extract(i));
        }
    }
    RankingSite {
        x: word[RANK_X],
        y: word[RANK_X + 1],
        ux: word[RANK_DIRECTION],
        uy: word[RANK_DIRECTION + 1],
        stretch: word[RANK_STRETCH],
        squeeze: word[RANK_SQUEEZE],
        radius: word[RANK_RADIUS],
        tau: word[RANK_TAU],
    }
}
