//! The anisotropic distance score shared by rendering, gradients and candidate ranking.

use cubecl::prelude::*;

use super::layout::{POSITION, SITE_PARAMS};
use super::record::RecordSite;

/// Intermediate quantities of one site's score at one point, kept for the gradient.
#[derive(CubeType)]
pub struct Score<F: Float> {
    /// `s = √max(D², 1e-8) − r / S`.
    pub value: F,
    /// δ = q − p.
    pub dx: F,
    /// δ's y component.
    pub dy: F,
    /// u·δ.
    pub proj: F,
    /// |δ|² − (u·δ)², floored at 0.
    pub perp2: F,
    /// e^a.
    pub stretch: F,
    /// e^−a (with `guard_stretch`, 1 / max(e^a, 1e-8)).
    pub squeeze: F,
    /// D² floored at 1e-8.
    pub d2: F,
}

/// The score of `site` at point (`qx`, `qy`), with `squeeze` as its e^−a (the record's, or a
/// guarded one); `inv_scale_sq` = 1 / max(W, H)².
#[cube]
pub fn score_of<F: Float>(
    site: &RecordSite,
    squeeze: F,
    qx: F,
    qy: F,
    inv_scale_sq: F,
) -> Score<F> {
    let px = F::cast_from(site.x);
    let py = F::cast_from(site.y);
    let ux = F::cast_from(site.ux);
    let uy = F::cast_from(site.uy);
    let stretch = F::cast_from(site.stretch);
    let radius = F::cast_from(site.radius);
    let zero = F::new(0.0);
    let dx = qx - px;
    let dy = qy - py;
    let diff2 = dx * dx + dy * dy;
    let proj = ux * dx + uy * dy;
    let proj2 = proj * proj;
    let perp2 = F::max(diff2 - proj2, zero);
    let d2 = F::max(
        (stretch * proj2 + squeeze * perp2) * inv_scale_sq,
        F::new(1e-8),
    );
    let inv_scale = F::sqrt(inv_scale_sq);
    Score::<F> {
        value: F::sqrt(d2) - radius * inv_scale,
        dx,
        dy,
        proj,
        perp2,
        stretch,
        squeeze,
        d2,
    }
}

/// Whether `id` names an active site of a buffer of `site_count` sites.
#[cube]
pub fn is_live<F: Float>(sites: &Tensor<F>, id: i32, site_count: usize) -> bool {
    let mut live = false;
    if id >= 0 && (id as usize) < site_count {
        live = sites[id as usize * SITE_PARAMS + POSITION] >= F::new(0.0);
    }
    live
}
