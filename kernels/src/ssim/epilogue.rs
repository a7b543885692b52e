//! SSIM (or its contrast-structure factor) of one pixel from its five blurred statistics, and
//! the partial derivatives with respect to the raw local moments.

use cubecl::prelude::*;

/// The per-pixel quantity the kernels average.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SsimTerm {
    /// SSIM, clamped to [−1, 1] as in fused-ssim.
    #[default]
    Ssim,
    /// The contrast-structure factor (2σxy + C2) / (σx² + σy² + C2) that MS-SSIM uses at its
    /// finer scales (unclamped, as in pytorch-msssim).
    ContrastStructure,
}

/// The value of the chosen term and its derivatives with respect to the raw local moments.
#[derive(CubeType)]
pub struct SsimTerms<F: Float> {
    /// The term's value (SSIM clamped to [−1, 1], or the contrast-structure factor).
    pub value: F,
    /// ∂S/∂E[x²] = ∂S/∂E[y²].
    pub d_var: F,
    /// ∂S/∂E[xy].
    pub d_cov: F,
    /// ∂S/∂μx, through μx and through the σ terms.
    pub d_mu1: F,
    /// ∂S/∂μy, likewise.
    pub d_mu2: F,
}

/// A pixel's [`MOMENTS`](super::MOMENTS) blurred statistics: SSIM needs the two second moments
/// of the images only as their sum.
#[derive(CubeType)]
pub struct LocalMoments<F: Float> {
    /// μx, the blurred img1.
    pub mu1: F,
    /// μy, the blurred img2.
    pub mu2: F,
    /// E\[x² + y²\].
    pub e_sq: F,
    /// E\[xy\].
    pub e12: F,
}

/// Evaluates the term at the pixel of `moments` with fused-ssim's clamps: the variances' sum
/// σx² + σy² at 0 (in value only; each variance is non-negative, so only rounding makes the
/// sum negative) and SSIM to [−1, 1], with all derivatives zero where SSIM was clamped.
#[cube]
pub fn ssim_terms<F: Float>(
    moments: LocalMoments<F>,
    c1: f32,
    c2: f32,
    #[comptime] term: SsimTerm,
) -> SsimTerms<F> {
    let mu1 = moments.mu1;
    let mu2 = moments.mu2;
    let e_sq = moments.e_sq;
    let e12 = moments.e12;
    let zero = F::new(0.0);
    let one = F::new(1.0);
    let two = F::new(2.0);
    let mu_sq = mu1 * mu1 + mu2 * mu2;
    let mu12 = mu1 * mu2;
    // Cancellation can make E[x²] − μ² slightly negative on flat regions (fused-ssim #37).
    let var_sum = F::max(e_sq - mu_sq, zero);
    let cov = e12 - mu12;
    let con_den = var_sum + F::cast_from(c2);
    let con_num = two * cov + F::cast_from(c2);
    let mut terms = SsimTerms::<F> {
        value: zero,
        d_var: zero,
        d_cov: zero,
        d_mu1: zero,
        d_mu2: zero,
    };
    if comptime![term == SsimTerm::ContrastStructure] {
        let inv_con = one / con_den;
        let value = con_num * inv_con;
        let scale = two * inv_con;
        terms.value = value;
        terms.d_var = -value * inv_con;
        terms.d_cov = scale;
        terms.d_mu1 = scale * (mu1 * value - mu2);
        terms.d_mu2 = scale * (mu2 * value - mu1);
    } else {
        let ssim = ssim_and_derivatives::<F>(mu1, mu2, mu_sq, mu12, con_den, con_num, c1);
        terms.value = ssim.value;
        terms.d_var = ssim.d_var;
        terms.d_cov = ssim.d_cov;
        terms.d_mu1 = ssim.d_mu1;
        terms.d_mu2 = ssim.d_mu2;
    }
    terms
}

/// The SSIM branch of [`ssim_terms`], given the contrast-structure numerator and denominator.
#[cube]
fn ssim_and_derivatives<F: Float>(
    mu1: F,
    mu2: F,
    mu_sq_sum: F,
    mu12: F,
    con_den: F,
    con_num: F,
    c1: f32,
) -> SsimTerms<F> {
    let zero = F::new(0.0);
    let one = F::new(1.0);
    let two = F::new(2.0);
    let lum_den = mu_sq_sum + F::cast_from(c1);
    let lum_num = two * mu12 + F::cast_from(c1);
    // One IEEE division instead of three: the others follow from 1 / (A·B).
    let inv_den = one / (lum_den * con_den);
    let inv_lum = con_den * inv_den;
    let inv_con = lum_den * inv_den;
    let raw = lum_num * con_num * inv_den;
    let mut terms = SsimTerms::<F> {
        value: F::min(F::max(raw, -one), one),
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
