//! Where the sites start: gradient-weighted R2 placement, one site per pixel, or a sites file.

use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_sad_kernels::sad::{K, LOG_TAU, POSITION, RADIUS, SITE_PARAMS};

use super::TargetImage;
use super::constants::TRAINER_CONSTANTS;
use crate::sad::{Candidates, INACTIVE_SITE, RenderGeometry, SiteTable};

/// Attempts per site before the gradient-weighted initialisation gives the slot up.
const MAX_ATTEMPTS: u64 = TRAINER_CONSTANTS.init_max_attempts;
/// Sobel magnitude a position needs, times the gradient alpha.
const GRADIENT_THRESHOLD: f32 = TRAINER_CONSTANTS.init_gradient_threshold;

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
    /// reference's start); gradient-weighted points go to the slots as the reference's kernel
    /// hands them out: each slot draws indices from one shared counter, round by round in slot
    /// order, until its point passes.
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

/// The site the point of index `n` of the R2 sequence gives, if the photo's luma Sobel magnitude
/// there (times the mask) exceeds `threshold`.
fn r2_site(
    target: &TargetImage,
    threshold: f32,
    shape: InitialShape,
    n: u64,
) -> Option<[f32; SITE_PARAMS]> {
    let (u, v) = r2_point(n);
    let (x, y) = (
        u * (target.width - 1) as f32,
        v * (target.height - 1) as f32,
    );
    let (ix, iy) = (x as usize, y as usize);
    let keep = target.mask_at(ix, iy);
    if keep <= 0.0 {
        return None;
    }
    let [gx, gy] = target.sobel(ix, iy);
    let gradient = (gx * gx + gy * gy).sqrt() * keep;
    (gradient > threshold).then(|| {
        let log_tau = shape.log_tau + gradient.powf(0.25) * 2.0;
        site(x, y, target.rgb(ix, iy), log_tau, shape.radius)
    })
}

/// The first `count` points of the R2 sequence (from index `seed`) whose luma Sobel magnitude
/// exceeds the threshold, handed to the site slots as the reference's kernel hands them out
/// ([`in_rounds`]); a slot whose 256 draws all fail is inactive.
fn gradient_weighted(
    target: &TargetImage,
    count: usize,
    alpha: f32,
    shape: InitialShape,
    seed: u64,
) -> Vec<[f32; SITE_PARAMS]> {
    let threshold = GRADIENT_THRESHOLD * alpha;
    in_rounds(count, seed, failed_site(shape), |n| {
        r2_site(target, threshold, shape, n)
    })
}

/// The slots take the points as the reference's kernel assigns them:
/// each slot is a GPU thread that draws indices from one shared atomic counter until a point
/// passes (at most [`MAX_ATTEMPTS`] draws), so the slots still drawing take the next indices
/// together, round after round, in slot order. A slot that accepts in round one holds the point
/// of its own index; the others hold points from far along the sequence, where f32 has
/// saturated it.
fn in_rounds(
    count: usize,
    seed: u64,
    failed: [f32; SITE_PARAMS],
    mut draw: impl FnMut(u64) -> Option<[f32; SITE_PARAMS]>,
) -> Vec<[f32; SITE_PARAMS]> {
    let mut sites = vec![failed; count];
    let mut drawing: Vec<usize> = (0..count).collect();
    let mut next = seed;
    for _ in 0..MAX_ATTEMPTS {
        drawing.retain(|&slot| {
            next += 1;
            match draw(next - 1) {
                Some(point) => {
                    sites[slot] = point;
                    false
                }
                None => true,
            }
        });
        if drawing.is_empty() {
            break;
        }
    }
    sites
}

/// A slot the initialisation could not place: inactive, grey, the initial log τ and radius.
fn failed_site(shape: InitialShape) -> [f32; SITE_PARAMS] {
    let mut failed = INACTIVE_SITE;
    failed[LOG_TAU] = shape.log_tau;
    failed[RADIUS] = shape.radius;
    failed[4..7].fill(0.5);
    failed
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
    fn slots_take_the_passing_points_round_by_round_as_the_reference_threads_do() {
        // Edges in the left third only: most draws fail, so most slots draw several times.
        let (width, height) = (48, 32);
        let mut planar = vec![0.2; 3 * width * height];
        for c in 0..3 {
            for y in 0..height {
                for x in (0..16).step_by(2) {
                    planar[(c * height + y) * width + x] = 0.9;
                }
            }
        }
        let target = TargetImage {
            width,
            height,
            planar,
            mask: None,
        };
        let shape = InitialShape {
            log_tau: 5.0,
            radius: 4.0,
        };
        let count = 200;
        let sites = gradient_weighted(&target, count, 1.0, shape, 0);
        // The same set as the first `count` passing points of the sequence...
        let mut sequential: Vec<[u32; 2]> = (0..)
            .filter_map(|n| r2_site(&target, GRADIENT_THRESHOLD, shape, n))
            .take(count)
            .map(|s| [s[0].to_bits(), s[1].to_bits()])
            .collect();
        let mut placed: Vec<[u32; 2]> = sites
            .iter()
            .map(|s| [s[0].to_bits(), s[1].to_bits()])
            .collect();
        sequential.sort();
        placed.sort();
        assert_eq!(placed, sequential);
        // ...but a slot whose own index passes holds that point.
        let first_round: Vec<bool> = (0..count as u64)
            .map(|n| r2_site(&target, GRADIENT_THRESHOLD, shape, n).is_some())
            .collect();
        assert!(first_round.iter().any(|&p| p) && first_round.iter().any(|&p| !p));
        for (slot, &passed) in first_round.iter().enumerate() {
            if passed {
                assert_eq!(
                    Some(sites[slot]),
                    r2_site(&target, GRADIENT_THRESHOLD, shape, slot as u64)
                );
            }
        }
        // A slot whose first draw failed holds a point drawn after round one (index ≥ count),
        // not the next passing point of the sequence as a sequential hand-out would give it.
        let first_failed = first_round.iter().position(|&p| !p).unwrap();
        let index = (0..)
            .find(|&n| r2_site(&target, GRADIENT_THRESHOLD, shape, n) == Some(sites[first_failed]))
            .unwrap();
        assert!(
            index >= count as u64,
            "slot {first_failed} holds point {index}"
        );
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
