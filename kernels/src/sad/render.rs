//! Forward render: each pixel is the softmax blend of its cell's K candidate sites.

use cubecl::prelude::*;

use super::score::{is_live, site_score};
use super::{COLOR, K, LOG_TAU, SITE_PARAMS};

/// The cell of the candidate grid that pixel (`x`, `y`) reads.
#[cube]
pub fn cell_of_pixel(
    x: usize,
    y: usize,
    width: usize,
    height: usize,
    cand_w: usize,
    cand_h: usize,
) -> usize {
    let cx = usize::min(x * cand_w / width, cand_w - 1);
    let cy = usize::min(y * cand_h / height, cand_h - 1);
    cy * cand_w + cx
}

/// Renders `image` (`[3, height, width]`, planar RGB, not clamped).
///
/// For pixel (x, y) at point q = (x, y) (integer coordinates, as the reference), slot k of its
/// cell holds site i_k; the logit is z_k = −e^{log τ}·s_k, and the colour is
/// Σ_k softmax(z)_k · c_{i_k}, the softmax taken with max subtraction over the live slots only.
/// A pixel without any live candidate is black. Duplicate ids count once per slot.
///
/// Launch with `(TILE, TILE)` cubes over the image.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub fn render_kernel<F: Float>(
    sites: &Tensor<F>,
    candidates: &Tensor<i32>,
    image: &mut Tensor<F>,
    width: usize,
    height: usize,
    cand_w: usize,
    cand_h: usize,
    site_count: usize,
    inv_scale_sq: f32,
    #[define(F)] _dtype: ElemType,
) {
    let x = ABSOLUTE_POS_X as usize;
    let y = ABSOLUTE_POS_Y as usize;
    if x >= width || y >= height {
        terminate!();
    }
    let cell = cell_of_pixel(x, y, width, height, cand_w, cand_h);
    let qx = F::cast_from(x);
    let qy = F::cast_from(y);
    let inv_scale_sq = F::cast_from(inv_scale_sq);

    let mut logits = Array::<F>::new(K);
    let mut live = Array::<bool>::new(K);
    let mut ids = Array::<usize>::new(K);
    let mut any = false;
    let mut max = F::new(0.0);
    #[unroll]
    for k in 0..K {
        let id = candidates[cell * K + k];
        let ok = is_live::<F>(sites, id, site_count);
        live[k] = ok;
        ids[k] = 0;
        logits[k] = F::new(0.0);
        if ok {
            let site = id as usize;
            let tau = F::exp(sites[site * SITE_PARAMS + LOG_TAU]);
            let z = -tau * site_score::<F>(sites, site, qx, qy, inv_scale_sq, false).value;
            ids[k] = site;
            logits[k] = z;
            if !any || z > max {
                max = z;
            }
            any = true;
        }
    }

    let plane = height * width;
    let pixel = y * width + x;
    let mut r = F::new(0.0);
    let mut g = F::new(0.0);
    let mut b = F::new(0.0);
    if any {
        let mut sum = F::new(0.0);
        #[unroll]
        for k in 0..K {
            let mut e = F::new(0.0);
            if live[k] {
                e = F::exp(logits[k] - max);
            }
            logits[k] = e;
            sum += e;
        }
        let inv_sum = F::new(1.0) / F::max(sum, F::new(1e-8));
        #[unroll]
        for k in 0..K {
            let w = logits[k] * inv_sum;
            if live[k] && F::abs(w) <= F::new(f32::MAX) {
                let base = ids[k] * SITE_PARAMS + COLOR;
                r += w * sites[base];
                g += w * sites[base + 1];
                b += w * sites[base + 2];
            }
        }
    }
    image[pixel] = r;
    image[plane + pixel] = g;
    image[2 * plane + pixel] = b;
}
