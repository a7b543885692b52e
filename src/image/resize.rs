//! Scaling a photo down to the largest size a fit takes, as the reference trainer loads one:
//! 8-bit sRGB in and out, filtered in linear light with the Mitchell–Netravali cubic
//! (B = C = 1/3, stb_image_resize's default for downsampling), edges clamped.

/// The size an image of `width × height` is scaled to so that its longer side is at most
/// `max_dim`: `round(W·s) × round(H·s)` with `s = max_dim / max(W, H)` in f32, each side at
/// least 1 (the reference's rule). `None` when the image already fits.
pub fn scaled_size(width: usize, height: usize, max_dim: usize) -> Option<(usize, usize)> {
    let longer = width.max(height);
    if max_dim == 0 || longer <= max_dim {
        return None;
    }
    let scale = max_dim as f32 / longer as f32;
    let side = |length: usize| ((length as f32 * scale).round() as usize).max(1);
    Some((side(width), side(height)))
}

/// Scales interleaved 8-bit sRGB pixels (`width × height`, 3 bytes each) to `out_width ×
/// out_height`, filtering in linear light, rows first then columns. Meant for shrinking; the
/// filter widens with the shrink factor so every source pixel counts.
pub fn resize_srgb8(
    rgb: &[u8],
    (width, height): (usize, usize),
    (out_width, out_height): (usize, usize),
) -> Vec<u8> {
    assert_eq!(
        rgb.len(),
        width * height * 3,
        "pixels do not match the size"
    );
    let to_linear: Vec<f32> = (0..=255u8).map(srgb_to_linear).collect();
    let columns = Taps::new(width, out_width);
    let rows = Taps::new(height, out_height);
    // Rows: each source row shrinks to out_width linear pixels.
    let mut narrow = vec![0f32; height * out_width * 3];
    for (y, out_row) in narrow.chunks_exact_mut(out_width * 3).enumerate() {
        let row = &rgb[y * width * 3..(y + 1) * width * 3];
        for (x, out) in out_row.chunks_exact_mut(3).enumerate() {
            for (source, weight) in columns.of(x) {
                for c in 0..3 {
                    out[c] += weight * to_linear[usize::from(row[source * 3 + c])];
                }
            }
        }
    }
    // Columns: each output row from the narrowed rows its taps name.
    let mut out = vec![0u8; out_width * out_height * 3];
    let mut line = vec![0f32; out_width * 3];
    for (y, out_row) in out.chunks_exact_mut(out_width * 3).enumerate() {
        line.fill(0.0);
        for (source, weight) in rows.of(y) {
            let row = &narrow[source * out_width * 3..(source + 1) * out_width * 3];
            for (sum, value) in line.iter_mut().zip(row) {
                *sum += weight * value;
            }
        }
        for (byte, value) in out_row.iter_mut().zip(&line) {
            *byte = linear_to_srgb8(*value);
        }
    }
    out
}

/// For each output position along one axis, the source positions it reads and their weights
/// (summing to 1).
struct Taps {
    starts: Vec<usize>,
    weights: Vec<Vec<f32>>,
}

impl Taps {
    fn new(length: usize, out_length: usize) -> Self {
        let scale = out_length as f64 / length as f64;
        // The filter spans 2 output pixels each side; in source pixels, 2 / scale when shrinking.
        let support = 2.0 / scale.min(1.0);
        let filter_scale = scale.min(1.0);
        let mut starts = Vec::with_capacity(out_length);
        let mut weights = Vec::with_capacity(out_length);
        for out in 0..out_length {
            let centre = (out as f64 + 0.5) / scale - 0.5;
            let first = (centre - support).ceil() as isize;
            let last = (centre + support).floor() as isize;
            // Clamped edges: taps past the image add to its first or last pixel.
            let clamp = |position: isize| position.clamp(0, length as isize - 1) as usize;
            let first_source = clamp(first);
            let mut taps = vec![0f64; clamp(last) - first_source + 1];
            for position in first..=last {
                taps[clamp(position) - first_source] +=
                    mitchell((position as f64 - centre) * filter_scale);
            }
            let total: f64 = taps.iter().sum();
            let taps: Vec<f32> = taps.iter().map(|weight| (weight / total) as f32).collect();
            starts.push(first_source);
            weights.push(taps);
        }
        Self { starts, weights }
    }

    /// (source position, weight) of output position `out`.
    fn of(&self, out: usize) -> impl Iterator<Item = (usize, f32)> + '_ {
        let start = self.starts[out];
        self.weights[out]
            .iter()
            .enumerate()
            .map(move |(i, &weight)| (start + i, weight))
    }
}

/// The Mitchell–Netravali cubic with B = C = 1/3, zero from |x| = 2 on.
fn mitchell(x: f64) -> f64 {
    let x = x.abs();
    if x < 1.0 {
        (16.0 + x * x * (21.0 * x - 36.0)) / 18.0
    } else if x < 2.0 {
        (32.0 + x * (-60.0 + x * (36.0 - 7.0 * x))) / 18.0
    } else {
        0.0
    }
}

/// An 8-bit sRGB value as linear light in [0, 1].
fn srgb_to_linear(value: u8) -> f32 {
    let v = f32::from(value) / 255.0;
    if v <= 0.04045 {
        v / 12.92
    } else {
        ((v + 0.055) / 1.055).powf(2.4)
    }
}

/// Linear light as the nearest 8-bit sRGB value.
fn linear_to_srgb8(value: f32) -> u8 {
    let v = value.clamp(0.0, 1.0);
    let encoded = if v <= 0.003_130_8 {
        v * 12.92
    } else {
        1.055 * v.powf(1.0 / 2.4) - 0.055
    };
    (encoded * 255.0).round() as u8
}

#[cfg(test)]
#[path = "resize_tests.rs"]
mod tests;
