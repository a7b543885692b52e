//! Forward kernel: SSIM of one 16×16 tile of one plane, reduced to a single sum, and (in
//! training) the per-pixel partial derivatives of SSIM with respect to the local moments.

use cubecl::prelude::*;

use super::window::gaussian_taps;
use super::{COVARIANCE_SLOT, CUBE_UNITS, GradTargets, SIGMA_SQ_SLOT, TILE};

/// Number of blurred statistics: μ₁, μ₂, E[x²], E[y²], E[xy].
const STATS: usize = 5;

/// Computes SSIM over one output tile.
///
/// - `img1`, `img2`: contiguous `[planes, height, width]` data (any leading shape).
/// - `tile_sums[cube]`: the sum of the SSIM map over this tile's pixels inside the map region
///   (the whole image, or the `crop`-px interior for valid padding).
/// - `partials`: with `targets = Some(..)`, a `[partial_count, planes·height·width]` stack of
///   ∂S/∂σ², ∂S/∂σ₁₂ and the requested ∂S/∂μ maps (see [`GradTargets`]); zero outside the map
///   region and where the SSIM value was clamped. Unused (may be one element) for inference.
///
/// Launch with a `TILE × TILE` cube and a `(⌈W/16⌉, ⌈H/16⌉, planes)` grid.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub fn ssim_forward_kernel<F: Float>(
    img1: &Tensor<F>,
    img2: &Tensor<F>,
    tile_sums: &mut Tensor<F>,
    partials: &mut Tensor<F>,
    height: usize,
    width: usize,
    crop: usize,
    c1: f32,
    c2: f32,
    #[comptime] radius: usize,
    #[comptime] sigma_bits: u32,
    #[comptime] targets: Option<GradTargets>,
    #[define(F)] _dtype: ElemType,
) {
    let span = comptime![TILE + 2 * radius];
    let taps = comptime![gaussian_taps(radius, sigma_bits)];
    let unit = UNIT_POS as usize;
    let tx = UNIT_POS_X as usize;
    let ty = UNIT_POS_Y as usize;
    let x0 = CUBE_POS_X as usize * TILE;
    let y0 = CUBE_POS_Y as usize * TILE;
    let plane_base = CUBE_POS_Z as usize * height * width;

    // Stage the tile and its apron, both images interleaved, zero outside the image.
    let mut pixels = Shared::<[F]>::new_slice(comptime![span * span * 2]);
    let mut i = unit;
    while i < comptime![span * span] {
        let sy = y0 + i / span;
        let sx = x0 + i % span;
        let mut a = F::new(0.0);
        let mut b = F::new(0.0);
        if sy >= radius && sy < height + radius && sx >= radius && sx < width + radius {
            let idx = plane_base + (sy - radius) * width + sx - radius;
            a = img1[idx];
            b = img2[idx];
        }
        pixels[2 * i] = a;
        pixels[2 * i + 1] = b;
        i += CUBE_UNITS;
    }
    sync_cube();

    // Horizontal blur of the five statistics for every staged row, interior columns only.
    let mut rows = Shared::<[F]>::new_slice(comptime![STATS * span * TILE]);
    #[unroll]
    for pass in 0..comptime![span.div_ceil(TILE)] {
        let row = ty + pass * TILE;
        if row < span {
            let centre = row * span + tx + radius;
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
            let out = row * TILE + tx;
            let stride = comptime![span * TILE];
            rows[out] = sa;
            rows[out + stride] = sb;
            rows[out + 2 * stride] = saa;
            rows[out + 3 * stride] = sbb;
            rows[out + 4 * stride] = sab;
        }
    }
    sync_cube();

    // Vertical blur in registers.
    let stride = comptime![span * TILE];
    let centre = (ty + radius) * TILE + tx;
    let w0 = F::new(comptime![taps[0]]);
    let mut mu1 = w0 * rows[centre];
    let mut mu2 = w0 * rows[centre + stride];
    let mut e11 = w0 * rows[centre + 2 * stride];
    let mut e22 = w0 * rows[centre + 3 * stride];
    let mut e12 = w0 * rows[centre + 4 * stride];
    #[unroll]
    for d in 1..comptime![radius + 1] {
        let w = F::new(comptime![taps[d]]);
        let up = centre - d * TILE;
        let down = centre + d * TILE;
        mu1 += w * (rows[up] + rows[down]);
        mu2 += w * (rows[up + stride] + rows[down + stride]);
        e11 += w * (rows[up + 2 * stride] + rows[down + 2 * stride]);
        e22 += w * (rows[up + 3 * stride] + rows[down + 3 * stride]);
        e12 += w * (rows[up + 4 * stride] + rows[down + 4 * stride]);
    }

    let x = x0 + tx;
    let y = y0 + ty;
    let in_image = x < width && y < height;
    let in_map = in_image && x >= crop && y >= crop && x + crop < width && y + crop < height;

    let zero = F::new(0.0);
    let two = F::new(2.0);
    let mu1_sq = mu1 * mu1;
    let mu2_sq = mu2 * mu2;
    let mu12 = mu1 * mu2;
    // Cancellation can make E[x²] − μ² slightly negative on flat regions (fused-ssim #37).
    let var1 = F::max(e11 - mu1_sq, zero);
    let var2 = F::max(e22 - mu2_sq, zero);
    let cov = e12 - mu12;
    let lum_den = mu1_sq + mu2_sq + F::cast_from(c1);
    let con_den = var1 + var2 + F::cast_from(c2);
    let lum_num = two * mu12 + F::cast_from(c1);
    let con_num = two * cov + F::cast_from(c2);
    let inv_den = F::new(1.0) / (lum_den * con_den);
    let raw = lum_num * con_num * inv_den;
    let clamped = raw > F::new(1.0) || raw < F::new(-1.0);
    let ssim = F::min(F::max(raw, F::new(-1.0)), F::new(1.0));

    if comptime![targets.is_some()] {
        let targets = comptime![targets.unwrap()];
        if in_image {
            let total = img1.len();
            let idx = plane_base + y * width + x;
            let mut d_var = zero;
            let mut d_cov = zero;
            let mut d_mu1 = zero;
            let mut d_mu2 = zero;
            if in_map && !clamped {
                d_var = -raw / con_den;
                d_cov = two * lum_num * inv_den;
                let shared = two * (con_num - lum_num) * inv_den;
                let spread = two * raw * (F::new(1.0) / lum_den - F::new(1.0) / con_den);
                d_mu1 = mu2 * shared - mu1 * spread;
                d_mu2 = mu1 * shared - mu2 * spread;
            }
            partials[comptime![SIGMA_SQ_SLOT] * total + idx] = d_var;
            partials[comptime![COVARIANCE_SLOT] * total + idx] = d_cov;
            if comptime![targets.img1] {
                partials[comptime![targets.mu1_slot()] * total + idx] = d_mu1;
            }
            if comptime![targets.img2] {
                partials[comptime![targets.mu2_slot()] * total + idx] = d_mu2;
            }
        }
    }

    // Tile reduction; `pixels` is free once every unit has passed the second barrier.
    let mut contribution = zero;
    if in_map {
        contribution = ssim;
    }
    pixels[unit] = contribution;
    sync_cube();
    #[unroll]
    for level in 0..comptime![CUBE_UNITS.trailing_zeros() as usize] {
        let half = comptime![CUBE_UNITS >> (level + 1)];
        if unit < half {
            pixels[unit] = pixels[unit] + pixels[unit + half];
        }
        sync_cube();
    }
    if unit == 0 {
        let cube = (CUBE_POS_Z as usize * CUBE_COUNT_Y as usize + CUBE_POS_Y as usize)
            * CUBE_COUNT_X as usize
            + CUBE_POS_X as usize;
        tile_sums[cube] = pixels[0];
    }
}
