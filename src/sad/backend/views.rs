//! The render-only kernels of the debug views and of a render without gradients: the render of
//! packed site records, each pixel's winner, the views' colours and the sites' dots; on CubeCL
//! backends and on `Fusion`.

use burn::backend::{
    Backend, backend_extension,
    tensor::{FloatTensor, IntTensor},
};
use burn::tensor::{DType, Shape};
use burn_fusion::{Fusion, FusionBackend};
use burn_sad_kernels::sad::ViewColours;

use super::RenderGeometry;
use super::fusion::int;
use crate::runtime::fusion_op::{FusionTensorOf, float, queue};

/// The render-only kernels: the render of site records, the winners, the views' colours and
/// dots. Nothing differentiates them (see [`SadKernels`](super::SadKernels)).
#[backend_extension(Cube: cfg(feature = "cube"))]
pub trait SadViewKernels: Backend {
    /// [`SadBackend::sad_render`](super::SadBackend::sad_render) from the full records of the
    /// sites ([`SiteRecordKind::Full`](super::SiteRecordKind::Full)), packed once for many
    /// renders of the same sites; not differentiable.
    fn sad_render_records(
        records: IntTensor<Self>,
        candidates: IntTensor<Self>,
        geometry: RenderGeometry,
    ) -> FloatTensor<Self>;

    /// The site that wins each pixel of the render (the live candidate of largest blend
    /// weight; −1 where none is live), from the full records of the sites
    /// ([`SiteRecordKind::Full`](super::SiteRecordKind::Full)): `[height, width]` i32. The
    /// debug views colour by it.
    fn sad_winners(
        records: IntTensor<Self>,
        candidates: IntTensor<Self>,
        geometry: RenderGeometry,
    ) -> IntTensor<Self>;

    /// A debug view's colours, `[3, height, width]` in [0, 1], from each pixel's winning site
    /// (`winners`, `[height, width]`, see [`sad_winners`](Self::sad_winners)) and the sites'
    /// own values (`sites`, `[capacity, 10]`), on the colour scale `(lo, hi)`.
    fn sad_view_colours(
        sites: FloatTensor<Self>,
        winners: IntTensor<Self>,
        colours: ViewColours,
        scale: (f32, f32),
    ) -> FloatTensor<Self>;

    /// `image` (`[3, height, width]`) with each live site of the full `records` marked: its
    /// pixel white, ringed by 8 black ones.
    fn sad_mark_sites(records: IntTensor<Self>, image: FloatTensor<Self>) -> FloatTensor<Self>;
}

impl<B: FusionBackend + SadViewKernels> SadViewKernels for Fusion<B> {
    fn sad_render_records(
        records: FusionTensorOf<B>,
        candidates: FusionTensorOf<B>,
        geometry: RenderGeometry,
    ) -> FusionTensorOf<B> {
        let image = (Shape::new([3, geometry.height, geometry.width]), DType::F32);
        let [image] = queue!(format!("burn_sad::sad_render_records::{geometry:?}");
            floats [], ints [records, candidates] => [image], [];
            float(B::sad_render_records(records, candidates, geometry)))
        .floats;
        image
    }

    fn sad_winners(
        records: FusionTensorOf<B>,
        candidates: FusionTensorOf<B>,
        geometry: RenderGeometry,
    ) -> FusionTensorOf<B> {
        let winners = (Shape::new([geometry.height, geometry.width]), DType::I32);
        let [winners] = queue!(format!("burn_sad::sad_winners::{geometry:?}");
            floats [], ints [records, candidates] => [], [winners];
            int(B::sad_winners(records, candidates, geometry)))
        .ints;
        winners
    }

    fn sad_view_colours(
        sites: FusionTensorOf<B>,
        winners: FusionTensorOf<B>,
        colours: ViewColours,
        scale: (f32, f32),
    ) -> FusionTensorOf<B> {
        let image = (
            Shape::new([3, winners.shape[0], winners.shape[1]]),
            DType::F32,
        );
        let [image] = queue!(format!("burn_sad::sad_view_colours::{colours:?}::{scale:?}");
            floats [sites], ints [winners] => [image], [];
            float(B::sad_view_colours(sites, winners, colours, scale)))
        .floats;
        image
    }

    fn sad_mark_sites(records: FusionTensorOf<B>, image: FusionTensorOf<B>) -> FusionTensorOf<B> {
        let marked = (image.shape.clone(), DType::F32);
        let [marked] = queue!("burn_sad::sad_mark_sites".to_string();
            floats [image], ints [records] => [marked], [];
            float(B::sad_mark_sites(records, image)))
        .floats;
        marked
    }
}
