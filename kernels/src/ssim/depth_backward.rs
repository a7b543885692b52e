//! Depth stage of the 3D SSIM backward: blurs the XY-blurred partial maps along Z and combines
//! them into the input gradients.

use cubecl::prelude::*;

use super::args::{DepthBackwardConfig, DepthBackwardSources};
use super::depth_walk::depth_column;
use super::load::{InputEncoding, load_input};
use super::ring::blur_ring;
use super::{COVARIANCE_SLOT, SIGMA_SQ_SLOT};

/// Computes the input gradients of 3D SSIM for one block (layout as in the depth forward), from
/// `sources`, which holds the volumes, the blurred maps, the upstream gradient and the scalars
/// `args`:
///
/// - `blurred`: the `[partial_count, volumes·depth·height·width]` stack of XY-blurred partial
///   maps (the 2D backward kernel's `blur_only` output over all slices).
/// - `upstream[volume · args.upstream_stride]`: the upstream gradient of this volume's value
///   (stride 0 when the forward summed all volumes into one value).
/// - With `config.map_upstream`, the per-voxel upstream gradient already weights `blurred` (the
///   slice stage staged the partial maps times it), and `upstream` is not read.
/// - `img1`, `img2`: the volumes in their storage types, read as `F` (see the 2D forward).
/// - `grads`: `[grad_count, volumes·depth·height·width]` of `G`, img1's gradient first.
#[cube(launch)]
pub fn ssim3d_depth_backward_kernel<F: Float, I1: Numeric, I2: Numeric, G: Float>(
    sources: &DepthBackwardSources<F, I1, I2>,
    grads: &mut Tensor<G>,
    #[comptime] config: DepthBackwardConfig,
    #[define(F, I1, I2, G)] _dtypes: [ElemType; 4],
) {
    let radius = comptime![config.radius];
    let sigma_bits = comptime![config.sigma_bits];
    let layout = comptime![config.layout];
    let targets = comptime![config.targets];
    let map_upstream = comptime![config.map_upstream];
    let img2_encoding = comptime![config.img2_encoding];
    let args = &sources.args;
    let depth = args.depth;
    let taps_len = comptime![2 * radius + 1];
    let maps = comptime![targets.partial_count()];
    let at = depth_column(args, layout);
    let total = sources.img1.len();
    let mut scale = F::cast_from(args.ssim_scale);
    if comptime![!map_upstream] {
        scale *= sources.upstream[at.volume * args.upstream_stride];
    }
    let two = F::new(2.0);

    let mut ring = Array::<F>::new(comptime![maps * taps_len]);
    #[unroll]
    for r in 0..comptime![layout.depth_chunk + 2 * radius] {
        let zr = at.z0 + r;
        let loaded = at.in_slice && zr >= radius && zr < depth + radius;
        let slot = comptime![(r % taps_len) * maps];
        #[unroll]
        for m in 0..maps {
            let mut v = F::new(0.0);
            if loaded {
                v = sources.blurred[m * total + at.column + (zr - radius) * at.slice];
            }
            ring[slot + m] = v;
        }

        if comptime![r >= 2 * radius] {
            let out = comptime![r - 2 * radius];
            let v = blur_ring::<F>(&ring, out, radius, sigma_bits, maps);
            let z = at.z0 + out;
            if at.in_slice && z < depth {
                let idx = at.column + z * at.slice;
                let a = load_input::<F, I1>(&sources.img1, idx, InputEncoding::Float);
                let b = load_input::<F, I2>(&sources.img2, idx, img2_encoding);
                let g_var = v[comptime![SIGMA_SQ_SLOT]];
                let g_cov = v[comptime![COVARIANCE_SLOT]];
                if comptime![targets.img1] {
                    let g_mu = v[comptime![targets.mu1_slot()]];
                    grads[idx] = G::cast_from(scale * (g_mu + two * a * g_var + b * g_cov));
                }
                if comptime![targets.img2] {
                    let g_mu = v[comptime![targets.mu2_slot()]];
                    let slot = comptime![targets.img1 as usize];
                    grads[slot * total + idx] =
                        G::cast_from(scale * (g_mu + two * b * g_var + a * g_cov));
                }
            }
        }
    }
}
