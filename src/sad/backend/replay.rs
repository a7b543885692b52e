//! The kernels of a replayed iteration: one whole step in place on buffers the trainer owns, and
//! the copy of a fit's state into and out of them; on CubeCL backends and on `Fusion`.

use burn::backend::{
    Backend, backend_extension,
    tensor::{FloatTensor, IntTensor},
};
use burn_fusion::{Fusion, FusionBackend};
use burn_sad_kernels::sad::AdamStep;

use super::RenderGeometry;
use super::fusion::{copied_state, stepped_and_lists};
use crate::runtime::fusion_op::{FusionTensorOf, queue};
use crate::sad::BackwardStrategy;

/// The kernels of a replayed iteration: the step in place and the state's copy. Nothing
/// differentiates them (see [`SadKernels`](super::SadKernels)).
#[backend_extension(Cube: cfg(feature = "cube"))]
pub trait SadReplayKernels: Backend {
    /// One training iteration of the summed squared error against `target`, in place, for an
    /// iteration recorded once and replayed as a graph: the gradient pass, `passes` (≥ 2) tau
    /// diffusion passes from `lists` (the neighbour lists of the step before, as
    /// [`sad_diffuse_and_step`](super::SadTrainingKernels::sad_diffuse_and_step) returns
    /// them, over the same `candidates` and live sites) and the Adam step, with λ and the bias
    /// corrections read from row `tick[0]` of `clock` (`[rows, CLOCK_COLUMNS]`, see
    /// `burn_sad_kernels::sad::clock_value`) instead of `step`; then `tick[0]` advances by
    /// one. `sites`, `state`, `lists` and `tick` are overwritten, whoever else holds them, and
    /// returned (the same buffers): the caller owns them alone.
    // The step's seven tensors (the state it owns, the target, the clock) and four values: the
    // extension macro dispatches a tensor only as an argument of its own.
    #[allow(clippy::too_many_arguments)]
    fn sad_step_in_place(
        sites: FloatTensor<Self>,
        state: FloatTensor<Self>,
        lists: IntTensor<Self>,
        candidates: IntTensor<Self>,
        target: FloatTensor<Self>,
        clock: FloatTensor<Self>,
        tick: IntTensor<Self>,
        step: AdamStep,
        geometry: RenderGeometry,
        passes: u32,
        strategy: BackwardStrategy,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, IntTensor<Self>);

    /// Copies `sites`, `state` and `lists` word for word into `sites_into`, `state_into` and
    /// `lists_into` (same lengths) and, with an `iteration`, `candidates` into `candidates_into`
    /// and `iteration` into `tick[0]`: the state a replayed iteration reads (see
    /// [`sad_step_in_place`](Self::sad_step_in_place)) loaded in one launch, or copied out. The
    /// destinations are overwritten, whoever else holds them, and returned (the same buffers:
    /// sites, state, lists, candidates, tick).
    // Four tensor pairs, the tick and the iteration, each tensor an argument of its own for the
    // extension macro: one launch copies the whole state.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn sad_copy_state(
        sites: FloatTensor<Self>,
        state: FloatTensor<Self>,
        lists: IntTensor<Self>,
        candidates: IntTensor<Self>,
        sites_into: FloatTensor<Self>,
        state_into: FloatTensor<Self>,
        lists_into: IntTensor<Self>,
        candidates_into: IntTensor<Self>,
        tick: IntTensor<Self>,
        iteration: Option<u32>,
    ) -> (
        FloatTensor<Self>,
        FloatTensor<Self>,
        IntTensor<Self>,
        IntTensor<Self>,
        IntTensor<Self>,
    );
}

impl<B: FusionBackend + SadReplayKernels> SadReplayKernels for Fusion<B> {
    fn sad_step_in_place(
        sites: FusionTensorOf<B>,
        state: FusionTensorOf<B>,
        lists: FusionTensorOf<B>,
        candidates: FusionTensorOf<B>,
        target: FusionTensorOf<B>,
        clock: FusionTensorOf<B>,
        tick: FusionTensorOf<B>,
        step: AdamStep,
        geometry: RenderGeometry,
        passes: u32,
        strategy: BackwardStrategy,
    ) -> (FusionTensorOf<B>, FusionTensorOf<B>, FusionTensorOf<B>) {
        let shapes = [&sites, &state, &lists].map(|t| (t.shape.clone(), t.dtype));
        let [stepped, moments, kept] = shapes;
        let out = queue!(
            format!("burn_sad::sad_step_in_place::{step:?}::{geometry:?}::{passes}::{strategy}");
        floats [sites, state, target, clock], ints [lists, candidates, tick]
            => [stepped, moments], [kept];
        stepped_and_lists(B::sad_step_in_place(
            sites, state, lists, candidates, target, clock, tick, step, geometry, passes, strategy,
        )));
        let [sites, state] = out.floats;
        let [lists] = out.ints;
        (sites, state, lists)
    }

    fn sad_copy_state(
        sites: FusionTensorOf<B>,
        state: FusionTensorOf<B>,
        lists: FusionTensorOf<B>,
        candidates: FusionTensorOf<B>,
        sites_into: FusionTensorOf<B>,
        state_into: FusionTensorOf<B>,
        lists_into: FusionTensorOf<B>,
        candidates_into: FusionTensorOf<B>,
        tick: FusionTensorOf<B>,
        iteration: Option<u32>,
    ) -> (
        FusionTensorOf<B>,
        FusionTensorOf<B>,
        FusionTensorOf<B>,
        FusionTensorOf<B>,
        FusionTensorOf<B>,
    ) {
        let shape = |t: &FusionTensorOf<B>| (t.shape.clone(), t.dtype);
        let [sites_out, state_out] = [&sites_into, &state_into].map(shape);
        let [lists_out, candidates_out, tick_out] =
            [&lists_into, &candidates_into, &tick].map(shape);
        let out = queue!(format!("burn_sad::sad_copy_state::{iteration:?}");
        floats [sites, state, sites_into, state_into],
        ints [lists, candidates, lists_into, candidates_into, tick]
            => [sites_out, state_out], [lists_out, candidates_out, tick_out];
        copied_state(B::sad_copy_state(
            sites, state, lists, candidates, sites_into, state_into, lists_into,
            candidates_into, tick, iteration,
        )));
        let [sites, state] = out.floats;
        let [lists, candidates, tick] = out.ints;
        (sites, state, lists, candidates, tick)
    }
}
