//! Scaling 8-bit images as the reference trainer does with stb_image_resize: a photo shrunk to
//! the largest size a fit takes (sRGB, filtered in linear light), a mask fitted to its photo.
//! Shrinking filters with the Mitchell–Netravali cubic (B = C = 1/3), enlarging with
//! Catmull–Rom, an axis that keeps its size is copied; edges are clamped.

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

/// How 8-bit values relate to the light the filter averages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transfer {
    /// sRGB-encoded colour: decoded to linear light before filtering, encoded after.
    Srgb,
    /// Values filtered as they are (a mask, an alpha channel).
    Linear,
}

impl Transfer {
    fn decode(self, value: u8) -> f32 {
        match self {
            Self::Srgb => srgb_to_linear(value),
            Self::Linear => f32::from(value) / 255.0,
        }
    }

    fn encode(self, value: f32) -> u8 {
        match self {
            Self::Srgb => linear_to_srgb8(value),
            Self::Linear => (value.clamp(0.0, 1.0) * 255.0).round() as u8,
        }
    }
}

/// Scales interleaved 8-bit pixels of `channels` values (`width × height`) to `out_width ×
/// out_height`, rows first then columns, as stb_image_resize does (`stbir_resize_uint8_srgb`
/// with [`Transfer::Srgb`], `stbir_resize_uint8_linear` with [`Transfer::Linear`]). When
/// shrinking, the filter widens with the factor so that every source pixel counts.
pub fn resize_u8(
    pixels: &[u8],
    channels: usize,
    (width, height): (usize, usize),
    (out_width, out_height): (usize, usize),
    transfer: Transfer,
) -> Vec<u8> {
    assert_eq!(
        pixels.len(),
        width * height * channels,
        "pixels do not match the size"
    );
    let decoded: Vec<f32> = (0..=255u8).map(|v| transfer.decode(v)).collect();
    let columns = Taps::new(width, out_width);
    let rows = Taps::new(height, out_height);
    let (row_len, out_row_len) = (width * channels, out_width * channels);
    // Rows: each source row narrowed to out_width pixels, as decoded values.
    let mut narrow = vec![0f32; height * out_row_len];
    for (y, out_row) in narrow.chunks_exact_mut(out_row_len).enumerate() {
        let row = &pixels[y * row_len..(y + 1) * row_len];
        for (x, out) in out_row.chunks_exact_mut(channels).enumerate() {
            for (source, weight) in columns.of(x) {
                for (c, sum) in out.iter_mut().enumerate() {
                    *sum += weight * decoded[usize::from(row[source * channels + c])];
                }
            }
        }
    }
    // Columns: each output row from the narrowed rows its taps name.
    let mut out = vec![0u8; out_row_len * out_height];
    let mut line = vec![0f32; out_row_len];
    for (y, out_row) in out.chunks_exact_mut(out_row_len).enumerate() {
        line.fill(0.0);
        for (source, weight) in rows.of(y) {
            let row = &narrow[source * out_row_len..(source + 1) * out_row_len];
            for (sum, value) in line.iter_mut().zip(row) {
                *sum += weight * value;
            }
        }
        for (byte, value) in out_row.iter_mut().zip(&line) {
            *byte = transfer.encode(*value);
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
        if out_length == length {
            // An axis that keeps its size is copied, as stb_image_resize does.
            return Self {
                starts: (0..length).collect(),
                weights: vec![vec![1.0]; length],
            };
        }
        let scale = out_length as f64 / length as f64;
        // Shrinking: Mitchell, spanning 2 output pixels each side (2 / scale source pixels);
        // enlarging: Catmull–Rom over 2 source pixels each side (stb_image_resize's defaults).
        let filter: fn(f64) -> f64 = if scale < 1.0 { mitchell } else { catmull_rom };
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
                    filter((position as f64 - centre) * filter_scale);
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

/// The Catmull–Rom cubic (B = 0, C = 1/2), zero from |x| = 2 on.
fn catmull_rom(x: f64) -> f64 {
    let x = x.abs();
    if x < 1.0 {
        1.0 - x * x * (2.5 - 1.5 * x)
    } else if x < 2.0 {
        2.0 - x * (4.0 + x * (0.5 * x - 2.5))
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
mod tests;
