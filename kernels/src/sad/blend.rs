//! A pixel's softmax blend over its cell's candidates, shared by the forward, the backward and
//! the statistics; sites are read from their full records (see [`record`](super::record)).

use cubecl::prelude::*;

use super::grid::PixelGrid;
use super::layout::K;
use super::lists::cell_ids;
use super::record::{RECORD_WORDS, RecordSite, read_colour, read_site};
use super::score::{Score, score_of};

/// The blend weights of one pixel.
#[derive(CubeType)]
pub struct Blend<F: Float> {
    /// softmax(z)_k for live slots, 0 for the others.
    pub weights: Array<F>,
    /// Whether slot k names a live site.
    pub live: Array<bool>,
    /// Site of slot k (0 for dead slots).
    pub ids: Array<usize>,
    /// Whether any slot is live (otherwise the pixel is black).
    pub any: bool,
    /// The largest logit over the live slots: w_k = e^{z_k − max} · `inv_sum`, so a slot's
    /// weight can be formed again from its logit alone (see [`slot_weight`]).
    pub max: F,
    /// 1 / max(Σ_k e^{z_k − max}, 1e-8).
    pub inv_sum: F,
}

/// The blend at point (`qx`, `qy`) over the `K` candidates of `cell` of `grid`: logits
/// z_k = −τ·s_k, softmax with max subtraction over the live slots, weights
/// = e_k · (1 / max(Σe, 1e-8)).
/// `guard_stretch` as in [`slot_score`].
#[cube]
pub fn blend_weights<F: Float, N: Size>(
    records: &Tensor<Vector<u32, N>>,
    candidates: &Tensor<Vector<i32, N>>,
    grid: &PixelGrid,
    cell: usize,
    qx: F,
    qy: F,
    #[comptime] guard_stretch: bool,
) -> Blend<F> {
    let site_count = grid.site_count;
    let inv_scale_sq = F::cast_from(grid.inv_scale_sq);
    let mut weights = Array::<F>::new(K);
    let mut live = Array::<bool>::new(K);
    let mut ids = Array::<usize>::new(K);
    let mut any = false;
    let mut max = F::new(0.0);
    let slots = cell_ids::<N>(candidates, cell);
    #[unroll]
    for k in 0..K {
        let id = slots[k];
        let site = read_site::<N>(records, id, site_count, RECORD_WORDS);
        live[k] = site.live;
        ids[k] = 0;
        weights[k] = F::new(0.0);
        if site.live {
            let z = slot_score::<F>(&site, qx, qy, inv_scale_sq, guard_stretch).logit;
            ids[k] = id as usize;
            weights[k] = z;
            if !any || z > max {
                max = z;
            }
            any = true;
        }
    }
    let mut inv_sum = F::new(0.0);
    if any {
        let mut sum = F::new(0.0);
        #[unroll]
        for k in 0..K {
            let mut e = F::new(0.0);
            if live[k] {
                e = F::exp(weights[k] - max);
            }
            weights[k] = e;
            sum += e;
        }
        inv_sum = F::new(1.0) / F::max(sum, F::new(1e-8));
        #[unroll]
        for k in 0..K {
            weights[k] *= inv_sum;
        }
    }
    Blend::<F> {
        weights,
        live,
        ids,
        any,
        max,
        inv_sum,
    }
}

/// A live site's score at one point, with τ and the logit z = −τ·s it gives there.
#[derive(CubeType)]
pub struct SlotScore<F: Float> {
    /// τ = e^{log τ}.
    pub tau: F,
    /// The score s and its parts.
    pub score: Score<F>,
    /// z = −τ·s.
    pub logit: F,
}

/// [`SlotScore`] of a live `site` at point (`qx`, `qy`). `guard_stretch` floors e^a at 1e-8
/// before inverting it, as the reference's gradient pass does (its render pass does not); the
/// record's e^−a is 1 / e^a, the same value wherever e^a ≥ 1e-8. The one place a slot's logit is
/// formed, so a weight formed again (see [`slot_weight`]) is the blend's, bit for bit.
#[cube]
pub fn slot_score<F: Float>(
    site: &RecordSite,
    qx: F,
    qy: F,
    inv_scale_sq: F,
    #[comptime] guard_stretch: bool,
) -> SlotScore<F> {
    let stretch = F::cast_from(site.stretch);
    let mut squeeze = F::cast_from(site.squeeze);
    if comptime![guard_stretch] {
        if stretch < F::new(1e-8) {
            squeeze = F::new(1.0) / F::new(1e-8);
        }
    }
    let tau = F::cast_from(site.tau);
    let score = score_of::<F>(site, squeeze, qx, qy, inv_scale_sq);
    let logit = -tau * score.value;
    SlotScore::<F> { tau, score, logit }
}

/// The weight of a live slot of logit `z` in `blend`, formed exactly as [`blend_weights`] forms
/// it.
#[cube]
pub fn slot_weight<F: Float>(blend: &Blend<F>, z: F) -> F {
    F::exp(z - blend.max) * blend.inv_sum
}

/// The pixel's colour `[r, g, b]`: Σ_k w_k · (colour of slot k's site) over the live slots, each
/// channel summed in slot order.
#[cube]
pub fn blended_colour<F: Float, N: Size>(
    records: &Tensor<Vector<u32, N>>,
    blend: &Blend<F>,
) -> Array<F> {
    let mut sum = Array::<F>::new(3usize);
    #[unroll]
    for c in 0..3 {
        sum[c] = F::new(0.0);
    }
    #[unroll]
    for k in 0..K {
        if blend.live[k] {
            let colour = read_colour::<F, N>(records, blend.ids[k]);
            #[unroll]
            for c in 0..3 {
                sum[c] += blend.weights[k] * colour[c];
            }
        }
    }
    sum
}
