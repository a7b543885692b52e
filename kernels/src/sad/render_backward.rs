//! Backward render: the gradient of a loss with respect to all 10 parameters of every site,
//! given the loss's gradient with respect to the rendered image.

use cubecl::prelude::*;

use super::blend::blend_weights;
use super::render::cell_of_pixel;
use super::score::site_score;
use super::tile_hash::{TileHash, accumulate, flush};
use super::{COLOR, DIRECTION, K, LOG_ANISO, LOG_TAU, POSITION, RADIUS, SITE_PARAMS};

/// Accumulates ∂L/∂site into `grads` (`[capacity, 10]`, zeroed by the caller), from `grad_image`
/// (`[3, height, width]`, ∂L/∂image), or, with `from_target`, for the summed squared error
/// against the image `grad_image` holds (∂L/∂ĉ = 2(ĉ − t), formed in the kernel: no render pass).
///
/// Every pixel recomputes its forward blend, then adds its contribution to each live slot's
/// site. Contributions are first summed per tile in a shared-memory hash table keyed by site id
/// (neighbouring pixels share most of their candidates), and each occupied entry is flushed with
/// one global atomic add per parameter (see [`TileHash`]). Every unit reaches every barrier: pixels
/// outside the image only skip the work.
///
/// Launch with `(TILE, TILE)` cubes over the image.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub fn render_backward_kernel<F: Float>(
    sites: &Tensor<F>,
    candidates: &Tensor<i32>,
    grad_image: &Tensor<F>,
    grads: &mut Tensor<Atomic<F>>,
    width: usize,
    height: usize,
    cand_w: usize,
    cand_h: usize,
    site_count: usize,
    inv_scale_sq: f32,
    #[comptime] from_target: bool,
    #[comptime] native_atomics: bool,
    #[define(F)] _dtype: ElemType,
) {
    let hash = TileHash::<F>::new(SITE_PARAMS, native_atomics);

    let x = CUBE_POS_X as usize * CUBE_DIM_X as usize + UNIT_POS_X as usize;
    let y = CUBE_POS_Y as usize * CUBE_DIM_Y as usize + UNIT_POS_Y as usize;
    if x < width && y < height {
        let cell = cell_of_pixel(x, y, width, height, cand_w, cand_h);
        let qx = F::cast_from(x);
        let qy = F::cast_from(y);
        let inv_scale_sq = F::cast_from(inv_scale_sq);

        // The forward blend, as the reference's gradient pass computes it.
        let blend = blend_weights::<F>(
            sites,
            candidates,
            cell,
            site_count,
            qx,
            qy,
            inv_scale_sq,
            true,
        );
        if blend.any {
            let weights = blend.weights;
            let live = blend.live;
            let ids = blend.ids;
            let mut pred = Array::<F>::new(3usize);
            pred[0] = F::new(0.0);
            pred[1] = F::new(0.0);
            pred[2] = F::new(0.0);
            #[unroll]
            for k in 0..K {
                if live[k] {
                    #[unroll]
                    for c in 0..3 {
                        pred[c] += weights[k] * sites[ids[k] * SITE_PARAMS + COLOR + c];
                    }
                }
            }
            let plane = height * width;
            let pixel = y * width + x;
            let mut upstream = Array::<F>::new(3usize);
            #[unroll]
            for c in 0..3 {
                let given = grad_image[c * plane + pixel];
                if comptime![from_target] {
                    upstream[c] = F::new(2.0) * (pred[c] - given);
                } else {
                    upstream[c] = given;
                }
            }

            let inv_scale = F::sqrt(inv_scale_sq);
            #[unroll]
            for k in 0..K {
                if live[k] {
                    let site = ids[k];
                    let base = site * SITE_PARAMS;
                    let w = weights[k];
                    let mut contribution = Array::<F>::new(SITE_PARAMS);
                    // ∂L/∂z_k = Σ_c g_c · w_k · (c_k − ĉ).
                    let mut gz = F::new(0.0);
                    #[unroll]
                    for c in 0..3 {
                        let colour = sites[base + COLOR + c];
                        gz += upstream[c] * w * (colour - pred[c]);
                        contribution[COLOR + c] = w * upstream[c];
                    }
                    let tau = F::exp(sites[base + LOG_TAU]);
                    let score = site_score::<F>(sites, site, qx, qy, inv_scale_sq, true);
                    let stretch = score.stretch;
                    let squeeze = F::new(1.0) / F::max(stretch, F::new(1e-8));
                    let inv_sqrt_d2 = F::new(1.0) / F::sqrt(score.d2);
                    let ux = sites[base + DIRECTION];
                    let uy = sites[base + DIRECTION + 1];
                    let along = (stretch - squeeze) * score.proj;
                    let pos_scale = gz * tau * inv_scale_sq * inv_sqrt_d2;
                    contribution[POSITION] = pos_scale * (squeeze * score.dx + along * ux);
                    contribution[POSITION + 1] = pos_scale * (squeeze * score.dy + along * uy);
                    contribution[LOG_TAU] = -gz * score.value * tau;
                    contribution[RADIUS] = gz * tau * inv_scale;
                    let shape_scale = -gz * tau * F::new(0.5) * inv_sqrt_d2;
                    let proj2 = score.proj * score.proj;
                    contribution[LOG_ANISO] =
                        shape_scale * (stretch * proj2 - squeeze * score.perp2) * inv_scale_sq;
                    let dir_scale = shape_scale * F::new(2.0) * along * inv_scale_sq;
                    contribution[DIRECTION] = dir_scale * score.dx;
                    contribution[DIRECTION + 1] = dir_scale * score.dy;
                    accumulate::<F>(
                        &hash,
                        grads,
                        site,
                        &contribution,
                        SITE_PARAMS,
                        native_atomics,
                    );
                }
            }
        }
    }

    flush::<F>(&hash, grads, SITE_PARAMS, native_atomics);
}

/// Sets every element of `values` to zero (the backward's accumulator, before it runs).
///
/// Launch with one unit per element, 1D.
#[cube(launch)]
pub fn clear_kernel<F: Float>(values: &mut Tensor<F>, #[define(F)] _dtype: ElemType) {
    let index = ABSOLUTE_POS;
    if index < values.len() {
        values[index] = F::new(0.0);
    }
}
