//! f16 rounding by integer bit operations (round to nearest even), as the reference's
//! `__float2half` rounds the ranking inputs of its 16-byte packed site copy; they run on runtimes
//! without f16 arithmetic (WGSL without `shader-f16`, lavapipe).

use cubecl::prelude::*;

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
