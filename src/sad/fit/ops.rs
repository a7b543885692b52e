//! The training ops as tensor functions: the CubeCL kernels where they run, the host
//! references elsewhere.

use burn::tensor::{Tensor, TensorData};
use burn_sad_kernels::sad::{ADAM_STATE, AdamStep, LOG_TAU, SITE_PARAMS, StatisticsKind};

use super::TargetImage;
use super::reference::{adam_step_reference, site_statistics_reference, tau_diffusion_reference};
use crate::sad::{Candidates, SiteTable};
use crate::ssim::uses_fused_kernels;

fn rows<const N: usize>(values: &[f32]) -> Vec<[f32; N]> {
    values
        .chunks_exact(N)
        .map(|row| row.try_into().expect("rows of N"))
        .collect()
}

fn host_ids(candidates: &Candidates) -> Vec<i32> {
    candidates
        .ids()
        .try_to_vec_as::<i32>()
        .expect("candidate ids are readable")
}

/// ∂L/∂sites (`[capacity, 10]`) of the summed squared error L = Σ (render − target)² against
/// `target` (`[3, H, W]`), the reference trainer's loss. On CubeCL devices one kernel recomputes
/// the render per pixel and forms ∂L/∂ĉ = 2(ĉ − t) itself, as the reference's gradient kernel
/// does; elsewhere Burn's autodiff differentiates [`render_reference`](crate::sad::render_reference).
pub fn squared_error_gradients(
    sites: &Tensor<2>,
    candidates: &Candidates,
    target: &Tensor<3>,
) -> Tensor<2> {
    if uses_fused_kernels(&sites.device()) {
        return dispatch::squared_error_gradients(sites.clone(), candidates, target.clone());
    }
    let tracked = sites.clone().autodiff().require_grad();
    let image =
        crate::sad::render_reference(tracked.clone(), candidates.ids(), candidates.geometry());
    let error = image - target.clone();
    let grads = (error.clone() * error).sum().backward();
    tracked.grad(&grads).expect("the sites are tracked").inner()
}

/// Per-site statistics of the render of `sites` against `target` (`[3, H, W]`):
/// `[capacity, kind.channels()]`, summed over pixels (see [`StatisticsKind`]).
pub fn site_statistics(
    sites: &Tensor<2>,
    candidates: &Candidates,
    target: &Tensor<3>,
    kind: StatisticsKind,
) -> Tensor<2> {
    let geometry = candidates.geometry();
    if uses_fused_kernels(&sites.device()) {
        return dispatch::site_statistics(sites.clone(), candidates, target.clone(), kind);
    }
    let table = SiteTable::from_tensor(sites.clone(), geometry.width, geometry.height);
    let image = TargetImage::from_tensor(target.clone());
    let stats =
        site_statistics_reference(&table.sites, &host_ids(candidates), &image, geometry, kind);
    Tensor::from_data(
        TensorData::new(stats, [table.sites.len(), kind.channels()]),
        &sites.device(),
    )
}

/// `passes` Jacobi passes of the reference's tau-gradient diffusion of the log τ column of
/// `grads` (`[capacity, 10]`): g ← (raw + λ·Σ_neighbours g) / (1 + λ·|neighbours|), where a
/// site's neighbours are the distinct live sites of the candidate cell nearest to it. Smooths
/// log τ updates between neighbouring sites. Returns `[capacity]`.
pub fn tau_diffusion(
    sites: &Tensor<2>,
    candidates: &Candidates,
    grads: Tensor<2>,
    lambda: f32,
    passes: u32,
) -> Tensor<1> {
    let geometry = candidates.geometry();
    if uses_fused_kernels(&sites.device()) {
        return dispatch::tau_diffusion(sites.clone(), candidates, grads, lambda, passes);
    }
    let table = SiteTable::from_tensor(sites.clone(), geometry.width, geometry.height);
    let raw_host: Vec<f32> = grads
        .try_to_vec_as::<f32>()
        .expect("gradients are readable")
        .chunks_exact(SITE_PARAMS)
        .map(|row| row[LOG_TAU])
        .collect();
    let diffused = tau_diffusion_reference(
        &table.sites,
        &host_ids(candidates),
        &raw_host,
        geometry,
        lambda,
        passes,
    );
    Tensor::from_data(TensorData::new(diffused, [raw_host.len()]), &sites.device())
}

/// One step of the reference trainer's Adam on `[capacity, 10]` sites with raw gradients
/// `grads`, the log τ gradient taken from `tau_grads` (`[capacity]`) instead, and state
/// `[capacity, 18]` (see [`ADAM_STATE`]). Returns the new sites and state.
///
/// Position and direction share one second moment between their components; the direction
/// gradient is projected onto the circle's tangent and the result renormalised; the step ends
/// with the reference's clamps. Inactive sites keep their values and state.
pub fn adam_step(
    sites: Tensor<2>,
    grads: Tensor<2>,
    tau_grads: Tensor<1>,
    state: Tensor<2>,
    step: &AdamStep,
) -> (Tensor<2>, Tensor<2>) {
    if uses_fused_kernels(&sites.device()) {
        return dispatch::adam_step(sites, grads, tau_grads, state, *step);
    }
    let device = sites.device();
    let read = |t: Tensor<2>| t.try_to_vec_as::<f32>().expect("readable");
    let mut host_sites = rows::<SITE_PARAMS>(&read(sites));
    let mut host_state = rows::<ADAM_STATE>(&read(state));
    let host_grads = rows::<SITE_PARAMS>(&read(grads));
    let tau = tau_grads.try_to_vec_as::<f32>().expect("readable");
    adam_step_reference(&mut host_sites, &mut host_state, &host_grads, &tau, step);
    let capacity = host_sites.len();
    (
        Tensor::from_data(
            TensorData::new(host_sites.concat(), [capacity, SITE_PARAMS]),
            &device,
        ),
        Tensor::from_data(
            TensorData::new(host_state.concat(), [capacity, ADAM_STATE]),
            &device,
        ),
    )
}

#[cfg(feature = "cube")]
mod dispatch {
    use burn::backend::Dispatch;
    use burn::tensor::Tensor;
    use burn_sad_kernels::sad::{AdamStep, StatisticsKind};

    use crate::sad::{Candidates, SadBackend};

    pub fn squared_error_gradients(
        sites: Tensor<2>,
        candidates: &Candidates,
        target: Tensor<3>,
    ) -> Tensor<2> {
        Tensor::from_dispatch(<Dispatch as SadBackend>::sad_squared_error_gradients(
            sites.into_dispatch(),
            candidates.ids().into_dispatch(),
            target.into_dispatch(),
            candidates.geometry(),
        ))
    }

    pub fn site_statistics(
        sites: Tensor<2>,
        candidates: &Candidates,
        target: Tensor<3>,
        kind: StatisticsKind,
    ) -> Tensor<2> {
        Tensor::from_dispatch(<Dispatch as SadBackend>::sad_site_statistics(
            sites.into_dispatch(),
            candidates.ids().into_dispatch(),
            target.into_dispatch(),
            candidates.geometry(),
            kind,
        ))
    }

    pub fn tau_diffusion(
        sites: Tensor<2>,
        candidates: &Candidates,
        raw: Tensor<2>,
        lambda: f32,
        passes: u32,
    ) -> Tensor<1> {
        Tensor::from_dispatch(<Dispatch as SadBackend>::sad_tau_diffusion(
            sites.into_dispatch(),
            candidates.ids().into_dispatch(),
            raw.into_dispatch(),
            candidates.geometry(),
            lambda,
            passes,
        ))
    }

    pub fn adam_step(
        sites: Tensor<2>,
        grads: Tensor<2>,
        tau_grads: Tensor<1>,
        state: Tensor<2>,
        step: AdamStep,
    ) -> (Tensor<2>, Tensor<2>) {
        let (sites, state) = <Dispatch as SadBackend>::sad_adam_step(
            sites.into_dispatch(),
            grads.into_dispatch(),
            tau_grads.into_dispatch(),
            state.into_dispatch(),
            step,
        );
        (Tensor::from_dispatch(sites), Tensor::from_dispatch(state))
    }
}

#[cfg(not(feature = "cube"))]
mod dispatch {
    use burn::tensor::Tensor;
    use burn_sad_kernels::sad::{AdamStep, StatisticsKind};

    use crate::sad::Candidates;

    pub fn squared_error_gradients(_: Tensor<2>, _: &Candidates, _: Tensor<3>) -> Tensor<2> {
        unreachable!("no CubeCL runtime is compiled in")
    }

    pub fn site_statistics(
        _: Tensor<2>,
        _: &Candidates,
        _: Tensor<3>,
        _: StatisticsKind,
    ) -> Tensor<2> {
        unreachable!("no CubeCL runtime is compiled in")
    }

    pub fn tau_diffusion(_: Tensor<2>, _: &Candidates, _: Tensor<2>, _: f32, _: u32) -> Tensor<1> {
        unreachable!("no CubeCL runtime is compiled in")
    }

    pub fn adam_step(
        _: Tensor<2>,
        _: Tensor<2>,
        _: Tensor<1>,
        _: Tensor<2>,
        _: AdamStep,
    ) -> (Tensor<2>, Tensor<2>) {
        unreachable!("no CubeCL runtime is compiled in")
    }
}
