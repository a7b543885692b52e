//! The training kernels a fit calls between its render and its optimiser: the squared error's
//! gradients straight from the target, the densify statistics, the τ diffusion, the prune and
//! the Adam steps; on CubeCL backends and on `Fusion`.

use burn::backend::{
    Backend, backend_extension,
    tensor::{FloatTensor, IntTensor},
};
use burn::tensor::{DType, Shape};
use burn_fusion::{Fusion, FusionBackend};
use burn_sad_kernels::sad::{AdamStep, BackwardOutputs, K, StatisticsKind};

use super::RenderGeometry;
use super::fusion::{stepped_and_lists, stepped_shapes};
use crate::runtime::fusion_op::{FusionTensorOf, float, floats, queue};
use crate::sad::BackwardStrategy;

/// The training kernels: the squared error's gradients, the densify statistics, the τ diffusion,
/// the prune and the Adam steps. Nothing differentiates them (see [`SadKernels`](super::SadKernels)).
#[backend_extension(Cube: cfg(feature = "cube"))]
pub trait SadTrainingKernels: Backend {
    /// ∂L/∂sites (`[capacity, 10]`) of the summed squared error L = Σ (image − target)² against
    /// `target` (`[3, height, width]`), in one pass that recomputes the render per pixel. With
    /// `removal`, an 11th column holds each site's removal delta (the statistic
    /// [`StatisticsKind::RemovalDelta`] of the same pass): `[capacity, 11]`.
    fn sad_squared_error_gradients(
        sites: FloatTensor<Self>,
        candidates: IntTensor<Self>,
        target: FloatTensor<Self>,
        geometry: RenderGeometry,
        removal: bool,
        strategy: BackwardStrategy,
    ) -> FloatTensor<Self>;

    /// Per-site statistics of the render against `target` (`[3, height, width]`):
    /// `[capacity, kind.channels()]`, summed over pixels.
    fn sad_site_statistics(
        sites: FloatTensor<Self>,
        candidates: IntTensor<Self>,
        target: FloatTensor<Self>,
        geometry: RenderGeometry,
        kind: StatisticsKind,
    ) -> FloatTensor<Self>;

    /// `passes` Jacobi passes of tau-gradient diffusion of the log τ column of `grads`
    /// (`[capacity, 10]`) with weight `lambda`, over each site's home-cell candidates:
    /// `[capacity]`.
    fn sad_tau_diffusion(
        sites: FloatTensor<Self>,
        candidates: IntTensor<Self>,
        grads: FloatTensor<Self>,
        geometry: RenderGeometry,
        lambda: f32,
        passes: u32,
    ) -> FloatTensor<Self>;

    /// The sites with the `count` cheapest to remove marked inactive: live sites with a finite
    /// removal delta (`removal`, `[capacity]`, scaled by `norm`, negative as 0), smallest first,
    /// ties by id.
    fn sad_prune(
        sites: FloatTensor<Self>,
        removal: FloatTensor<Self>,
        count: usize,
        norm: f32,
    ) -> FloatTensor<Self>;

    /// [`sad_tau_diffusion`](Self::sad_tau_diffusion) of `grads`, then
    /// [`sad_adam_step`](Self::sad_adam_step) with its result as the log τ gradient, as one op
    /// (a backend may run the last pass inside the step): the new sites and Adam state, and the
    /// diffusion's neighbour lists (`[K + 1, capacity]` i32). A later step over the same
    /// candidate lists and the same live sites (no densify or prune between) may pass them back
    /// as `kept` with `use_kept`: the result is the same, and only the sites that moved to
    /// another cell look their neighbours up again (see
    /// `burn_sad_kernels::sad::NeighbourSource::Kept`). Without `use_kept`, `kept` is not read
    /// (any int tensor will do). A flag beside a tensor rather than an `Option`: the extension
    /// macro of burn 0.22 hands an `Option` of tensors to the backend as it came, undispatched.
    // The op's five tensors, `use_kept` (see above) and four launch values: the extension macro
    // dispatches a tensor only as an argument of its own, so they cannot travel in a struct.
    #[allow(clippy::too_many_arguments)]
    fn sad_diffuse_and_step(
        sites: FloatTensor<Self>,
        candidates: IntTensor<Self>,
        grads: FloatTensor<Self>,
        state: FloatTensor<Self>,
        kept: IntTensor<Self>,
        use_kept: bool,
        step: AdamStep,
        geometry: RenderGeometry,
        lambda: f32,
        passes: u32,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, IntTensor<Self>);

    /// One Adam step of every site: the new `[capacity, 10]` sites and `[capacity, 18]` state.
    fn sad_adam_step(
        sites: FloatTensor<Self>,
        grads: FloatTensor<Self>,
        tau_grads: FloatTensor<Self>,
        state: FloatTensor<Self>,
        step: AdamStep,
    ) -> (FloatTensor<Self>, FloatTensor<Self>);
}

impl<B: FusionBackend + SadTrainingKernels> SadTrainingKernels for Fusion<B> {
    fn sad_squared_error_gradients(
        sites: FusionTensorOf<B>,
        candidates: FusionTensorOf<B>,
        target: FusionTensorOf<B>,
        geometry: RenderGeometry,
        removal: bool,
        strategy: BackwardStrategy,
    ) -> FusionTensorOf<B> {
        let outputs = BackwardOutputs {
            from_target: true,
            removal,
        };
        let grads = (Shape::new([sites.shape[0], outputs.columns()]), sites.dtype);
        let [grads] = queue!(
        format!("burn_sad::sad_squared_error_gradients::{geometry:?}::{removal}::{strategy}");
        floats [sites, target], ints [candidates] => [grads], [];
        float(B::sad_squared_error_gradients(
            sites, candidates, target, geometry, removal, strategy
        )))
        .floats;
        grads
    }

    fn sad_site_statistics(
        sites: FusionTensorOf<B>,
        candidates: FusionTensorOf<B>,
        target: FusionTensorOf<B>,
        geometry: RenderGeometry,
        kind: StatisticsKind,
    ) -> FusionTensorOf<B> {
        let stats = (Shape::new([sites.shape[0], kind.channels()]), sites.dtype);
        let [stats] = queue!(format!("burn_sad::sad_site_statistics::{geometry:?}::{kind:?}");
            floats [sites, target], ints [candidates] => [stats], [];
            float(B::sad_site_statistics(sites, candidates, target, geometry, kind)))
        .floats;
        stats
    }

    fn sad_tau_diffusion(
        sites: FusionTensorOf<B>,
        candidates: FusionTensorOf<B>,
        raw: FusionTensorOf<B>,
        geometry: RenderGeometry,
        lambda: f32,
        passes: u32,
    ) -> FusionTensorOf<B> {
        let out = (Shape::new([raw.shape[0]]), raw.dtype);
        let [out] = queue!(
            format!("burn_sad::sad_tau_diffusion::{geometry:?}::{lambda}::{passes}");
            floats [sites, raw], ints [candidates] => [out], [];
            float(B::sad_tau_diffusion(sites, candidates, raw, geometry, lambda, passes)))
        .floats;
        out
    }

    fn sad_prune(
        sites: FusionTensorOf<B>,
        removal: FusionTensorOf<B>,
        count: usize,
        norm: f32,
    ) -> FusionTensorOf<B> {
        let out = (sites.shape.clone(), sites.dtype);
        let [out] = queue!(format!("burn_sad::sad_prune::{count}::{norm}");
            floats [sites, removal], ints [] => [out], [];
            float(B::sad_prune(sites, removal, count, norm)))
        .floats;
        out
    }

    fn sad_diffuse_and_step(
        sites: FusionTensorOf<B>,
        candidates: FusionTensorOf<B>,
        grads: FusionTensorOf<B>,
        state: FusionTensorOf<B>,
        kept: FusionTensorOf<B>,
        use_kept: bool,
        step: AdamStep,
        geometry: RenderGeometry,
        lambda: f32,
        passes: u32,
    ) -> (FusionTensorOf<B>, FusionTensorOf<B>, FusionTensorOf<B>) {
        let [stepped, moments] = stepped_shapes::<B>(&sites, &state);
        let lists = (Shape::new([K + 1, sites.shape[0]]), DType::I32);
        let out = queue!(format!(
            "burn_sad::sad_diffuse_and_step::{step:?}::{geometry:?}::{lambda}::{passes}::{use_kept}"
        );
            floats [sites, grads, state], ints [candidates, kept] => [stepped, moments], [lists];
            stepped_and_lists(B::sad_diffuse_and_step(
                sites, candidates, grads, state, kept, use_kept, step, geometry, lambda, passes,
            )));
        let [sites, state] = out.floats;
        let [lists] = out.ints;
        (sites, state, lists)
    }

    fn sad_adam_step(
        sites: FusionTensorOf<B>,
        grads: FusionTensorOf<B>,
        tau_grads: FusionTensorOf<B>,
        state: FusionTensorOf<B>,
        step: AdamStep,
    ) -> (FusionTensorOf<B>, FusionTensorOf<B>) {
        let [stepped, moments] = stepped_shapes::<B>(&sites, &state);
        let [sites, state] = queue!(format!("burn_sad::sad_adam_step::{step:?}");
            floats [sites, grads, tau_grads, state], ints [] => [stepped, moments], [];
            floats(B::sad_adam_step(sites, grads, tau_grads, state, step)))
        .floats;
        (sites, state)
    }
}
