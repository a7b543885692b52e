//! A pixel's softmax blend over its cell's candidates, shared by the forward and the backward.

use cubecl::prelude::*;

use super::score::{is_live, site_score};
use super::{COLOR, K, LOG_TAU, SITE_PARAMS};

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
    /// τ_k = e^{log τ} of slot k's site (live slots only).
    pub tau: Array<F>,
    /// The score parts of slot k's site at the pixel (live slots only), kept so the backward
    /// does not score each slot a second time.
    pub score: SlotScores<F>,
}

/// [`Score`](super::score::Score) fields per slot.
#[derive(CubeType)]
pub struct SlotScores<F: Float> {
    /// s_k.
    pub value: Array<F>,
    /// δ_k x.
    pub dx: Array<F>,
    /// δ_k y.
    pub dy: Array<F>,
    /// u·δ_k.
    pub proj: Array<F>,
    /// |δ_k|² − (u·δ_k)², floored at 0.
    pub perp2: Array<F>,
    /// e^a.
    pub stretch: Array<F>,
    /// D² floored at 1e-8.
    pub d2: Array<F>,
}

/// The blend at point (`qx`, `qy`) over the `K` candidates of `cell`: logits z_k = −τ·s_k,
/// softmax with max subtraction over the live slots, weights = e_k · (1 / max(Σe, 1e-8)).
/// `guard_stretch` as in [`site_score`].
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn blend_weights<F: Float>(
    sites: &Tensor<F>,
    candidates: &Tensor<i32>,
    cell: usize,
    site_count: usize,
    qx: F,
    qy: F,
    inv_scale_sq: F,
    #[comptime] guard_stretch: bool,
) -> Blend<F> {
    let mut weights = Array::<F>::new(K);
    let mut live = Array::<bool>::new(K);
    let mut ids = Array::<usize>::new(K);
    let mut any = false;
    let mut max = F::new(0.0);
    let mut taus = Array::<F>::new(K);
    let mut value = Array::<F>::new(K);
    let mut dx = Array::<F>::new(K);
    let mut dy = Array::<F>::new(K);
    let mut proj = Array::<F>::new(K);
    let mut perp2 = Array::<F>::new(K);
    let mut stretch = Array::<F>::new(K);
    let mut d2 = Array::<F>::new(K);
    #[unroll]
    for k in 0..K {
        let id = candidates[cell * K + k];
        let ok = is_live::<F>(sites, id, site_count);
        live[k] = ok;
        ids[k] = 0;
        weights[k] = F::new(0.0);
        taus[k] = F::new(0.0);
        value[k] = F::new(0.0);
        dx[k] = F::new(0.0);
        dy[k] = F::new(0.0);
        proj[k] = F::new(0.0);
        perp2[k] = F::new(0.0);
        stretch[k] = F::new(1.0);
        d2[k] = F::new(1.0);
        if ok {
            let site = id as usize;
            let tau = F::exp(sites[site * SITE_PARAMS + LOG_TAU]);
            let score = site_score::<F>(sites, site, qx, qy, inv_scale_sq, guard_stretch);
            let z = -tau * score.value;
            taus[k] = tau;
            value[k] = score.value;
            dx[k] = score.dx;
            dy[k] = score.dy;
            proj[k] = score.proj;
            perp2[k] = score.perp2;
            stretch[k] = score.stretch;
            d2[k] = score.d2;
            ids[k] = site;
            weights[k] = z;
            if !any || z > max {
                max = z;
            }
            any = true;
        }
    }
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
        let inv_sum = F::new(1.0) / F::max(sum, F::new(1e-8));
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
        tau: taus,
        score: SlotScores::<F> {
            value,
            dx,
            dy,
            proj,
            perp2,
            stretch,
            d2,
        },
    }
}

/// Channel `c` of the pixel's colour: Σ_k w_k · (colour c of slot k's site) over the live slots.
#[cube]
pub fn blended_channel<F: Float>(sites: &Tensor<F>, blend: &Blend<F>, c: usize) -> F {
    let mut sum = F::new(0.0);
    #[unroll]
    for k in 0..K {
        if blend.live[k] {
            sum += blend.weights[k] * sites[blend.ids[k] * SITE_PARAMS + COLOR + c];
        }
    }
    sum
}
