//! The shared buffer between the 2D kernels' vertical walk and their horizontal pass: where a
//! walker stores a pixel's values, and the horizontal blur of two neighbouring output pixels.
//!
//! A pixel's `count` values lie in planes: the first ones four at a time in planes of 4-wide
//! vectors (`quads`, one 128-bit shared store or load for four values), the rest one at a time
//! in scalar planes (`scalars`); see [`quad_planes`] and [`scalar_planes`]. Each plane holds the
//! buffer's rows, a row's even columns first and its odd ones from a fixed slot, so that a
//! warp's stores and the pairs' loads fall in distinct banks.

use cubecl::prelude::*;

use super::window::gaussian_taps;
use super::{ODD_QUAD_SLOTS, ODD_SLOTS, StripLayout};

/// Four values of one pixel, one 128-bit shared access.
pub type Quad<F> = Vector<F, Const<4>>;

/// Planes of 4-wide vectors for `count` values a pixel: one per four. Three values stay
/// scalars: a vector with a zero lane reads a third more shared memory, and on an H100 it made
/// the backward of three maps slower (`benches/RESULTS.md`).
pub const fn quad_planes(count: usize) -> usize {
    count / 4
}

/// Scalar planes for `count` values a pixel: those the vector planes leave.
pub const fn scalar_planes(count: usize) -> usize {
    count % 4
}

/// The slot of walk column `column` within a row of a scalar plane: even columns first, odd
/// ones from [`ODD_SLOTS`] (the 32 columns of a warp then fall in 32 banks).
#[cube]
pub fn column_slot(column: usize) -> usize {
    (column % 2) * ODD_SLOTS + column / 2
}

/// The slot of walk column `column` within a row of a vector plane: even columns first, odd
/// ones from [`ODD_QUAD_SLOTS`] (the eight columns of a quarter warp's 128-bit store then fall
/// in eight distinct 16-byte bank groups).
#[cube]
pub fn quad_slot(column: usize) -> usize {
    (column % 2) * ODD_QUAD_SLOTS + column / 2
}

/// Stores `values[0..count]` of walk column `column` in buffer row `row` of a buffer of `rows`
/// rows: the vector planes' values first, then the scalar planes'.
#[cube]
pub fn store_row<F: Float>(
    quads: &mut Shared<[Quad<F>]>,
    scalars: &mut Shared<[F]>,
    values: &Array<F>,
    row: usize,
    column: usize,
    #[comptime] radius: usize,
    #[comptime] rows: usize,
    #[comptime] count: usize,
) {
    let quad_stride = comptime![StripLayout::quad_row_stride(radius)];
    let quad_len = comptime![rows * StripLayout::quad_row_stride(radius)];
    let at = row * quad_stride + quad_slot(column);
    #[unroll]
    for p in 0..comptime![quad_planes(count)] {
        let mut quad = Quad::<F>::new(F::new(0.0));
        #[unroll]
        for lane in 0..4usize {
            quad.insert(lane, values[comptime![4 * p + lane]]);
        }
        quads[comptime![p * quad_len] + at] = quad;
    }
    let stride = comptime![StripLayout::row_stride(radius)];
    let plane_len = comptime![rows * StripLayout::row_stride(radius)];
    let at = row * stride + column_slot(column);
    let first = comptime![4 * quad_planes(count)];
    #[unroll]
    for s in 0..comptime![scalar_planes(count)] {
        scalars[comptime![s * plane_len] + at] = values[comptime![first + s]];
    }
}

/// The horizontal blur of output pixels `2·pair` and `2·pair + 1` of buffer row `row` (of a
/// buffer of `rows` rows), for `count` values a pixel: `blurred[q · count + s]` is value `s` at
/// pixel `2·pair + q`. Both windows lie in walk columns `2·pair ..= 2·pair + 2·radius + 1`, read
/// once (`radius + 1` even and as many odd slots of each plane, each a run of consecutive slots
/// across the warp).
#[cube]
pub fn blur_pair<F: Float>(
    quads: &Shared<[Quad<F>]>,
    scalars: &Shared<[F]>,
    row: usize,
    pair: usize,
    #[comptime] radius: usize,
    #[comptime] sigma_bits: u32,
    #[comptime] rows: usize,
    #[comptime] count: usize,
) -> Array<F> {
    let taps = comptime![gaussian_taps(radius, sigma_bits)];
    let span = comptime![2 * radius + 2];
    let mut blurred = Array::<F>::new(comptime![2 * count]);
    let plane_len = comptime![rows * StripLayout::row_stride(radius)];
    let at = row * comptime![StripLayout::row_stride(radius)] + pair;
    let first = comptime![4 * quad_planes(count)];
    #[unroll]
    for s in 0..comptime![scalar_planes(count)] {
        let base = comptime![s * plane_len] + at;
        let mut acc0 = F::new(0.0);
        let mut acc1 = F::new(0.0);
        #[unroll]
        for j in 0..span {
            let column = scalars[base + comptime![(j % 2) * ODD_SLOTS + j / 2]];
            if comptime![j < span - 1] {
                acc0 += F::new(comptime![
                    taps[(j as isize - radius as isize).unsigned_abs()]
                ]) * column;
            }
            if comptime![j > 0] {
                acc1 += F::new(comptime![
                    taps[(j as isize - 1 - radius as isize).unsigned_abs()]
                ]) * column;
            }
        }
        blurred[comptime![first + s]] = acc0;
        blurred[comptime![count + first + s]] = acc1;
    }
    let quad_len = comptime![rows * StripLayout::quad_row_stride(radius)];
    let at = row * comptime![StripLayout::quad_row_stride(radius)] + pair;
    #[unroll]
    for p in 0..comptime![quad_planes(count)] {
        let base = comptime![p * quad_len] + at;
        // Each column is loaded once and weighed into both pixels as it comes (two products a
        // column, as many as the symmetric form's sums and products), so that only the two sums
        // and the column in flight hold registers.
        let mut acc0 = Quad::<F>::new(F::new(0.0));
        let mut acc1 = Quad::<F>::new(F::new(0.0));
        #[unroll]
        for j in 0..span {
            // Walk column `2·pair + j`: even columns from the plane's first slots, odd ones
            // from its odd slots.
            let column = quads[base + comptime![(j % 2) * ODD_QUAD_SLOTS + j / 2]];
            if comptime![j < span - 1] {
                let tap = comptime![taps[(j as isize - radius as isize).unsigned_abs()]];
                acc0 += Quad::<F>::new(F::new(tap)) * column;
            }
            if comptime![j > 0] {
                let tap = comptime![taps[(j as isize - 1 - radius as isize).unsigned_abs()]];
                acc1 += Quad::<F>::new(F::new(tap)) * column;
            }
        }
        #[unroll]
        for lane in 0..4usize {
            blurred[comptime![4 * p + lane]] = acc0.extract(lane);
            blurred[comptime![count + 4 * p + lane]] = acc1.extract(lane);
        }
    }
    blurred
}
