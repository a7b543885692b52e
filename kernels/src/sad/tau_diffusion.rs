//! Tau-gradient diffusion: a Jacobi step of a screened Poisson system over the candidate graph,
//! which smooths log τ updates between neighbouring sites.

use cubecl::prelude::*;

use super::score::is_live;
use super::{K, POSITION, SITE_PARAMS};

/// One Jacobi pass: `out[i] = (raw[i] + λ Σ_j input[j]) / (1 + λ·n)` over the n distinct live
/// sites j ≠ i listed in the candidate cell nearest to site i (its position / downscale,
/// rounded). Inactive sites, and every site when λ ≤ 0, copy `input` through.
///
/// `raw[i]` is read at `i·raw_stride + raw_offset` and `input[i]` at `i·input_stride +
/// input_offset`, so both can be a column of the `[capacity, 10]` gradients.
///
/// Launch with one unit per site, 1D.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub fn tau_diffusion_kernel(
    sites: &Tensor<f32>,
    candidates: &Tensor<i32>,
    raw: &Tensor<f32>,
    raw_stride: usize,
    raw_offset: usize,
    input: &Tensor<f32>,
    input_stride: usize,
    input_offset: usize,
    output: &mut Tensor<f32>,
    cand_w: usize,
    cand_h: usize,
    inv_downscale: f32,
    site_count: usize,
    lambda: f32,
) {
    let site = ABSOLUTE_POS;
    if site < site_count {
        let base = site * SITE_PARAMS;
        let px = sites[base + POSITION];
        if px < 0.0 || lambda <= 0.0 {
            output[site] = input[site * input_stride + input_offset];
        } else {
            let cx = home_index(px * inv_downscale, cand_w);
            let cy = home_index(sites[base + POSITION + 1] * inv_downscale, cand_h);
            let cell = cy * cand_w + cx;
            let mut sum = 0.0f32;
            let mut count = 0.0f32;
            #[unroll]
            for k in 0..K {
                let id = candidates[cell * K + k];
                let mut fresh = id != site as i32 && is_live::<f32>(sites, id, site_count);
                #[unroll]
                for j in 0..K {
                    if j < k && candidates[cell * K + j] == id {
                        fresh = false;
                    }
                }
                if fresh {
                    sum += input[id as usize * input_stride + input_offset];
                    count += 1.0;
                }
            }
            let own = raw[site * raw_stride + raw_offset];
            output[site] = (own + lambda * sum) / (1.0 + lambda * count);
        }
    }
}

/// `coordinate` rounded to the nearest cell index in `[0, cells)`.
#[cube]
fn home_index(coordinate: f32, cells: usize) -> usize {
    let rounded = i32::cast_from(coordinate + 0.5);
    i32::clamp(rounded, 0, cells as i32 - 1) as usize
}
