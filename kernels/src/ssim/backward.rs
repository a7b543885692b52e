//! Backward kernel: the gradient of mean SSIM with respect to each tracked input.
//!
//! Every moment is a Gaussian correlation of x, x² or x·y, and the window is symmetric, so the
//! adjoint of each moment is the same blur applied to the stored partial map:
//! dL/dx = g·(G[∂S/∂μ₁] + 2x·G[∂S/∂σ²] + y·G[∂S/∂σ₁₂]), and symmetrically for y.

use cubecl::prelude::*;

use super::window::gaussian_taps;
use super::{COVARIANCE_SLOT, CUBE_UNITS, GradTargets, SIGMA_SQ_SLOT, TILE};

/// Computes the input gradients for one 16×16 tile of one plane.
///
/// - `partials`: the stack written by the training forward with the same `targets`.
/// - `upstream[0]`: dL/d(mean SSIM); `inv_count` is 1 / (number of map pixels).
/// - `grads`: `[grad_count, planes·height·width]`, img1's gradient first when both are tracked.
///
/// Launch with a `TILE × TILE` cube and a `(⌈W/16⌉, ⌈H/16⌉, planes)` grid.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub fn ssim_backward_kernel<F: Float>(
    img1: &Tensor<F>,
    img2: &Tensor<F>,
    partials: &Tensor<F>,
    upstream: &Tensor<F>,
    grads: &mut Tensor<F>,
    height: usize,
    width: usize,
    inv_count: f32,
    #[comptime] radius: usize,
    #[comptime] sigma_bits: u32,
    #[comptime] targets: GradTargets,
    #[define(F)] _dtype: ElemType,
) {
    let span = comptime![TILE + 2 * radius];
    let taps = comptime![gaussian_taps(radius, sigma_bits)];
    let maps = comptime![targets.partial_count()];
    let unit = UNIT_POS as usize;
    let tx = UNIT_POS_X as usize;
    let ty = UNIT_POS_Y as usize;
    let x0 = CUBE_POS_X as usize * TILE;
    let y0 = CUBE_POS_Y as usize * TILE;
    let plane_base = CUBE_POS_Z as usize * height * width;
    let total = img1.len();

    // Stage the partial maps over the tile and its apron, planar, zero outside the image.
    let plane_stride = comptime![span * span];
    let mut staged = Shared::<[F]>::new_slice(comptime![maps * span * span]);
    let mut i = unit;
    while i < comptime![span * span] {
        let sy = y0 + i / span;
        let sx = x0 + i % span;
        let inside = sy >= radius && sy < height + radius && sx >= radius && sx < width + radius;
        let idx = plane_base + (sy - radius) * width + sx - radius;
        #[unroll]
        for m in 0..maps {
            let mut v = F::new(0.0);
            if inside {
                v = partials[m * total + idx];
            }
            staged[m * plane_stride + i] = v;
        }
        i += CUBE_UNITS;
    }
    sync_cube();

    // Horizontal blur of every staged row, interior columns only.
    let row_stride = comptime![span * TILE];
    let mut rows = Shared::<[F]>::new_slice(comptime![maps * span * TILE]);
    #[unroll]
    for pass in 0..comptime![span.div_ceil(TILE)] {
        let row = ty + pass * TILE;
        if row < span {
            let centre = row * span + tx + radius;
            #[unroll]
            for m in 0..maps {
                let base = m * plane_stride + centre;
                let mut acc = F::new(comptime![taps[0]]) * staged[base];
                #[unroll]
                for d in 1..comptime![radius + 1] {
                    acc += F::new(comptime![taps[d]]) * (staged[base - d] + staged[base + d]);
                }
                rows[m * row_stride + row * TILE + tx] = acc;
            }
        }
    }
    sync_cube();

    // Vertical blur in registers.
    let mut blurred = Array::<F>::new(maps);
    let centre = (ty + radius) * TILE + tx;
    #[unroll]
    for m in 0..maps {
        let base = m * row_stride + centre;
        let mut acc = F::new(comptime![taps[0]]) * rows[base];
        #[unroll]
        for d in 1..comptime![radius + 1] {
            acc += F::new(comptime![taps[d]]) * (rows[base - d * TILE] + rows[base + d * TILE]);
        }
        blurred[m] = acc;
    }

    let x = x0 + tx;
    let y = y0 + ty;
    if x < width && y < height {
        let idx = plane_base + y * width + x;
        let scale = upstream[0] * F::cast_from(inv_count);
        let a = img1[idx];
        let b = img2[idx];
        let two = F::new(2.0);
        let g_var = blurred[comptime![SIGMA_SQ_SLOT]];
        let g_cov = blurred[comptime![COVARIANCE_SLOT]];
        if comptime![targets.img1] {
            let g_mu = blurred[comptime![targets.mu1_slot()]];
            grads[idx] = scale * (g_mu + two * a * g_var + b * g_cov);
        }
        if comptime![targets.img2] {
            let g_mu = blurred[comptime![targets.mu2_slot()]];
            let slot = comptime![targets.img1 as usize];
            grads[slot * total + idx] = scale * (g_mu + two * b * g_var + a * g_cov);
        }
    }
}
