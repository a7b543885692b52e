//! Depth stage of the 3D SSIM forward: blurs the XY-blurred statistics along Z, evaluates SSIM
//! and reduces it per cube, and (in training) stores the partial derivatives.

use cubecl::prelude::*;

use super::args::{DepthArgs, DepthForwardConfig};
use super::depth_walk::depth_column;
use super::epilogue::{LocalMoments, ssim_terms};
use super::reduce::write_tile_sum;
use super::ring::blur_ring;
use super::{COVARIANCE_SLOT, MOMENTS, SIGMA_SQ_SLOT};

/// Computes 3D SSIM over one block of `COLUMNS × layout.rows` voxel columns and
/// `layout.depth_chunk` slices of one volume.
///
/// - `moments`: the `[MOMENTS, volumes·depth·height·width]` stack of XY-blurred statistics
///   (the 2D forward kernel's [`ForwardOutput::Moments`](crate::ssim::ForwardOutput::Moments) over all
///   slices).
/// - `tile_sums[cube]`: `args.ssim_scale` times the sum of the `config.term` map over the
///   block's voxels inside the map region (the whole volume, or its `args.crop`-voxel interior
///   for valid padding).
/// - `partials`: as in the 2D forward (stored as `P`), per voxel, with `config.targets =
///   Some(..)`.
/// - With `config.write_map`, `tile_sums` is instead the map, `[volumes·depth·height·width]`:
///   `ssim_scale · term` inside the map region, zero elsewhere, nothing reduced.
///
/// Each unit owns one voxel column and walks its depth chunk, keeping the last
/// `2·radius + 1` slices' statistics in a register ring. Launch with a
/// `(COLUMNS, layout.rows)` cube and a `(⌈W / COLUMNS⌉, ⌈H / layout.rows⌉, volumes · chunks)`
/// grid, `chunks = ⌈D / layout.depth_chunk⌉`.
#[cube(launch)]
pub fn ssim3d_depth_forward_kernel<F: Float, P: Float>(
    moments: &Tensor<F>,
    tile_sums: &mut Tensor<F>,
    partials: &mut Tensor<P>,
    args: DepthArgs,
    #[comptime] config: DepthForwardConfig,
    #[define(F, P)] _dtypes: [ElemType; 2],
) {
    let radius = comptime![config.radius];
    let sigma_bits = comptime![config.sigma_bits];
    let layout = comptime![config.layout];
    let targets = comptime![config.targets];
    let write_map = comptime![config.write_map];
    let depth = args.depth;
    let crop = args.crop;
    let ssim_scale = args.ssim_scale;
    let taps_len = comptime![2 * radius + 1];
    let at = depth_column(&args, layout);
    let total = moments.len() / MOMENTS;
    let in_slice_map = at.in_slice
        && at.x >= crop
        && at.y >= crop
        && at.x + crop < args.width
        && at.y + crop < args.height;

    let mut tile_sum = F::new(0.0);
    let mut ring = Array::<F>::new(comptime![MOMENTS * taps_len]);
    #[unroll]
    for r in 0..comptime![layout.depth_chunk + 2 * radius] {
        // Slice `z0 + r − radius`, zero outside the volume.
        let zr = at.z0 + r;
        let loaded = at.in_slice && zr >= radius && zr < depth + radius;
        let slot = comptime![(r % taps_len) * MOMENTS];
        #[unroll]
        for s in 0..MOMENTS {
            let mut v = F::new(0.0);
            if loaded {
                v = moments[s * total + at.column + (zr - radius) * at.slice];
            }
            ring[slot + s] = v;
        }

        if comptime![r >= 2 * radius] {
            let out = comptime![r - 2 * radius];
            let v = blur_ring::<F>(&ring, out, radius, sigma_bits, MOMENTS);
            let z = at.z0 + out;
            let in_volume = at.in_slice && z < depth;
            let in_map = in_slice_map && z >= crop && z + crop < depth;
            let moments = LocalMoments::<F> {
                mu1: v[0],
                mu2: v[1],
                e_sq: v[2],
                e12: v[3],
            };
            let terms = ssim_terms::<F>(moments, args.c1, args.c2, comptime![config.term]);
            if comptime![write_map] {
                if in_volume {
                    let keep = F::cast_from(in_map);
                    tile_sums[at.column + z * at.slice] =
                        keep * F::cast_from(ssim_scale) * terms.value;
                }
            } else {
                if in_map {
                    tile_sum += F::cast_from(ssim_scale) * terms.value;
                }
            }
            if comptime![targets.is_some()] {
                let targets = comptime![targets.unwrap()];
                if in_volume {
                    let idx = at.column + z * at.slice;
                    let keep = F::cast_from(in_map);
                    partials[comptime![SIGMA_SQ_SLOT] * total + idx] =
                        P::cast_from(keep * terms.d_var);
                    partials[comptime![COVARIANCE_SLOT] * total + idx] =
                        P::cast_from(keep * terms.d_cov);
                    if comptime![targets.img1] {
                        partials[comptime![targets.mu1_slot()] * total + idx] =
                            P::cast_from(keep * terms.d_mu1);
                    }
                    if comptime![targets.img2] {
                        partials[comptime![targets.mu2_slot()] * total + idx] =
                            P::cast_from(keep * terms.d_mu2);
                    }
                }
            }
        }
    }

    if comptime![!write_map] {
        let mut scratch = Shared::<[F]>::new_slice(comptime![layout.units()]);
        write_tile_sum::<F>(&mut scratch, tile_sums, tile_sum, comptime![layout.units()]);
    }
}
