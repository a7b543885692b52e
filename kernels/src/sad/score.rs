//! The anisotropic distance score shared by rendering, gradients and candidate ranking.

use cubecl::prelude::*;

use super::{POSITION, SITE_PARAMS};

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

/// The score at point (`qx`, `qy`) of a site at (`px`, `py`) with direction (`ux`, `uy`), e^a
/// `stretch`, e^−a `squeeze` and radius `radius` (as a site record holds them, see
/// [`RecordSite`](super::record::RecordSite)); `inv_scale_sq` = 1 / max(W, H)².
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn score_of<F: Float>(
    px: F,
    py: F,
    ux: F,
    uy: F,
    stretch: F,
    squeeze: F,
    radius: F,
    qx: F,
    qy: F,
    inv_scale_sq: F,
) -> Score<F> {
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
