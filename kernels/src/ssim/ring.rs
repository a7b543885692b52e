//! The vertical half of the separable blur, taken from a unit's register ring.

use cubecl::prelude::*;

use super::window::gaussian_taps;

/// Vertical blur for output row `out` of a unit's strip.
///
/// `ring` holds the last `2·radius + 1` horizontally blurred rows, `count` values each, row `r`
/// of the strip in slot `r mod (2·radius + 1)`; it must already hold rows `out ..= out + 2·radius`.
#[cube]
pub fn blur_ring<F: Float>(
    ring: &Array<F>,
    #[comptime] out: usize,
    #[comptime] radius: usize,
    #[comptime] sigma_bits: u32,
    #[comptime] count: usize,
) -> Array<F> {
    let taps = comptime![gaussian_taps(radius, sigma_bits)];
    let taps_len = comptime![2 * radius + 1];
    let centre = comptime![((out + radius) % taps_len) * count];
    let mut blurred = Array::<F>::new(count);
    #[unroll]
    for s in 0..count {
        blurred[s] = F::new(comptime![taps[0]]) * ring[centre + s];
    }
    #[unroll]
    for d in 1..comptime![radius + 1] {
        let w = F::new(comptime![taps[d]]);
        let up = comptime![((out + radius - d) % taps_len) * count];
        let down = comptime![((out + radius + d) % taps_len) * count];
        #[unroll]
        for s in 0..count {
            blurred[s] += w * (ring[up + s] + ring[down + s]);
        }
    }
    blurred
}
