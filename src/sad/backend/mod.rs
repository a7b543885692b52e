//! The SAD backend extensions: the differentiable render and its backward ([`SadBackend`], in
//! `render`, with its Autodiff implementation in `autodiff`), and the kernels nothing
//! differentiates ([`SadKernels`]), one trait a family with its Fusion implementation beside it
//! (`candidates`, `views`, `training`, `replay`), which run on a tensor's inner backend (see
//! `kernel_call`). Their CubeCL implementations and launches are in `cube`, the Fusion
//! implementation of the render in `fusion`, the arguments they share in `geometry`.

mod autodiff;
mod candidates;
#[cfg(feature = "cube")]
pub(crate) mod cube;
mod fusion;
mod geometry;
mod kernel_call;
mod render;
mod replay;
mod training;
mod views;

pub use candidates::SadCandidateKernels;
#[cfg(feature = "cube")]
pub(crate) use cube::plane_sums_possible;
pub use geometry::{PassConfig, RenderGeometry, SiteRecordKind};
pub(crate) use kernel_call::KernelCall;
pub use render::SadBackend;
pub use replay::SadReplayKernels;
pub use training::SadTrainingKernels;
pub use views::SadViewKernels;

/// The SAD kernels that nothing differentiates, every family: candidate lists
/// ([`SadCandidateKernels`]), render-only views ([`SadViewKernels`]), the training steps
/// ([`SadTrainingKernels`]) and a replayed iteration's ([`SadReplayKernels`]). The library calls them on the inner backend of
/// autodiff tensors, so they have no Autodiff implementation. Backends without kernels use the
/// host references (see [`exact_candidates`](crate::sad::exact_candidates)).
///
/// Sites are `[capacity, 10]` f32 in the kernels' order; candidates `[cells, 8]` i32.
pub trait SadKernels:
    SadCandidateKernels + SadViewKernels + SadTrainingKernels + SadReplayKernels
{
}

impl<B> SadKernels for B where
    B: SadCandidateKernels + SadViewKernels + SadTrainingKernels + SadReplayKernels
{
}
