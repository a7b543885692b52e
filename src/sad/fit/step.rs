//! The training step after the gradient pass: tau-gradient diffusion and Adam, as tensor
//! functions (the CubeCL kernels where they run, the host references elsewhere).

use burn::tensor::{Int, Tensor, TensorData};
#[cfg(feature = "cube")]
use burn_sad_kernels::sad::K;
use burn_sad_kernels::sad::{ADAM_STATE, AdamStep, LOG_TAU, SITE_PARAMS};

use super::ops::{host_ids, rows};
use super::reference::{adam_step_reference, tau_diffusion_reference};
#[cfg(feature = "cube")]
use crate::device::uses_fused_kernels;
use crate::sad::{Candidates, SiteTable};

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
    #[cfg(feature = "cube")]
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
    #[cfg(feature = "cube")]
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

/// [`tau_diffusion`] of `grads`, then [`adam_step`] with its result as the log τ gradient: the
/// training step after the gradient pass. On CubeCL devices the last Jacobi pass runs inside the
/// Adam kernel.
pub fn diffuse_and_step(
    sites: Tensor<2>,
    candidates: &Candidates,
    grads: Tensor<2>,
    state: Tensor<2>,
    step: &AdamStep,
    diffusion: (f32, u32),
) -> (Tensor<2>, Tensor<2>) {
    let (sites, state, _) =
        diffuse_and_step_keeping(sites, candidates, grads, state, step, diffusion, None);
    (sites, state)
}

/// The neighbour lists of one step's tau diffusion on a CubeCL device (`[K + 1, capacity]`),
/// which the following steps can reuse while they hold: see [`diffuse_and_step_keeping`].
#[derive(Clone, Debug)]
pub struct NeighbourLists(
    #[cfg_attr(not(feature = "cube"), allow(dead_code))] pub(in crate::sad::fit) Tensor<2, Int>,
);

/// [`diffuse_and_step`] that keeps the diffusion's neighbour lists for the next step (on
/// CubeCL devices; `None` elsewhere) and takes back those of an earlier one.
///
/// `kept` must come from a step over the same `candidates` (the same lists, not a later
/// propagation of them) with the same live sites: no densify or prune in between. Then the
/// result is [`diffuse_and_step`]'s, bit for bit, and only the sites that have moved to another
/// cell since look their neighbours up again. Lists of another capacity are not used.
pub fn diffuse_and_step_keeping(
    sites: Tensor<2>,
    candidates: &Candidates,
    grads: Tensor<2>,
    state: Tensor<2>,
    step: &AdamStep,
    diffusion: (f32, u32),
    kept: Option<&NeighbourLists>,
) -> (Tensor<2>, Tensor<2>, Option<NeighbourLists>) {
    let (lambda, passes) = diffusion;
    #[cfg(feature = "cube")]
    if uses_fused_kernels(&sites.device()) {
        let capacity = sites.dims()[0];
        let kept = kept.filter(|lists| lists.0.dims() == [K + 1, capacity]);
        let (sites, state, lists) = dispatch::diffuse_and_step(
            sites,
            candidates,
            grads,
            state,
            kept.map(|lists| lists.0.clone()),
            *step,
            (lambda, passes),
        );
        // Lists found at λ ≤ 0, or by no pass, mark every site's home cell as none (−1), so a
        // later step that takes them back copies nothing.
        return (sites, state, Some(NeighbourLists(lists)));
    }
    let _ = kept;
    let tau = tau_diffusion(&sites, candidates, grads.clone(), lambda, passes);
    let (sites, state) = adam_step(sites, grads, tau, state, step);
    (sites, state, None)
}

/// The training-step kernels through Burn's dispatch backend.
#[cfg(feature = "cube")]
mod dispatch {
    use burn::backend::Dispatch;
    use burn::tensor::{Int, Tensor};
    use burn_sad_kernels::sad::AdamStep;

    use crate::sad::backend::KernelCall;
    use crate::sad::{Candidates, SadTrainingKernels};

    pub fn tau_diffusion(
        sites: Tensor<2>,
        candidates: &Candidates,
        raw: Tensor<2>,
        lambda: f32,
        passes: u32,
    ) -> Tensor<1> {
        let call = KernelCall::on(&sites.device());
        call.out(<Dispatch as SadTrainingKernels>::sad_tau_diffusion(
            KernelCall::arg(sites),
            KernelCall::arg(candidates.ids()),
            KernelCall::arg(raw),
            candidates.geometry(),
            lambda,
            passes,
        ))
    }

    pub fn diffuse_and_step(
        sites: Tensor<2>,
        candidates: &Candidates,
        grads: Tensor<2>,
        state: Tensor<2>,
        kept: Option<Tensor<2, Int>>,
        step: AdamStep,
        (lambda, passes): (f32, u32),
    ) -> (Tensor<2>, Tensor<2>, Tensor<2, Int>) {
        let call = KernelCall::on(&sites.device());
        let use_kept = kept.is_some();
        // Not read without lists to keep: an unfilled placeholder, no launch.
        let kept = kept.unwrap_or_else(|| Tensor::empty([1, 1], &sites.device()));
        let (sites, state, lists) = <Dispatch as SadTrainingKernels>::sad_diffuse_and_step(
            KernelCall::arg(sites),
            KernelCall::arg(candidates.ids()),
            KernelCall::arg(grads),
            KernelCall::arg(state),
            KernelCall::arg(kept),
            use_kept,
            step,
            candidates.geometry(),
            lambda,
            passes,
        );
        (call.out(sites), call.out(state), call.out(lists))
    }

    pub fn adam_step(
        sites: Tensor<2>,
        grads: Tensor<2>,
        tau_grads: Tensor<1>,
        state: Tensor<2>,
        step: AdamStep,
    ) -> (Tensor<2>, Tensor<2>) {
        let call = KernelCall::on(&sites.device());
        let (sites, state) = <Dispatch as SadTrainingKernels>::sad_adam_step(
            KernelCall::arg(sites),
            KernelCall::arg(grads),
            KernelCall::arg(tau_grads),
            KernelCall::arg(state),
            step,
        );
        (call.out(sites), call.out(state))
    }
}
