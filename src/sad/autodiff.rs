//! Autodiff for the render op: the backward runs the hand-written backward kernel. The
//! candidate ops are not differentiable and pass through.

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

use super::{PassConfig, RenderGeometry, SadBackend};

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

    fn sad_init_candidates(
        sites: FloatTensor<Self>,
        geometry: RenderGeometry,
        seed: u32,
    ) -> IntTensor<Self> {
        B::sad_init_candidates(sites.into_primitive(), geometry, seed)
    }

    fn sad_flood_candidates(sites: FloatTensor<Self>, geometry: RenderGeometry) -> IntTensor<Self> {
        B::sad_flood_candidates(sites.into_primitive(), geometry)
    }

    fn sad_candidate_pass(
        sites: FloatTensor<Self>,
        candidates: IntTensor<Self>,
        hilbert_order: IntTensor<Self>,
        hilbert_rank: IntTensor<Self>,
        geometry: RenderGeometry,
        pass: PassConfig,
    ) -> IntTensor<Self> {
        B::sad_candidate_pass(
            sites.into_primitive(),
            candidates,
            hilbert_order,
            hilbert_rank,
            geometry,
            pass,
        )
    }
}
