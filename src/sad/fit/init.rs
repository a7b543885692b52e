//! Where the sites start: gradient-weighted R2 placement, one site per pixel, or a sites file.

use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_sad_kernels::sad::{K, LOG_TAU, POSITION, RADIUS, SITE_PARAMS};

use super::TargetImage;
use crate::sad::{Candidates, INACTIVE_SITE, RenderGeometry, SiteTable};

/// Attempts per site before the gradient-weighted initialisation gives the slot up.
const MAX_ATTEMPTS: u64 = 256;
/// Sobel magnitude a position needs, times the gradient alpha.
const GRADIENT_THRESHOLD: f32 = 0.01;

/// How the sites of a fit start.
#[derive(Clone, Debug, PartialEq)]
pub enum Initialisation {
    /// `sites` sites on the R2 low-discrepancy sequence, keeping only points whose luma Sobel
    /// magnitude exceeds 0.01·`alpha` (flat regions start empty); log τ grows with the gradient.
    GradientWeighted {
        /// Sites to place.
        sites: usize,
        /// Multiplier of the 0.01 gradient threshold.
        alpha: f32,
    },
    /// One site at every pixel, with its colour.
    PerPixel,
    /// Sites read from a file, positions rescaled to the image if it was fitted at another size.
    FromSites(SiteTable),
}

/// Site parameters every initialisation shares.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InitialShape {
    /// log τ of a new site (the gradient-weighted mode adds 2·|∇|^¼).
    pub log_tau: f32,
    /// Radius of a new site, in pixels.
    pub radius: f32,
}

fn site(x: f32, y: f32, rgb: [f32; 3], log_tau: f32, radius: f32) -> [f32; SITE_PARAMS] {
    [x, y, log_tau, radius, rgb[0], rgb[1], rgb[2], 1.0, 0.0, 0.0]
}

impl Initialisation {
    /// The initial sites for `target`. `seed` shifts where the R2 sequence starts (0 = the
    /// reference's start).
    pub fn sites(&self, target: &TargetImage, shape: InitialShape, seed: u64) -> SiteTable {
        let (width, height) = (target.width, target.height);
        let sites = match self {
            Initialisation::GradientWeighted { sites, alpha } => {
                gradient_weighted(target, *sites, *alpha, shape, seed)
            }
            Initialisation::PerPixel => (0..height)
                .flat_map(|y| (0..width).map(move |x| (x, y)))
                .map(|(x, y)| {
                    site(
                        x as f32,
                        y as f32,
                        target.rgb(x, y),
                        shape.log_tau,
                        shape.radius,
                    )
                })
                .collect(),
            Initialisation::FromSites(table) => {
                let scale = |size: usize, own: usize| {
                    if size > 0 && size != own {
                        own as f32 / size as f32
                    } else {
                        1.0
                    }
                };
                let (sx, sy) = (scale(table.width, width), scale(table.height, height));
                table
                    .sites
                    .iter()
                    .map(|s| {
                        let mut s = *s;
                        if s[POSITION] >= 0.0 {
                            s[POSITION] *= sx;
                            s[POSITION + 1] *= sy;
                        }
                        s
                    })
                    .collect()
            }
        };
        SiteTable {
            width,
            height,
            sites,
        }
    }
}

/// The point of index `n` of the R2 sequence, computed in f32 as the reference does (with its
/// fused multiply-add), so it saturates the same way for large n.
fn r2_point(n: u64) -> (f32, f32) {
    const PLASTIC: f32 = 1.324_717_9;
    let a1 = 1.0 / PLASTIC;
    let a2 = 1.0 / (PLASTIC * PLASTIC);
    let n = n as u32 as f32;
    (n.mul_add(a1, 0.5) % 1.0, n.mul_add(a2, 0.5) % 1.0)
}

fn gradient_weighted(
    target: &TargetImage,
    count: usize,
    alpha: f32,
    shape: InitialShape,
    seed: u64,
) -> Vec<[f32; SITE_PARAMS]> {
    let threshold = GRADIENT_THRESHOLD * alpha;
    let (w1, h1) = ((target.width - 1) as f32, (target.height - 1) as f32);
    let mut next = seed;
    (0..count)
        .map(|_| {
            for _ in 0..MAX_ATTEMPTS {
                let (u, v) = r2_point(next);
                next += 1;
                let (x, y) = (u * w1, v * h1);
                let (ix, iy) = (x as usize, y as usize);
                let keep = target.mask_at(ix, iy);
                if keep <= 0.0 {
                    continue;
                }
                let [gx, gy] = target.sobel(ix, iy);
                let gradient = (gx * gx + gy * gy).sqrt() * keep;
                if gradient > threshold {
                    let log_tau = shape.log_tau + gradient.powf(0.25) * 2.0;
                    return site(x, y, target.rgb(ix, iy), log_tau, shape.radius);
                }
            }
            let mut failed = INACTIVE_SITE;
            failed[LOG_TAU] = shape.log_tau;
            failed[RADIUS] = shape.radius;
            failed[4..7].fill(0.5);
            failed
        })
        .collect()
}

/// The reference's lists for one site per pixel: the pixel's own site, then its 7 clamped
/// neighbours (−1,0), (1,0), (0,−1), (0,1), (−1,−1), (1,−1), (−1,1).
pub(super) fn per_pixel_candidates(geometry: RenderGeometry, device: &Device) -> Candidates {
    const OFFSETS: [(i64, i64); K] = [
        (0, 0),
        (-1, 0),
        (1, 0),
        (0, -1),
        (0, 1),
        (-1, -1),
        (1, -1),
        (-1, 1),
    ];
    let (w, h) = (geometry.width as i64, geometry.height as i64);
    let mut ids = Vec::with_capacity(geometry.cells() * K);
    for y in 0..h {
        for x in 0..w {
            for (dx, dy) in OFFSETS {
                let (nx, ny) = ((x + dx).clamp(0, w - 1), (y + dy).clamp(0, h - 1));
                ids.push((ny * w + nx) as i32);
            }
        }
    }
    let ids = Tensor::<2, Int>::from_data(TensorData::new(ids, [geometry.cells(), K]), device);
    Candidates::from_ids(ids, geometry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r2_starts_at_the_centre_and_saturates_in_f32() {
        assert_eq!(r2_point(0), (0.5, 0.5));
        let distinct: std::collections::HashSet<u32> = (300_000..300_200)
            .map(|n| r2_point(n).0.to_bits())
            .collect();
        assert!(distinct.len() < 200, "f32 R2 repeats values for large n");
    }

    #[test]
    fn flat_images_get_no_gradient_sites() {
        let flat = TargetImage {
            width: 8,
            height: 8,
            planar: vec![0.5; 3 * 64],
            mask: None,
        };
        let shape = InitialShape {
            log_tau: 5.0,
            radius: 4.0,
        };
        let table = Initialisation::GradientWeighted {
            sites: 4,
            alpha: 1.0,
        }
        .sites(&flat, shape, 0);
        assert_eq!(table.active(), 0);
        assert_eq!(table.sites.len(), 4);
    }
}
