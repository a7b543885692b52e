//! Backward render: the gradient of a loss with respect to all 10 parameters of every site,
//! given the loss's gradient with respect to the rendered image.

use cubecl::prelude::*;

use super::blend::blend_weights;
use super::render::cell_of_pixel;
use super::score::site_score;
use super::{COLOR, DIRECTION, K, LOG_ANISO, LOG_TAU, POSITION, RADIUS, SITE_PARAMS, TILE};

/// Hash-table slots per tile, one per unit.
const SLOTS: usize = TILE * TILE;
/// An empty hash-table slot.
const FREE: u32 = u32::MAX;
/// Linear probes before a contribution goes straight to global memory.
const PROBES: usize = 8;

/// Accumulates ∂L/∂site into `grads` (`[capacity, 10]`, zeroed by the caller), from `grad_image`
/// (`[3, height, width]`, ∂L/∂image).
///
/// Every pixel recomputes its forward blend, then adds its contribution to each live slot's
/// site. Contributions are first summed per tile in a shared-memory hash table keyed by site id
/// (neighbouring pixels share most of their candidates), and each occupied entry is flushed with
/// one global atomic add per parameter; a contribution that finds no free entry within
/// [`PROBES`] probes goes to global memory directly. Every unit reaches every barrier: pixels
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
    #[define(F)] _dtype: ElemType,
) {
    let unit = UNIT_POS as usize;
    let keys = Shared::<[Atomic<u32>]>::new_slice(SLOTS);
    // f32 sums stored as their bits: WGSL has no float atomics in workgroup memory.
    let sums = Shared::<[Atomic<u32>]>::new_slice(SLOTS * SITE_PARAMS);
    keys[unit].store(FREE);
    #[unroll]
    for p in 0..SITE_PARAMS {
        sums[p * SLOTS + unit].store(0u32);
    }
    sync_cube();

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
                upstream[c] = grad_image[c * plane + pixel];
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
                    accumulate::<F>(&keys, &sums, grads, site, &contribution);
                }
            }
        }
    }

    sync_cube();
    let key = keys[unit].load();
    if key != FREE {
        #[unroll]
        for p in 0..SITE_PARAMS {
            let value = f32::reinterpret(sums[p * SLOTS + unit].load());
            grads[key as usize * SITE_PARAMS + p].fetch_add(F::cast_from(value));
        }
    }
}

/// Adds one site's contribution to the tile's hash table, or to global memory when the table
/// has no room for it.
#[cube]
fn accumulate<F: Float>(
    keys: &Shared<[Atomic<u32>]>,
    sums: &Shared<[Atomic<u32>]>,
    grads: &mut Tensor<Atomic<F>>,
    site: usize,
    contribution: &Array<F>,
) {
    let id = site as u32;
    let start = id * 2654435761u32;
    let mut done = false;
    #[unroll]
    for probe in 0..PROBES {
        if !done {
            let slot = ((start + probe as u32) & (SLOTS as u32 - 1)) as usize;
            // A weak exchange may fail spuriously: look at what the slot holds afterwards.
            let mut holder = keys[slot].compare_exchange_weak(FREE, id);
            if holder == FREE {
                holder = keys[slot].load();
                while holder == FREE {
                    keys[slot].compare_exchange_weak(FREE, id);
                    holder = keys[slot].load();
                }
            }
            if holder == id {
                #[unroll]
                for p in 0..SITE_PARAMS {
                    add_bits(sums, p * SLOTS + slot, f32::cast_from(contribution[p]));
                }
                done = true;
            }
        }
    }
    if !done {
        #[unroll]
        for p in 0..SITE_PARAMS {
            grads[site * SITE_PARAMS + p].fetch_add(contribution[p]);
        }
    }
}

/// Atomically adds `value` to the f32 whose bits `cells[index]` holds (a compare-exchange loop).
#[cube]
fn add_bits(cells: &Shared<[Atomic<u32>]>, index: usize, value: f32) {
    let mut expected = cells[index].load();
    let mut pending = true;
    while pending {
        let sum = u32::reinterpret(f32::reinterpret(expected) + value);
        let seen = cells[index].compare_exchange_weak(expected, sum);
        if seen == expected {
            pending = false;
        } else {
            expected = seen;
        }
    }
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
