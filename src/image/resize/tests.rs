use super::*;

#[test]
fn the_size_follows_the_reference_rule() {
    assert_eq!(scaled_size(640, 480, 12_000), None);
    assert_eq!(scaled_size(12_000, 5, 12_000), None);
    assert_eq!(scaled_size(12_001, 7_000, 12_000), Some((12_000, 6_999)));
    assert_eq!(scaled_size(7_000, 24_000, 12_000), Some((3_500, 12_000)));
    // A side that rounds to 0 keeps one pixel.
    assert_eq!(scaled_size(30_000, 1, 12_000), Some((12_000, 1)));
}

/// Deterministic bytes for the tests.
fn noise(len: usize, seed: u32) -> Vec<u8> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 24) as u8
        })
        .collect()
}

/// One output pixel computed directly in two dimensions, in f64: the Mitchell weights of every
/// source pixel within the filter's reach (edges clamped), normalised per axis.
fn direct(
    rgb: &[u8],
    size: (usize, usize),
    out_size: (usize, usize),
    x: usize,
    y: usize,
) -> [u8; 3] {
    // stb_image_resize's rules: an axis of the same size is copied, a shrinking one filtered
    // with Mitchell over 2 output pixels each side, an enlarging one with Catmull–Rom.
    let axis = |length: usize, out_length: usize, out: usize| -> Vec<(usize, f64)> {
        if length == out_length {
            return vec![(out, 1.0)];
        }
        let scale = out_length as f64 / length as f64;
        let (filter, filter_scale): (fn(f64) -> f64, f64) = match scale < 1.0 {
            true => (mitchell, scale),
            false => (catmull_rom, 1.0),
        };
        let centre = (out as f64 + 0.5) / scale - 0.5;
        let reach = 2.0 / filter_scale;
        let mut taps: Vec<(usize, f64)> = ((centre - reach).ceil() as isize
            ..=(centre + reach).floor() as isize)
            .map(|p| {
                let source = p.clamp(0, length as isize - 1) as usize;
                (source, filter((p as f64 - centre) * filter_scale))
            })
            .collect();
        let total: f64 = taps.iter().map(|t| t.1).sum();
        taps.iter_mut().for_each(|t| t.1 /= total);
        taps
    };
    let linear = |v: u8| {
        let v = f64::from(v) / 255.0;
        if v <= 0.04045 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    let mut sum = [0f64; 3];
    for (sy, wy) in axis(size.1, out_size.1, y) {
        for (sx, wx) in axis(size.0, out_size.0, x) {
            for (c, total) in sum.iter_mut().enumerate() {
                *total += wx * wy * linear(rgb[(sy * size.0 + sx) * 3 + c]);
            }
        }
    }
    sum.map(|v| linear_to_srgb8(v as f32))
}

#[test]
fn the_separable_passes_match_a_direct_two_dimensional_sum() {
    let cases = [
        ((13, 9), (5, 4)),
        ((40, 7), (12, 7)),
        ((31, 33), (10, 29)),
        ((9, 6), (20, 13)),
    ];
    for (size, out_size) in cases {
        let rgb = noise(size.0 * size.1 * 3, 7);
        let out = resize_u8(&rgb, 3, size, out_size, Transfer::Srgb);
        assert_eq!(out.len(), out_size.0 * out_size.1 * 3);
        for y in 0..out_size.1 {
            for x in 0..out_size.0 {
                let want = direct(&rgb, size, out_size, x, y);
                let got = &out[(y * out_size.0 + x) * 3..][..3];
                for c in 0..3 {
                    assert!(
                        got[c].abs_diff(want[c]) <= 1,
                        "{size:?} → {out_size:?} at ({x}, {y}) channel {c}: {} vs {}",
                        got[c],
                        want[c]
                    );
                }
            }
        }
    }
}

#[test]
fn flat_colours_stay_and_halving_averages_in_linear_light() {
    let flat = vec![77u8; 20 * 10 * 3];
    assert!(
        resize_u8(&flat, 3, (20, 10), (7, 3), Transfer::Srgb)
            .iter()
            .all(|&v| v == 77)
    );
    // A black and white checkerboard halved: each output pixel is half white in linear light,
    // sRGB 188 (an average of the 8-bit codes would give 128). The border is left out: its
    // clamped taps repeat the edge pixels.
    let board: Vec<u8> = (0..16 * 16)
        .flat_map(|i| {
            let v = if (i % 16 + i / 16) % 2 == 0 { 255 } else { 0 };
            [v; 3]
        })
        .collect();
    let half = resize_u8(&board, 3, (16, 16), (8, 8), Transfer::Srgb);
    for y in 2..6 {
        for x in 2..6 {
            assert_eq!(half[(y * 8 + x) * 3], 188, "({x}, {y})");
        }
    }
}
