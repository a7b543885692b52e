//! The Gaussian window, evaluated at kernel-expansion time.

/// Radius of the default 11-tap window.
pub const DEFAULT_RADIUS: usize = 5;
/// Sigma of the default window.
pub const DEFAULT_SIGMA: f32 = 1.5;

/// The float32 taps of the reference implementation (rahul-goel/fused-ssim), centre last.
/// The default window uses these literals rather than a recomputed Gaussian so that results are
/// bit-compatible with the reference: one of them is one ULP off the correctly rounded value.
/// Written digit for digit as the reference prints them, so they can be audited against it.
#[allow(clippy::excessive_precision)]
const REFERENCE_TAPS: [f32; 6] = [
    0.001028380123898387,
    0.0075987582094967365,
    0.036000773310661316,
    0.10936068743467331,
    0.21300552785396576,
    0.26601171493530273,
];

/// One side of a normalised 1-D Gaussian window: `taps[d]` is the weight at distance `d` from the
/// centre, for `d` in `0..=radius`.
///
/// `sigma_bits` is `f32::to_bits(sigma)`, because comptime kernel parameters must be hashable.
pub fn gaussian_taps(radius: usize, sigma_bits: u32) -> Vec<f32> {
    let sigma = f32::from_bits(sigma_bits);
    if radius == DEFAULT_RADIUS && sigma == DEFAULT_SIGMA {
        return (0..=radius).map(|d| REFERENCE_TAPS[radius - d]).collect();
    }
    let weights: Vec<f64> = (0..=radius)
        .map(|d| (-((d * d) as f64) / (2.0 * (sigma as f64).powi(2))).exp())
        .collect();
    let total: f64 = weights[0] + 2.0 * weights[1..].iter().sum::<f64>();
    weights.iter().map(|w| (w / total) as f32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_taps_are_the_reference_literals() {
        let taps = gaussian_taps(DEFAULT_RADIUS, DEFAULT_SIGMA.to_bits());
        // A sigma one ULP away takes the computed path: the literals are within float32
        // rounding of the exact Gaussian, and are not bit-identical to a recomputation.
        let computed = gaussian_taps(5, 1.5f32.to_bits() ^ 1);
        for (a, b) in taps.iter().zip(&computed) {
            assert!((a - b).abs() < 3e-8, "{a} vs {b}");
        }
        assert_ne!(taps, computed);
    }

    #[test]
    fn computed_taps_are_normalised() {
        for radius in 1..8 {
            let taps = gaussian_taps(radius, 2.0f32.to_bits());
            let total: f32 = taps[0] + 2.0 * taps[1..].iter().sum::<f32>();
            assert!((total - 1.0).abs() < 1e-6);
        }
    }
}
