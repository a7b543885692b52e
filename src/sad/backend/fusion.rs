//! The render on `Fusion<B>`, queued on the fusion stream like the SSIM ops (see
//! `crate::runtime::fusion_op`), and the output shapes the kernel families' Fusion
//! implementations share.

use burn::tensor::{DType, Shape};
use burn_fusion::{Fusion, FusionBackend};
use burn_sad_kernels::sad::{ADAM_STATE, K};

use super::{RenderGeometry, SadBackend};
use crate::runtime::fusion_op::{FusionTensorOf, OpTensors, float, queue};
use crate::sad::BackwardStrategy;

/// One int output.
pub(super) fn int<F, I>(tensor: I) -> OpTensors<F, I, 0, 1> {
    OpTensors {
        floats: [],
        ints: [tensor],
    }
}

/// The stepped sites and state, and the diffusion's neighbour lists.
pub(super) fn stepped_and_lists<F, I>((sites, state, lists): (F, F, I)) -> OpTensors<F, I, 2, 1> {
    OpTensors {
        floats: [sites, state],
        ints: [lists],
    }
}

/// The copied sites and state, lists, candidates and tick.
pub(super) fn copied_state<F, I>(
    (sites, state, lists, candidates, tick): (F, F, I, I, I),
) -> OpTensors<F, I, 2, 3> {
    OpTensors {
        floats: [sites, state],
        ints: [lists, candidates, tick],
    }
}

pub(super) fn ids_shape(geometry: RenderGeometry) -> (Shape, DType) {
    (Shape::new([geometry.cells(), K]), DType::I32)
}

/// The stepped sites and Adam state of `sites`' capacity.
pub(super) fn stepped_shapes<B: FusionBackend>(
    sites: &FusionTensorOf<B>,
    state: &FusionTensorOf<B>,
) -> [(Shape, DType); 2] {
    [
        (sites.shape.clone(), sites.dtype),
        (Shape::new([sites.shape[0], ADAM_STATE]), state.dtype),
    ]
}

impl<B: FusionBackend + SadBackend> SadBackend for Fusion<B> {
    fn sad_render(
        sites: FusionTensorOf<B>,
        candidates: FusionTensorOf<B>,
        geometry: RenderGeometry,
        strategy: BackwardStrategy,
    ) -> FusionTensorOf<B> {
        let image = (
            Shape::new([3, geometry.height, geometry.width]),
            sites.dtype,
        );
        let [image] = queue!(format!("burn_sad::sad_render::{geometry:?}::{strategy}");
            floats [sites], ints [candidates] => [image], [];
            float(B::sad_render(sites, candidates, geometry, strategy)))
        .floats;
        image
    }

    fn sad_render_backward(
        sites: FusionTensorOf<B>,
        candidates: FusionTensorOf<B>,
        grad_image: FusionTensorOf<B>,
        geometry: RenderGeometry,
        strategy: BackwardStrategy,
    ) -> FusionTensorOf<B> {
        let grads = (sites.shape.clone(), sites.dtype);
        let [grads] = queue!(format!("burn_sad::sad_render_backward::{geometry:?}::{strategy}");
            floats [sites, grad_image], ints [candidates] => [grads], [];
            float(B::sad_render_backward(sites, candidates, grad_image, geometry, strategy)))
        .floats;
        grads
    }
}
