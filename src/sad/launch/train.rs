//! Launches of the training-step kernels: per-site statistics, tau diffusion, Adam.

use burn::backend::cubecl::dtype_to_storage_type;
use burn::backend::ops::IntTensorOps;
use burn::tensor::{IntDType, Shape};
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};
use burn_sad_kernels::sad::{
    ADAM_CUBE, ADAM_STATE, AdamStep, AdamStepLaunch, K, LOG_TAU, NeighbourSource, SITE_PARAMS,
    StatisticsKind, TauNeighbours, TauNeighboursLaunch, adam_kernel, site_statistics_kernel,
    tau_diffusion_kernel,
};

use super::candidates::{record_vector_size, site_records_and_zeros};
use super::replay::Clock;
use super::{
    capacity, empty_f32, empty_i32, expect_sites_and_lists, ids, image_grid, site_grid, table_sums,
};
use crate::launch::{expect_dims, expect_len_at_least, expect_rows_of, launch_kernel};
use crate::sad::RenderGeometry;
use cubecl::{CubeCount, CubeDim};

pub(super) fn site_statistics(
    sites: CubeTensor,
    candidates: CubeTensor,
    target: CubeTensor,
    geometry: RenderGeometry,
    kind: StatisticsKind,
) -> CubeTensor {
    let sites = into_contiguous(sites);
    let candidates = ids(candidates);
    let target = into_contiguous(target);
    let op = "sad_site_statistics";
    expect_sites_and_lists(op, &sites, &candidates, geometry);
    expect_dims(
        op,
        "the target",
        &target,
        &[3, geometry.height, geometry.width],
    );
    let (records, stats) = site_records_and_zeros(&sites, kind.channels());
    let (count, dim) = image_grid(geometry);
    launch_kernel!(site_statistics_kernel(
        &sites.client,
        count,
        dim,
        record_vector_size(),
        records.into_tensor_arg(),
        candidates.into_tensor_arg(),
        target.into_tensor_arg(),
        stats.clone().into_tensor_arg(),
        geometry.width,
        geometry.height,
        geometry.cand_w(),
        geometry.cand_h(),
        capacity(&sites),
        geometry.inv_scale_sq(),
        kind,
        table_sums(&sites, false),
        dtype_to_storage_type(sites.dtype),
    ));
    stats
}

pub(super) fn tau_diffusion(
    sites: CubeTensor,
    candidates: CubeTensor,
    grads: CubeTensor,
    geometry: RenderGeometry,
    lambda: f32,
    passes: u32,
) -> CubeTensor {
    // Zero passes is one pass with λ = 0, which copies the log τ column out.
    let (passes, lambda) = if passes == 0 {
        (1, 0.0)
    } else {
        (passes, lambda)
    };
    diffuse(
        sites,
        candidates,
        grads,
        None,
        geometry,
        (lambda, passes),
        None,
    )
    .0
}

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
            neighbours_launch(tau_neighbours(geometry, stride, offset, lambda)),
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

fn neighbours_launch(neighbours: TauNeighbours) -> TauNeighboursLaunch {
    TauNeighboursLaunch::new(
        neighbours.input_stride,
        neighbours.input_offset,
        neighbours.cand_w,
        neighbours.cand_h,
        neighbours.inv_downscale,
        neighbours.lambda,
    )
}

pub(super) fn adam_step(
    sites: CubeTensor,
    grads: CubeTensor,
    tau_grads: CubeTensor,
    state: CubeTensor,
    step: AdamStep,
) -> (CubeTensor, CubeTensor) {
    adam_with_tau(sites, grads, tau_grads, (1, 0), state, step)
}

/// The Adam step with its log τ gradient read as it is from `tau` (site i's at
/// `i·stride + offset`): the kernel's last Jacobi pass at λ = 0, which reads no neighbour list.
fn adam_with_tau(
    sites: CubeTensor,
    grads: CubeTensor,
    tau: CubeTensor,
    (input_stride, input_offset): (usize, usize),
    state: CubeTensor,
    step: AdamStep,
) -> (CubeTensor, CubeTensor) {
    let unused = empty_i32(&sites, Shape::new([1]));
    let copy = TauNeighbours {
        input_stride,
        input_offset,
        cand_w: 1,
        cand_h: 1,
        inv_downscale: 1.0,
        lambda: 0.0,
    };
    launch_adam(sites, grads, tau, unused, state, step, copy, None)
}

/// Tau diffusion and the Adam step that uses it, with the last Jacobi pass run inside the
/// Adam kernel over the neighbour lists the first pass wrote (one launch fewer per iteration
/// than [`tau_diffusion`] then [`adam_step`]); the first pass copies the `kept` lists of an
/// earlier step where they still hold. Returns the stepped sites and state and the lists.
pub(super) fn diffuse_and_step(
    sites: CubeTensor,
    candidates: CubeTensor,
    grads: CubeTensor,
    state: CubeTensor,
    kept: Option<CubeTensor>,
    step: AdamStep,
    (geometry, lambda, passes): (RenderGeometry, f32, u32),
) -> (CubeTensor, CubeTensor, CubeTensor) {
    let grads = into_contiguous(grads);
    match passes {
        // No diffusion: the log τ column as it is, and lists that no step can keep.
        0 => {
            let lists = CubeBackend::int_full(
                Shape::new([K + 1, capacity(&sites)]),
                (-1i32).into(),
                &sites.device,
                IntDType::I32,
            );
            let tau = grads.clone();
            let (sites, state) =
                adam_with_tau(sites, grads, tau, (SITE_PARAMS, LOG_TAU), state, step);
            (sites, state, lists)
        }
        // One pass: it has to find the neighbours, so it runs on its own.
        1 => {
            let (tau, lists) = diffuse(
                sites.clone(),
                candidates,
                grads.clone(),
                kept,
                geometry,
                (lambda, 1),
                None,
            );
            let (sites, state) = adam_with_tau(sites, grads, tau, (1, 0), state, step);
            (sites, state, lists)
        }
        _ => {
            let (before, lists) = diffuse(
                sites.clone(),
                candidates,
                grads.clone(),
                kept,
                geometry,
                (lambda, passes - 1),
                None,
            );
            let last = tau_neighbours(geometry, 1, 0, lambda);
            let (sites, state) =
                launch_adam(sites, grads, before, lists.clone(), state, step, last, None);
            (sites, state, lists)
        }
    }
}

/// The Adam kernel; with `clock`, λ and the bias corrections come from it and the sites and
/// state are stepped in place.
#[allow(clippy::too_many_arguments)]
pub(super) fn launch_adam(
    sites: CubeTensor,
    grads: CubeTensor,
    tau: CubeTensor,
    list: CubeTensor,
    state: CubeTensor,
    step: AdamStep,
    neighbours: TauNeighbours,
    clock: Option<&Clock>,
) -> (CubeTensor, CubeTensor) {
    let sites = into_contiguous(sites);
    let grads = into_contiguous(grads);
    let tau = into_contiguous(tau);
    let state = into_contiguous(state);
    let op = "sad_adam_step";
    let sites_count = expect_rows_of(op, "the sites", &sites, SITE_PARAMS);
    expect_dims(op, "the gradients", &grads, &[sites_count, SITE_PARAMS]);
    expect_dims(op, "the Adam state", &state, &[sites_count, ADAM_STATE]);
    // Site i's log τ gradient is read at i·stride + offset.
    if sites_count > 0 {
        let last = (sites_count - 1) * neighbours.input_stride + neighbours.input_offset;
        expect_len_at_least(op, "the log τ gradients", &tau, last + 1);
    }
    if neighbours.lambda > 0.0 || clock.is_some() {
        expect_dims(op, "the neighbour lists", &list, &[K + 1, sites_count]);
    }
    let (out_sites, out_state) = match clock {
        Some(_) => (sites.clone(), state.clone()),
        None => (
            empty_f32(&sites, Shape::new([sites_count, SITE_PARAMS])),
            empty_f32(&sites, Shape::new([sites_count, ADAM_STATE])),
        ),
    };
    let (clock_table, tick, clocked) = Clock::bind(clock, &grads, &list);
    let count = CubeCount::Static((sites_count as u32).div_ceil(ADAM_CUBE as u32).max(1), 1, 1);
    let dim = CubeDim::new_1d(ADAM_CUBE as u32);
    launch_kernel!(adam_kernel(
        &sites.client,
        count,
        dim,
        sites.clone().into_tensor_arg(),
        grads.into_tensor_arg(),
        tau.into_tensor_arg(),
        list.into_tensor_arg(),
        state.into_tensor_arg(),
        out_sites.clone().into_tensor_arg(),
        out_state.clone().into_tensor_arg(),
        AdamStepLaunch::new(
            step.lr_position,
            step.lr_log_tau,
            step.lr_radius,
            step.lr_color,
            step.lr_direction,
            step.lr_log_aniso,
            step.beta1,
            step.beta2,
            step.eps,
            step.correction1,
            step.correction2,
            step.grad_scale,
            step.max_x,
            step.max_y,
        ),
        neighbours_launch(neighbours),
        sites_count,
        clock_table.into_tensor_arg(),
        tick.into_tensor_arg(),
        clocked,
        // The replayed step is the in-place one.
        clock.is_some(),
    ));
    (out_sites, out_state)
}
