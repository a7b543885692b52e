//! The shared buffer between the 2D kernels' vertical walk and their horizontal pass: where a
//! walker stores a value, and the horizontal blur of two neighbouring output pixels.

use cubecl::prelude::*;

use super::window::gaussian_taps;
use super::{ODD_SLOTS, StripLayout};

/// The slot of walk column `column` within a buffer row: even columns first, odd ones from
/// [`ODD_SLOTS`] (the 32 columns of a warp then fall in 32 banks).
#[cube]
pub fn column_slot(column: usize) -> usize {
    (column % 2) * ODD_SLOTS + column / 2
}

/// Stores `values[0..count]` of walk column `slot` (see [`column_slot`]) in buffer row `row`:
/// value `s` in the `s`-th of `count` planes of `plane_len` slots.
#[cube]
pub fn store_row<F: Float>(
    buffer: &mut Shared<[F]>,
    values: &Array<F>,
    row: usize,
    slot: usize,
    #[comptime] radius: usize,
    #[comptime] plane_len: usize,
    #[comptime] count: usize,
) {
    let at = row * comptime![StripLayout::row_stride(radius)] + slot;
    #[unroll]
    for s in 0..count {
        buffer[comptime![s * plane_len] + at] = values[s];
    }
}

/// The horizontal blur of output pixels `2·pair` and `2·pair + 1` of buffer row `row`, for
/// `count` planes of `plane_len` slots: `blurred[q · count + s]` is plane `s` at pixel
/// `2·pair + q`. Both windows lie in walk columns `2·pair ..= 2·pair + 2·radius + 1`, read once
/// (`radius + 1` even and as many odd slots, each a run of consecutive slots across the warp).
#[cube]
pub fn blur_pair<F: Float>(
    buffer: &Shared<[F]>,
    row: usize,
    pair: usize,
    #[comptime] radius: usize,
    #[comptime] sigma_bits: u32,
    #[comptime] plane_len: usize,
    #[comptime] count: usize,
) -> Array<F> {
    let taps = comptime![gaussian_taps(radius, sigma_bits)];
    let span = comptime![2 * radius + 2];
    let at = row * comptime![StripLayout::row_stride(radius)] + pair;
    let mut blurred = Array::<F>::new(comptime![2 * count]);
    #[unroll]
    for s in 0..count {
        let base = comptime![s * plane_len] + at;
        // `window[j]` is walk column `2·pair + j`.
        let mut window = Array::<F>::new(span);
        #[unroll]
        for i in 0..comptime![radius + 1] {
            window[comptime![2 * i]] = buffer[base + i];
            window[comptime![2 * i + 1]] = buffer[base + comptime![ODD_SLOTS + i]];
        }
        #[unroll]
        for q in 0..2usize {
            let centre = comptime![q + radius];
            let mut acc = F::new(comptime![taps[0]]) * window[centre];
            #[unroll]
            for d in 1..comptime![radius + 1] {
                acc += F::new(comptime![taps[d]])
                    * (window[comptime![centre - d]] + window[comptime![centre + d]]);
            }
            blurred[comptime![q * count + s]] = acc;
        }
    }
    blurred
}
