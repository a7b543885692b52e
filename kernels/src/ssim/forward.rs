//! Forward kernel: SSIM over one tile of one plane, reduced to a single sum, and (in training)
//! the per-pixel partial derivatives of SSIM with respect to the local moments.

use cubecl::prelude::*;

use super::epilogue::{SsimTerm, ssim_terms};
use super::load::{InputEncoding, load_input};
use super::reduce::write_tile_sum;
use super::ring::blur_ring;
use super::window::gaussian_taps;
use super::{COLUMNS, COVARIANCE_SLOT, GradTargets, SIGMA_SQ_SLOT, StripLayout};

/// Blurred statistics per pixel: μ₁, μ₂, E[x²], E[y²], E[xy].
const STATS: usize = 5;

/// Computes SSIM over one output tile (see the module docs for the layout).
///
/// - `img1`, `img2`: contiguous data of `planes` planes of `height × width`, each of its own
///   storage type (`I1`, `I2`), read as `F`; `img2_encoding` says how img2 stores its values.
///   The outputs are `F`.
/// - `tile_sums[cube]`: `ssim_scale` times the sum of the `term` map over this tile's pixels
///   inside the map region (the whole image, or the `crop`-px interior for valid padding), plus,
///   with `l1`, `l1_scale` times the sum of |img1 − img2| over its pixels. With the scales set
///   to weight / pixel count, the tile sums add up to the weighted means.
/// - With `write_map`, `tile_sums` is instead the map itself, `[planes·height·width]`: at each
///   pixel of the map region `ssim_scale · term` plus, with `l1`, `l1_scale · |img1 − img2|`,
///   and zero elsewhere. Nothing is reduced.
/// - `partials`: with `targets = Some(..)`, a `[partial_count, planes·height·width]` stack of
///   ∂S/∂σ², ∂S/∂σ₁₂ and the requested ∂S/∂μ maps (see [`GradTargets`]); zero outside the map
///   region and where the SSIM value was clamped. Unused (may be one element) for inference.
///
/// - With `moments_only`, the kernel is the in-slice stage of 3D SSIM instead: it writes the five
///   XY-blurred statistics μ₁, μ₂, E\[x²\], E\[y²\], E\[xy\] of every pixel as a
///   `[5, planes·height·width]` stack into `partials`, and nothing else (`term`, `l1` and
///   `targets` are ignored, `tile_sums` is untouched).
///
/// Launch with a `(COLUMNS, layout.strips)` cube and a
/// `(⌈W / COLUMNS⌉, ⌈H / layout.tile_rows()⌉, planes)` grid.
#[cube(launch, launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn ssim_forward_kernel<F: Float, I1: Numeric, I2: Numeric>(
    img1: &Tensor<I1>,
    img2: &Tensor<I2>,
    tile_sums: &mut Tensor<F>,
    partials: &mut Tensor<F>,
    height: usize,
    width: usize,
    crop: usize,
    ssim_scale: f32,
    l1_scale: f32,
    c1: f32,
    c2: f32,
    #[comptime] radius: usize,
    #[comptime] sigma_bits: u32,
    #[comptime] layout: StripLayout,
    #[comptime] term: SsimTerm,
    #[comptime] l1: bool,
    #[comptime] targets: Option<GradTargets>,
    #[comptime] moments_only: bool,
    #[comptime] write_map: bool,
    #[comptime] img2_encoding: InputEncoding,
    #[define(F, I1, I2)] _dtypes: [ElemType; 3],
) {
    let taps = comptime![gaussian_taps(radius, sigma_bits)];
    let taps_len = comptime![2 * radius + 1];
    let span_x = comptime![COLUMNS + 2 * radius];
    let span_y = comptime![layout.tile_rows() + 2 * radius];
    let unit = UNIT_POS as usize;
    let column = UNIT_POS_X as usize;
    let strip = UNIT_POS_Y as usize;
    let x0 = CUBE_POS_X as usize * COLUMNS;
    let y0 = CUBE_POS_Y as usize * comptime![layout.tile_rows()];
    let plane_base = CUBE_POS_Z as usize * height * width;

    // Stage the tile and its apron, both images interleaved, zero outside the image.
    let mut pixels = Shared::<[F]>::new_slice(comptime![layout.staged_len(radius, 2)]);
    let mut i = unit;
    while i < comptime![span_x * span_y] {
        let sy = y0 + i / span_x;
        let sx = x0 + i % span_x;
        let mut a = F::new(0.0);
        let mut b = F::new(0.0);
        if sy >= radius && sy < height + radius && sx >= radius && sx < width + radius {
            let idx = plane_base + (sy - radius) * width + sx - radius;
            a = load_input::<F, I1>(img1, idx, InputEncoding::Float);
            b = load_input::<F, I2>(img2, idx, img2_encoding);
        }
        pixels[2 * i] = a;
        pixels[2 * i + 1] = b;
        i += comptime![layout.units()];
    }
    sync_cube();

    let x = x0 + column;
    let first_row = strip * comptime![layout.rows];
    let total = img1.len();
    let mut tile_sum = F::new(0.0);
    // The last `taps_len` horizontally blurred rows, `STATS` values each, slot = row % taps_len.
    let mut ring = Array::<F>::new(comptime![STATS * taps_len]);
    #[unroll]
    for r in 0..comptime![layout.rows + 2 * radius] {
        // Horizontal blur of staged row `first_row + r` at this unit's column.
        let centre = (first_row + r) * span_x + column + radius;
        let w0 = F::new(comptime![taps[0]]);
        let a = pixels[2 * centre];
        let b = pixels[2 * centre + 1];
        let mut sa = w0 * a;
        let mut sb = w0 * b;
        let mut saa = w0 * a * a;
        let mut sbb = w0 * b * b;
        let mut sab = w0 * a * b;
        #[unroll]
        for d in 1..comptime![radius + 1] {
            let w = F::new(comptime![taps[d]]);
            let la = pixels[2 * (centre - d)];
            let lb = pixels[2 * (centre - d) + 1];
            let ra = pixels[2 * (centre + d)];
            let rb = pixels[2 * (centre + d) + 1];
            sa += w * (la + ra);
            sb += w * (lb + rb);
            saa += w * (la * la + ra * ra);
            sbb += w * (lb * lb + rb * rb);
            sab += w * (la * lb + ra * rb);
        }
        let slot = comptime![(r % taps_len) * STATS];
        ring[slot] = sa;
        ring[slot + 1] = sb;
        ring[slot + 2] = saa;
        ring[slot + 3] = sbb;
        ring[slot + 4] = sab;

        // Once the window below output row `r − 2·radius` is complete, blur vertically.
        if comptime![r >= 2 * radius] {
            let out = comptime![r - 2 * radius];
            let v = blur_ring::<F>(&ring, out, radius, sigma_bits, STATS);
            let y = y0 + first_row + out;
            let in_image = x < width && y < height;
            if comptime![moments_only] {
                if in_image {
                    let idx = plane_base + y * width + x;
                    #[unroll]
                    for s in 0..STATS {
                        partials[s * total + idx] = v[s];
                    }
                }
            } else {
                let in_map =
                    in_image && x >= crop && y >= crop && x + crop < width && y + crop < height;
                let terms = ssim_terms::<F>(v[0], v[1], v[2], v[3], v[4], c1, c2, term);
                if comptime![write_map] {
                    if in_image {
                        let mut value = F::new(0.0);
                        if in_map {
                            value = F::cast_from(ssim_scale) * terms.value;
                            if comptime![l1] {
                                let texel =
                                    2 * ((first_row + out + radius) * span_x + column + radius);
                                value += F::cast_from(l1_scale)
                                    * F::abs(pixels[texel] - pixels[texel + 1]);
                            }
                        }
                        tile_sums[plane_base + y * width + x] = value;
                    }
                } else {
                    if in_map {
                        tile_sum += F::cast_from(ssim_scale) * terms.value;
                    }
                    if comptime![l1] {
                        if in_image {
                            let texel = 2 * ((first_row + out + radius) * span_x + column + radius);
                            tile_sum +=
                                F::cast_from(l1_scale) * F::abs(pixels[texel] - pixels[texel + 1]);
                        }
                    }
                }
                if comptime![targets.is_some()] {
                    let targets = comptime![targets.unwrap()];
                    if in_image {
                        let idx = plane_base + y * width + x;
                        let keep = F::cast_from(in_map);
                        partials[comptime![SIGMA_SQ_SLOT] * total + idx] = keep * terms.d_var;
                        partials[comptime![COVARIANCE_SLOT] * total + idx] = keep * terms.d_cov;
                        if comptime![targets.img1] {
                            partials[comptime![targets.mu1_slot()] * total + idx] =
                                keep * terms.d_mu1;
                        }
                        if comptime![targets.img2] {
                            partials[comptime![targets.mu2_slot()] * total + idx] =
                                keep * terms.d_mu2;
                        }
                    }
                }
            }
        }
    }

    // Only a reducing forward has a tile sum to write: the write is left out at expansion (a
    // `terminate!` under a comptime condition did not stop it on wgpu).
    if comptime![!moments_only && !write_map] {
        write_tile_sum::<F>(&mut pixels, tile_sums, tile_sum, comptime![layout.units()]);
    }
}
