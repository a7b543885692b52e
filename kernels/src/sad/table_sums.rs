//! How a tile hash (see `tile_hash`) keeps its per-entry sums in shared memory, and the
//! fixed-point form of those sums that integer atomics can add.
//!
//! No GPU we target adds floats to shared memory natively: the H200 runs each `atomicAdd` of an
//! f32 (and of a 64-bit integer) to shared memory as a load and compare-and-swap loop
//! (`ATOMS.CAST.SPIN`), which lanes that add to one entry repeat until each has won; WGSL has no
//! float atomics at all. A 32-bit integer add is one native instruction everywhere
//! (`ATOMS.ADD` on NVIDIA, `atomicAdd` on a WGSL `atomic<u32>`), conflicts included. So
//! [`TableSums::Fixed`] splits each value into two integers that 32-bit adds can sum exactly.

use cubecl::prelude::*;

/// The form of a tile hash's sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TableSums {
    /// f32 atomics in shared memory (CUDA and HIP accept them; the hardware loops).
    Float,
    /// f32 bits in `u32` atomics, added with compare-exchange loops (any runtime).
    Bits,
    /// Fixed point with [`FRACTION_BITS`] fractional bits, as a high part (`i32`, the value
    /// rounded to a multiple of 2^−([`FRACTION_BITS`] − [`LOW_BITS`])) and a low part (the rest,
    /// signed, in units of 2^−[`FRACTION_BITS`], kept in `u32` words that wrap as `i32`), each
    /// summed with native integer atomics. A contribution whose values are all under
    /// [`SMALL_LIMIT`] in magnitude (their high parts zero), as most of a fit's are, takes one
    /// atomic per value instead of two. A value of magnitude [`FIXED_LIMIT`] or more, or not
    /// finite, skips the table and goes to global memory as a float atomic, so no sum can
    /// overflow (bounds at [`LOW_BITS`]).
    ///
    /// Each add rounds its value to a multiple of 2^−24 (6·10⁻⁸). That is only for sums whose
    /// scale is known: the squared-error gradients of a fit, where a pixel's values are of order
    /// one and the optimiser divides the sums by the pixel count before comparing them with its
    /// ε of 10⁻⁸.
    Fixed,
}

/// Fractional bits of a fixed-point value: its resolution is 2^−24.
pub const FRACTION_BITS: u32 = 24;
/// Bits of the low part's unit step: a high part counts multiples of 2^−(24 − 20). An entry
/// takes at most 2^11 adds per tile (256 pixels, each adding a site at most once per slot of 8),
/// so low parts of magnitude at most 2^19 sum to at most 2^30 in magnitude, and high parts of
/// magnitude under [`FIXED_LIMIT`] · 2^(24 − 20) = 2^19 sum to under 2^30.
pub const LOW_BITS: u32 = 20;
/// Values at least this large in magnitude go straight to global memory.
pub const FIXED_LIMIT: f32 = 32768.0;

/// A value in fixed point: `value ≈ high · 2^−4 + low · 2^−24`, `|low| ≤ 2^19`.
#[derive(CubeType)]
pub struct FixedParts {
    /// `value · 2^4`, rounded to the nearest integer.
    pub high: i32,
    /// The rest, rounded to a multiple of 2^−24, in those units (two's complement, as the
    /// table's `u32` words add it).
    pub low: u32,
}

/// Values under this magnitude have a zero high part: their low part alone, at most 2^19 in
/// magnitude, holds them.
pub const SMALL_LIMIT: f32 = 1.0 / (1u32 << (FRACTION_BITS - LOW_BITS + 1)) as f32;

/// The low part of `value` (magnitude under [`SMALL_LIMIT`]), whose high part is zero: its
/// multiple of 2^−24, as [`fixed_parts`] would give it, with one rounding.
#[cube]
pub fn small_fixed(value: f32) -> u32 {
    let units = f32::round(value * comptime![(1u32 << FRACTION_BITS) as f32]);
    u32::cast_from(i32::cast_from(units))
}

/// Splits `value` (finite, magnitude under [`FIXED_LIMIT`]) into its fixed-point parts.
#[cube]
pub fn fixed_parts(value: f32) -> FixedParts {
    let scaled = value * comptime![(1u32 << (FRACTION_BITS - LOW_BITS)) as f32];
    let high = f32::round(scaled);
    // Exact: `high` is within a half of `scaled`, so the difference is representable.
    let rest = scaled - high;
    let low = i32::cast_from(f32::round(rest * comptime![(1u32 << LOW_BITS) as f32]));
    FixedParts {
        high: i32::cast_from(high),
        low: u32::cast_from(low),
    }
}

/// The f32 value of summed parts (`low` the `u32` word of a signed sum), with a single rounding
/// of the whole: the low sum's carry joins the high sum as integers first, so a high and a low
/// sum that cancel lose nothing.
#[cube]
pub fn fixed_value(high: i32, low: u32) -> f32 {
    let low = i32::cast_from(low);
    // The non-negative rest below 2^LOW_BITS, and the floor of the quotient (an exact division,
    // whatever a runtime's shifts of negative values do).
    let rest = low & comptime![((1u32 << LOW_BITS) - 1) as i32];
    let carry = (low - rest) / comptime![(1u32 << LOW_BITS) as i32];
    let whole =
        f32::cast_from(high + carry) * comptime![1.0 / (1u32 << (FRACTION_BITS - LOW_BITS)) as f32];
    whole + f32::cast_from(rest) * comptime![1.0 / (1u32 << FRACTION_BITS) as f32]
}

/// Whether the table may hold `value` in fixed point (finite and under [`FIXED_LIMIT`]).
#[cube]
pub fn fits_fixed(value: f32) -> bool {
    // False for NaN, which then reaches the global sums as a float would.
    f32::abs(value) < FIXED_LIMIT
}
