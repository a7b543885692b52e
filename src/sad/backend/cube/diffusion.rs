//! Launches of tau diffusion: each site's log τ gradient spread to its neighbours (Adam, which
//! runs the last pass, is in `adam.rs`; a replayed iteration runs them in `replay.rs`).

use burn::tensor::Shape;
use burn_cubecl::{kernel::into_contiguous, tensor::CubeTensor};
use burn_sad_kernels::sad::{
    K, LOG_TAU, NeighbourSource, SITE_PARAMS, TauNeighbours, tau_diffusion_kernel,
};

use super::clock::Clock;
use super::{capacity, empty_f32, empty_i32, expect_sites_and_lists, ids, site_grid};
use crate::runtime::launch::{expect_dims, launch_kernel};
use crate::sad::RenderGeometry;

/// `passes` (≥ 1) Jacobi passes: the last pass's values and the neighbour lists the first one
/// wrote (`[K + 1, capacity]`, see `tau_diffusion_kernel`), copied from `kept` where they
/// still hold. With `clock`, λ comes from it (see [`Clock`]) and the lists are written over
/// `kept` itself.
pub(super) fn diffuse(
    sites: CubeTensor,
    candidates: CubeTensor,
    grads: CubeTensor,
    kept: Option<CubeTensor>,
    geometry: RenderGeometry,
    (lambda, passes): (f32, u32),
    clock: Option<&Clock>,
) -> (CubeTensor, CubeTensor) {
    let sites = into_contiguous(sites);
    let candidates = ids(candidates);
    let grads = into_contiguous(grads);
    let op = "sad_tau_diffusion";
    expect_sites_and_lists(op, &sites, &candidates, geometry);
    let count_sites = capacity(&sites);
    expect_dims(op, "the gradients", &grads, &[count_sites, SITE_PARAMS]);
    let kept = kept.map(|kept| {
        let kept = into_contiguous(kept);
        expect_dims(op, "the kept neighbour lists", &kept, &[K + 1, count_sites]);
        kept
    });
    let (count, dim) = site_grid(count_sites);
    let list = match (&kept, clock) {
        (Some(kept), Some(_)) => kept.clone(),
        _ => empty_i32(&sites, Shape::new([K + 1, count_sites])),
    };
    let (clock_table, tick, clocked) = Clock::bind(clock, &grads, &list);
    let first = match kept {
        Some(_) => NeighbourSource::Kept,
        None => NeighbourSource::Find,
    };
    // Not read without lists to keep; bound to something all the same.
    let kept = kept.unwrap_or_else(|| candidates.clone());
    // The first pass reads the log τ column of the gradients.
    let mut current = grads.clone();
    let (mut stride, mut offset) = (SITE_PARAMS, LOG_TAU);
    for pass in 0..passes {
        let next = empty_f32(&sites, Shape::new([count_sites]));
        launch_kernel!(tau_diffusion_kernel(
            &sites.client,
            count.clone(),
            dim,
            sites.clone().into_tensor_arg(),
            candidates.clone().into_tensor_arg(),
            kept.clone().into_tensor_arg(),
            list.clone().into_tensor_arg(),
            grads.clone().into_tensor_arg(),
            SITE_PARAMS,
            LOG_TAU,
            current.into_tensor_arg(),
            next.clone().into_tensor_arg(),
            tau_neighbours(geometry, stride, offset, lambda).launch_arg(),
            count_sites,
            clock_table.clone().into_tensor_arg(),
            tick.clone().into_tensor_arg(),
            if pass == 0 {
                first
            } else {
                NeighbourSource::List
            },
            clocked,
        ));
        current = next;
        (stride, offset) = (1, 0);
    }
    (current, list)
}

pub(super) fn tau_neighbours(
    geometry: RenderGeometry,
    input_stride: usize,
    input_offset: usize,
    lambda: f32,
) -> TauNeighbours {
    TauNeighbours {
        input_stride,
        input_offset,
        cand_w: geometry.cand_w(),
        cand_h: geometry.cand_h(),
        inv_downscale: 1.0 / geometry.downscale.max(1) as f32,
        lambda,
    }
}
