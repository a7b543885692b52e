//! The differentiable render and its backward ([`SadBackend`]), on CubeCL backends, `Fusion` (see
//! `fusion`) and `Autodiff` (see `autodiff`).

use burn::backend::{
    Backend, backend_extension,
    tensor::{FloatTensor, IntTensor},
};

use super::RenderGeometry;
use crate::sad::BackwardStrategy;

/// The differentiable SAD render every backend with CubeCL kernels provides, with its
/// hand-written backward (under Autodiff, the render's backward runs
/// [`sad_render_backward`](Self::sad_render_backward)). Backends without kernels use the
/// plain-tensor reference (see [`render_reference`](crate::sad::render_reference)).
///
/// Sites are `[capacity, 10]` f32 in the kernels' order; candidates `[cells, 8]` i32.
#[backend_extension(Cube: cfg(feature = "cube"), Autodiff)]
pub trait SadBackend: Backend {
    /// Renders `[3, height, width]`; its backward (under Autodiff) runs
    /// [`sad_render_backward`](Self::sad_render_backward) with `strategy`.
    fn sad_render(
        sites: FloatTensor<Self>,
        candidates: IntTensor<Self>,
        geometry: RenderGeometry,
        strategy: BackwardStrategy,
    ) -> FloatTensor<Self>;

    /// ∂L/∂sites (`[capacity, 10]`) from ∂L/∂image.
    fn sad_render_backward(
        sites: FloatTensor<Self>,
        candidates: IntTensor<Self>,
        grad_image: FloatTensor<Self>,
        geometry: RenderGeometry,
        strategy: BackwardStrategy,
    ) -> FloatTensor<Self>;
}
