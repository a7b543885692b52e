//! Autodiff for the render op: the backward runs the hand-written backward kernel. (The other
//! kernels are not differentiable: [`SadKernels`](crate::sad::SadKernels) runs on the inner backend.)

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

use super::{RenderGeometry, SadBackend};
use crate::sad::BackwardStrategy;

#[derive(Debug, Clone)]
struct RenderState<B: Backend> {
    sites: FloatTensor<B>,
    candidates: IntTensor<B>,
    geometry: RenderGeometry,
    strategy: BackwardStrategy,
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
            let grad = B::sad_render_backward(
                state.sites,
                state.candidates,
                upstream,
                state.geometry,
                state.strategy,
            );
            grads.register::<B>(node.id, grad);
        }
    }
}

impl<B: SadBackend, C: CheckpointStrategy> SadBackend for Autodiff<B, C> {
    fn sad_render(
        sites: FloatTensor<Self>,
        candidates: IntTensor<Self>,
        geometry: RenderGeometry,
        strategy: BackwardStrategy,
    ) -> FloatTensor<Self> {
        match RenderBackward
            .prepare::<C>([sites.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => {
                let sites = sites.into_primitive();
                let image = B::sad_render(sites.clone(), candidates.clone(), geometry, strategy);
                prep.finish(
                    RenderState {
                        sites,
                        candidates,
                        geometry,
                        strategy,
                    },
                    image,
                )
            }
            OpsKind::UnTracked(prep) => prep.finish(B::sad_render(
                sites.into_primitive(),
                candidates,
                geometry,
                strategy,
            )),
        }
    }

    fn sad_render_backward(
        sites: FloatTensor<Self>,
        candidates: IntTensor<Self>,
        grad_image: FloatTensor<Self>,
        geometry: RenderGeometry,
        strategy: BackwardStrategy,
    ) -> FloatTensor<Self> {
        Self::from_inner(B::sad_render_backward(
            sites.into_primitive(),
            candidates,
            grad_image.into_primitive(),
            geometry,
            strategy,
        ))
    }
}
