//! Launches of the Adam step, on its own or with the last tau diffusion pass run inside it.

use burn::backend::ops::IntTensorOps;
use burn::tensor::{IntDType, Shape};
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};
use burn_sad_kernels::sad::{
    ADAM_CUBE, ADAM_STATE, AdamStep, K, LOG_TAU, SITE_PARAMS, TauNeighbours, adam_kernel,
};
use cubecl::{CubeCount, CubeDim};

use super::clock::Clock;
use super::diffusion::{diffuse, tau_neighbours};
use super::{capacity, empty_f32, empty_i32};
use crate::runtime::launch::{expect_dims, expect_len_at_least, expect_rows_of, launch_kernel};
use crate::sad::RenderGeometry;

/// The Adam step with its log τ gradient read as it is from `tau` (site i's at
/// `i·stride + offset`): the kernel's last Jacobi pass at λ = 0, which reads no neighbour list.
pub(super) fn adam_with_tau(
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
    launch_adam(sites, grads, (tau, unused, copy), state, step, None)
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
            let (sites, state) = launch_adam(
                sites,
                grads,
                (before, lists.clone(), last),
                state,
                step,
                None,
            );
            (sites, state, lists)
        }
    }
}

/// The Adam kernel, with the last tau diffusion pass (`tau`, the log τ gradients it reads;
/// `list`, the neighbour lists; `neighbours`, its launch struct) inside; with `clock`, λ and
/// the bias corrections come from it and the sites and state are stepped in place.
pub(super) fn launch_adam(
    sites: CubeTensor,
    grads: CubeTensor,
    (tau, list, neighbours): (CubeTensor, CubeTensor, TauNeighbours),
    state: CubeTensor,
    step: AdamStep,
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
        step.launch_arg(),
        neighbours.launch_arg(),
        sites_count,
        clock_table.into_tensor_arg(),
        tick.into_tensor_arg(),
        clocked,
        // The replayed step is the in-place one.
        clock.is_some(),
    ));
    (out_sites, out_state)
}
