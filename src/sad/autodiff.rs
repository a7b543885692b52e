//! Autodiff for the render op: the backward runs the hand-written backward kernel. The
//! candidate and training ops are not differentiable and pass through.

use burn::backend::{
    AutodiffBackend, Backend,
    autodiff::{
        Autodiff,
        checkpoint::{base::Checkpointer, strategy::CheckpointStrategy},
        grads::Gradients,
        ops::{Backward, Ops, OpsKind},
    },
    tensor::{FloatTensor, IntTensor},
};

use burn_sad_kernels::sad::{AdamStep, StatisticsKind, ViewColours};

use super::{PassConfig, RenderGeometry, SadBackend, SiteRecordKind, ViewTransform};

#[derive(Debug, Clone)]
struct RenderState<B: Backend> {
    sites: FloatTensor<B>,
    candidates: IntTensor<B>,
    geometry: RenderGeometry,
}

#[derive(Debug)]
struct RenderBackward;

impl<B: SadBackend> Backward<B, 1> for RenderBackward {
    type State = RenderState<B>;

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [node] = ops.parents;
        let upstream = grads.consume::<B>(&ops.node);
        let state = ops.state;
        if let Some(node) = node {
            let grad =
                B::sad_render_backward(state.sites, state.candidates, upstream, state.geometry);
            grads.register::<B>(node.id, grad);
        }
    }
}

impl<B: SadBackend, C: CheckpointStrategy> SadBackend for Autodiff<B, C> {
    fn sad_render(
        sites: FloatTensor<Self>,
        candidates: IntTensor<Self>,
        geometry: RenderGeometry,
    ) -> FloatTensor<Self> {
        match RenderBackward
            .prepare::<C>([sites.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => {
                let sites = sites.into_primitive();
                let image = B::sad_render(sites.clone(), candidates.clone(), geometry);
                prep.finish(
                    RenderState {
                        sites,
                        candidates,
                        geometry,
                    },
                    image,
                )
            }
            OpsKind::UnTracked(prep) => {
                prep.finish(B::sad_render(sites.into_primitive(), candidates, geometry))
            }
        }
    }

    fn sad_render_backward(
        sites: FloatTensor<Self>,
        candidates: IntTensor<Self>,
        grad_image: FloatTensor<Self>,
        geometry: RenderGeometry,
    ) -> FloatTensor<Self> {
        Self::from_inner(B::sad_render_backward(
            sites.into_primitive(),
            candidates,
            grad_image.into_primitive(),
            geometry,
        ))
    }

    fn sad_squared_error_gradients(
        sites: FloatTensor<Self>,
        candidates: IntTensor<Self>,
        target: FloatTensor<Self>,
        geometry: RenderGeometry,
        removal: bool,
    ) -> FloatTensor<Self> {
        Self::from_inner(B::sad_squared_error_gradients(
            sites.into_primitive(),
            candidates,
            target.into_primitive(),
            geometry,
            removal,
        ))
    }

    fn sad_init_candidates(
        sites: FloatTensor<Self>,
        geometry: RenderGeometry,
        seed: u32,
    ) -> IntTensor<Self> {
        B::sad_init_candidates(sites.into_primitive(), geometry, seed)
    }

    fn sad_flood_candidates(records: IntTensor<Self>, geometry: RenderGeometry) -> IntTensor<Self> {
        B::sad_flood_candidates(records, geometry)
    }

    fn sad_pack_sites(
        sites: FloatTensor<Self>,
        kind: SiteRecordKind,
        view: ViewTransform,
    ) -> IntTensor<Self> {
        B::sad_pack_sites(sites.into_primitive(), kind, view)
    }

    fn sad_view_colours(
        sites: FloatTensor<Self>,
        winners: IntTensor<Self>,
        colours: ViewColours,
        scale: (f32, f32),
    ) -> FloatTensor<Self> {
        Self::from_inner(B::sad_view_colours(
            sites.into_primitive(),
            winners,
            colours,
            scale,
        ))
    }

    fn sad_mark_sites(records: IntTensor<Self>, image: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::from_inner(B::sad_mark_sites(records, image.into_primitive()))
    }

    fn sad_render_records(
        records: IntTensor<Self>,
        candidates: IntTensor<Self>,
        geometry: RenderGeometry,
    ) -> FloatTensor<Self> {
        Self::from_inner(B::sad_render_records(records, candidates, geometry))
    }

    fn sad_winners(
        records: IntTensor<Self>,
        candidates: IntTensor<Self>,
        geometry: RenderGeometry,
    ) -> IntTensor<Self> {
        B::sad_winners(records, candidates, geometry)
    }

    fn sad_candidate_pass(
        packed: IntTensor<Self>,
        candidates: IntTensor<Self>,
        hilbert_order: IntTensor<Self>,
        hilbert_rank: IntTensor<Self>,
        geometry: RenderGeometry,
        pass: PassConfig,
    ) -> IntTensor<Self> {
        B::sad_candidate_pass(
            packed,
            candidates,
            hilbert_order,
            hilbert_rank,
            geometry,
            pass,
        )
    }

    fn sad_site_statistics(
        sites: FloatTensor<Self>,
        candidates: IntTensor<Self>,
        target: FloatTensor<Self>,
        geometry: RenderGeometry,
        kind: StatisticsKind,
    ) -> FloatTensor<Self> {
        Self::from_inner(B::sad_site_statistics(
            sites.into_primitive(),
            candidates,
            target.into_primitive(),
            geometry,
            kind,
        ))
    }

    fn sad_tau_diffusion(
        sites: FloatTensor<Self>,
        candidates: IntTensor<Self>,
        raw: FloatTensor<Self>,
        geometry: RenderGeometry,
        lambda: f32,
        passes: u32,
    ) -> FloatTensor<Self> {
        Self::from_inner(B::sad_tau_diffusion(
            sites.into_primitive(),
            candidates,
            raw.into_primitive(),
            geometry,
            lambda,
            passes,
        ))
    }

    fn sad_prune(
        sites: FloatTensor<Self>,
        removal: FloatTensor<Self>,
        count: usize,
        norm: f32,
    ) -> FloatTensor<Self> {
        Self::from_inner(B::sad_prune(
            sites.into_primitive(),
            removal.into_primitive(),
            count,
            norm,
        ))
    }

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
    ) -> (FloatTensor<Self>, FloatTensor<Self>, IntTensor<Self>) {
        let (sites, state, lists) = B::sad_diffuse_and_step(
            sites.into_primitive(),
            candidates,
            grads.into_primitive(),
            state.into_primitive(),
            kept,
            use_kept,
            step,
            geometry,
            lambda,
            passes,
        );
        (Self::from_inner(sites), Self::from_inner(state), lists)
    }

    fn sad_adam_step(
        sites: FloatTensor<Self>,
        grads: FloatTensor<Self>,
        tau_grads: FloatTensor<Self>,
        state: FloatTensor<Self>,
        step: AdamStep,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        let (sites, state) = B::sad_adam_step(
            sites.into_primitive(),
            grads.into_primitive(),
            tau_grads.into_primitive(),
            state.into_primitive(),
            step,
        );
        (Self::from_inner(sites), Self::from_inner(state))
    }

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
    ) -> (FloatTensor<Self>, FloatTensor<Self>, IntTensor<Self>) {
        let (sites, state, lists) = B::sad_step_in_place(
            sites.into_primitive(),
            state.into_primitive(),
            lists,
            candidates,
            target.into_primitive(),
            clock.into_primitive(),
            tick,
            step,
            geometry,
            passes,
        );
        (Self::from_inner(sites), Self::from_inner(state), lists)
    }

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
    ) {
        let (sites, state, lists, candidates, tick) = B::sad_copy_state(
            sites.into_primitive(),
            state.into_primitive(),
            lists,
            candidates,
            sites_into.into_primitive(),
            state_into.into_primitive(),
            lists_into,
            candidates_into,
            tick,
            iteration,
        );
        (
            Self::from_inner(sites),
            Self::from_inner(state),
            lists,
            candidates,
            tick,
        )
    }
}
