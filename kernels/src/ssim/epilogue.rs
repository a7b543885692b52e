//! SSIM of one pixel from its five blurred statistics, and its partial derivatives.

use cubecl::prelude::*;

/// SSIM and the derivatives of the clamped SSIM with respect to the raw local moments.
#[derive(CubeType)]
pub struct SsimTerms<F: Float> {
    /// SSIM clamped to [−1, 1].
    pub ssim: F,
    /// ∂S/∂E[x²] = ∂S/∂E[y²].
    pub d_var: F,
    /// ∂S/∂E[xy].
    pub d_cov: F,
    /// ∂S/∂μx, through μx and through the σ terms.
    pub d_mu1: F,
    /// ∂S/∂μy, likewise.
    pub d_mu2: F,
}

/// Evaluates SSIM with fused-ssim's clamps: the variances at 0 (in value only) and the result to
/// [−1, 1], with all derivatives zero where the result was clamped.
#[cube]
pub fn ssim_terms<F: Float>(
    mu1: F,
    mu2: F,
    e11: F,
    e22: F,
    e12: F,
    c1: f32,
    c2: f32,
) -> SsimTerms<F> {
    let zero = F::new(0.0);
    let one = F::new(1.0);
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
    // One IEEE division instead of three: the others follow from 1 / (A·B).
    let inv_den = one / (lum_den * con_den);
    let inv_lum = con_den * inv_den;
    let inv_con = lum_den * inv_den;
    let raw = lum_num * con_num * inv_den;
    let mut terms = SsimTerms::<F> {
        ssim: F::min(F::max(raw, -one), one),
        d_var: zero,
        d_cov: zero,
        d_mu1: zero,
        d_mu2: zero,
    };
    if raw <= one && raw >= -one {
        let shared = two * (con_num - lum_num) * inv_den;
        let spread = two * raw * (inv_lum - inv_con);
        terms.d_var = -raw * inv_con;
        terms.d_cov = two * lum_num * inv_den;
        terms.d_mu1 = mu2 * shared - mu1 * spread;
        terms.d_mu2 = mu1 * shared - mu2 * spread;
    }
    terms
}
