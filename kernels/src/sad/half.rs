//! The 16-byte half-precision site copy that candidate ranking reads, as the reference's
//! `packCandidateSitesKernel` makes it: a quarter of the bytes of the f32 sites per candidate
//! scored, and the same f16 rounding of the ranking inputs as the reference, so lists built from
//! the same sites agree with its lists.
//!
//! The conversions are integer bit operations (round to nearest even), so they run on runtimes
//! without f16 arithmetic (WGSL without `shader-f16`, lavapipe).

use cubecl::prelude::*;

use super::{DIRECTION, LOG_ANISO, LOG_TAU, POSITION, RADIUS, SITE_PARAMS};

/// u32 words per packed site: (x, y), (log τ, radius), (direction x, y), (log anisotropy, 0),
/// each word two f16 values, the first in the low half.
pub const PACKED_WORDS: usize = 4;

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

/// Two f16 values in one word, `low` in bits 0–15.
#[cube]
fn pack_pair(low: f32, high: f32) -> u32 {
    f16_bits(low) | (f16_bits(high) << 16)
}

/// Writes the packed copy `packed` (`[capacity, 4]` u32) of `sites`. Inactive sites get position
/// (−1, −1) and zeros, as the reference packs them.
///
/// Launch with one unit per site, 1D.
#[cube(launch, launch_unchecked)]
pub fn pack_sites_kernel<F: Float>(
    sites: &Tensor<F>,
    packed: &mut Tensor<u32>,
    site_count: usize,
    #[define(F)] _dtype: ElemType,
) {
    let site = ABSOLUTE_POS;
    if site < site_count {
        let base = site * SITE_PARAMS;
        let out = site * PACKED_WORDS;
        let x = f32::cast_from(sites[base + POSITION]);
        if x >= 0.0 {
            let y = f32::cast_from(sites[base + POSITION + 1]);
            let log_tau = f32::cast_from(sites[base + LOG_TAU]);
            let radius = f32::cast_from(sites[base + RADIUS]);
            let ux = f32::cast_from(sites[base + DIRECTION]);
            let uy = f32::cast_from(sites[base + DIRECTION + 1]);
            let log_aniso = f32::cast_from(sites[base + LOG_ANISO]);
            packed[out] = pack_pair(x, y);
            packed[out + 1] = pack_pair(log_tau, radius);
            packed[out + 2] = pack_pair(ux, uy);
            packed[out + 3] = pack_pair(log_aniso, 0.0f32);
        } else {
            packed[out] = pack_pair(-1.0f32, -1.0f32);
            packed[out + 1] = 0u32;
            packed[out + 2] = 0u32;
            packed[out + 3] = 0u32;
        }
    }
}

/// A site as the ranking sees it, unpacked to f32.
#[derive(CubeType)]
pub struct HalfSite {
    /// Position x (negative: inactive).
    pub x: f32,
    /// Position y.
    pub y: f32,
    /// log τ.
    pub log_tau: f32,
    /// Radius.
    pub radius: f32,
    /// Direction x.
    pub ux: f32,
    /// Direction y.
    pub uy: f32,
    /// Log anisotropy.
    pub log_aniso: f32,
}

/// Site `site` of the packed copy, read as one 16-byte vector where `packed` has vectors of
/// [`PACKED_WORDS`] words, else word by word.
#[cube]
pub fn unpack_site<N: Size>(packed: &Tensor<Vector<u32, N>>, site: usize) -> HalfSite {
    let words_per_load = packed.vector_size();
    let mut word = Array::<u32>::new(PACKED_WORDS);
    if comptime![words_per_load == PACKED_WORDS] {
        let words = packed[site];
        #[unroll]
        for i in 0..PACKED_WORDS {
            word[i] = words.extract(i);
        }
    } else {
        #[unroll]
        for i in 0..PACKED_WORDS {
            word[i] = packed[site * PACKED_WORDS + i].extract(0usize);
        }
    }
    let (position, shape, direction, aniso) = (word[0], word[1], word[2], word[3]);
    HalfSite {
        x: f16_value(position & 0xffffu32),
        y: f16_value(position >> 16),
        log_tau: f16_value(shape & 0xffffu32),
        radius: f16_value(shape >> 16),
        ux: f16_value(direction & 0xffffu32),
        uy: f16_value(direction >> 16),
        log_aniso: f16_value(aniso & 0xffffu32),
    }
}
