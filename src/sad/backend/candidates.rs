//! The candidate-list kernels: the random initial lists, the jump flood, the packed site records
//! the lists are ranked by, and a propagation pass; on CubeCL backends and on `Fusion`.

use burn::backend::{
    Backend, backend_extension,
    tensor::{FloatTensor, IntTensor},
};
use burn::tensor::{DType, Shape};
use burn_fusion::{Fusion, FusionBackend};

use super::fusion::{ids_shape, int};
use super::{PassConfig, RenderGeometry, SiteRecordKind};
use crate::runtime::fusion_op::{FusionTensorOf, queue};
use crate::sad::ViewTransform;

/// The candidate-list kernels: initial lists, the jump flood, site records and propagation passes.
/// Nothing differentiates them (see [`SadKernels`](super::SadKernels)).
#[backend_extension(Cube: cfg(feature = "cube"))]
pub trait SadCandidateKernels: Backend {
    /// Random lists from `seed`, with every active site written into its own cell's slot 0.
    fn sad_init_candidates(
        sites: FloatTensor<Self>,
        geometry: RenderGeometry,
        seed: u32,
    ) -> IntTensor<Self>;

    /// The jump-flood pre-pass of render-only mode from the full records of the sites
    /// ([`SiteRecordKind::Full`], which the renders read too): seeds, then steps P/2 … 1.
    fn sad_flood_candidates(records: IntTensor<Self>, geometry: RenderGeometry) -> IntTensor<Self>;

    /// The site records of `kind`, `[capacity, kind.words()]` u32, of the sites as `view`
    /// places them ([`ViewTransform::IDENTITY`]: as they are).
    fn sad_pack_sites(
        sites: FloatTensor<Self>,
        kind: SiteRecordKind,
        view: ViewTransform,
    ) -> IntTensor<Self>;

    /// One propagation pass, ranking from `packed`, the [`SiteRecordKind::Ranking`] records.
    fn sad_candidate_pass(
        packed: IntTensor<Self>,
        candidates: IntTensor<Self>,
        hilbert_order: IntTensor<Self>,
        hilbert_rank: IntTensor<Self>,
        geometry: RenderGeometry,
        pass: PassConfig,
    ) -> IntTensor<Self>;
}

impl<B: FusionBackend + SadCandidateKernels> SadCandidateKernels for Fusion<B> {
    fn sad_init_candidates(
        sites: FusionTensorOf<B>,
        geometry: RenderGeometry,
        seed: u32,
    ) -> FusionTensorOf<B> {
        let [ids] = queue!(format!("burn_sad::sad_init_candidates::{geometry:?}::{seed}");
            floats [sites], ints [] => [], [ids_shape(geometry)];
            int(B::sad_init_candidates(sites, geometry, seed)))
        .ints;
        ids
    }

    fn sad_flood_candidates(
        records: FusionTensorOf<B>,
        geometry: RenderGeometry,
    ) -> FusionTensorOf<B> {
        let [ids] = queue!(format!("burn_sad::sad_flood_candidates::{geometry:?}");
            floats [], ints [records] => [], [ids_shape(geometry)];
            int(B::sad_flood_candidates(records, geometry)))
        .ints;
        ids
    }

    fn sad_pack_sites(
        sites: FusionTensorOf<B>,
        kind: SiteRecordKind,
        view: ViewTransform,
    ) -> FusionTensorOf<B> {
        let packed = (Shape::new([sites.shape[0], kind.words()]), DType::U32);
        let [packed] = queue!(format!("burn_sad::sad_pack_sites::{kind:?}::{view:?}");
            floats [sites], ints [] => [], [packed];
            int(B::sad_pack_sites(sites, kind, view)))
        .ints;
        packed
    }

    fn sad_candidate_pass(
        packed: FusionTensorOf<B>,
        candidates: FusionTensorOf<B>,
        hilbert_order: FusionTensorOf<B>,
        hilbert_rank: FusionTensorOf<B>,
        geometry: RenderGeometry,
        pass: PassConfig,
    ) -> FusionTensorOf<B> {
        let [ids] = queue!(format!("burn_sad::sad_candidate_pass::{geometry:?}::{pass:?}");
        floats [], ints [packed, candidates, hilbert_order, hilbert_rank]
            => [], [ids_shape(geometry)];
        int(B::sad_candidate_pass(
            packed, candidates, hilbert_order, hilbert_rank, geometry, pass,
        )))
        .ints;
        ids
    }
}
