//! The SAD backend extensions: the differentiable render and its backward ([`SadBackend`], with
//! an Autodiff implementation), and the kernels nothing differentiates ([`SadKernels`]: candidate
//! lists, records, views, statistics and the training steps), which run on a tensor's inner
//! backend (see `kernel_call`).

// Without a CubeCL runtime, the extension macro's generated dispatch (no backend to forward to)
// takes every argument of every method and uses none.
#![cfg_attr(not(feature = "cube"), allow(unused_variables))]

use burn::backend::{
    Backend, backend_extension,
    tensor::{FloatTensor, IntTensor},
};
use burn_sad_kernels::sad::{AdamStep, StatisticsKind, ViewColours};

use super::{BackwardStrategy, ViewTransform};

/// The image a render produces and the candidate grid it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RenderGeometry {
    /// Image width in pixels.
    pub width: usize,
    /// Image height in pixels.
    pub height: usize,
    /// Pixels per candidate cell along each axis (1: one list per pixel).
    pub downscale: usize,
}

impl RenderGeometry {
    /// One candidate list per pixel of a `width × height` image.
    pub fn new(width: usize, height: usize) -> Self {
        Self {
            width,
            height,
            downscale: 1,
        }
    }

    /// Candidate grid width: ⌈W / downscale⌉, at least 1.
    pub fn cand_w(&self) -> usize {
        self.width.div_ceil(self.downscale.max(1)).max(1)
    }

    /// Candidate grid height: ⌈H / downscale⌉, at least 1.
    pub fn cand_h(&self) -> usize {
        self.height.div_ceil(self.downscale.max(1)).max(1)
    }

    /// Cells of the candidate grid.
    pub fn cells(&self) -> usize {
        self.cand_w() * self.cand_h()
    }

    /// 1 / max(W, H)², as the reference computes it in f32.
    pub fn inv_scale_sq(&self) -> f32 {
        let side = self.width.max(self.height) as f32;
        1.0 / (side * side)
    }
}

/// One propagation pass: the jump, the global pass counter that seeds its probes, and how many
/// probes of each kind it makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PassConfig {
    /// Distance of the 4 neighbour cells merged.
    pub jump: u32,
    /// Global pass counter.
    pub pass: u32,
    /// Random sites injected per cell.
    pub inject: u32,
    /// Sites probed near the cell's best site along the Hilbert curve.
    pub hilbert_probes: u32,
    /// Half-width of the Hilbert probe window, in curve positions.
    pub hilbert_window: u32,
}

/// Which of the two site records [`SadKernels::sad_pack_sites`] writes (see
/// `burn_sad_kernels::sad::pack_sites_kernel`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SiteRecordKind {
    /// The ranking copy the propagation pass reads: the reference's f16 rounding of the
    /// ranking inputs, with the per-site part of the key precomputed, `[capacity, 8]` u32.
    Ranking,
    /// The full record the render, the backward, the statistics and the flood read: exact
    /// values and the colour, `[capacity, 12]` u32.
    Full,
}

impl SiteRecordKind {
    /// u32 words per site.
    pub fn words(self) -> usize {
        match self {
            Self::Ranking => burn_sad_kernels::sad::PACKED_WORDS,
            Self::Full => burn_sad_kernels::sad::RECORD_WORDS,
        }
    }
}

/// The differentiable SAD render every backend with CubeCL kernels provides, with its
/// hand-written backward (under Autodiff, the render's backward runs
/// [`sad_render_backward`](Self::sad_render_backward)). Backends without kernels use the
/// plain-tensor reference (see [`render_reference`](super::render_reference)).
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

/// The SAD kernels that nothing differentiates: candidate lists, site records, debug views,
/// statistics, pruning and the training steps. The library calls them on the inner backend of
/// autodiff tensors, so they have no Autodiff implementation. Backends without kernels use the
/// host references (see [`exact_candidates`](super::exact_candidates)).
///
/// Sites are `[capacity, 10]` f32 in the kernels' order; candidates `[cells, 8]` i32.
#[backend_extension(Cube: cfg(feature = "cube"))]
pub trait SadKernels: Backend {
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

    /// [`SadBackend::sad_render`] from the full records of the sites
    /// ([`SiteRecordKind::Full`]), packed once for many renders of the same sites; not
    /// differentiable.
    fn sad_render_records(
        records: IntTensor<Self>,
        candidates: IntTensor<Self>,
        geometry: RenderGeometry,
    ) -> FloatTensor<Self>;

    /// The site that wins each pixel of the render (the live candidate of largest blend
    /// weight; −1 where none is live), from the full records of the sites
    /// ([`SiteRecordKind::Full`]): `[height, width]` i32. The debug views colour by it.
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

    /// One propagation pass, ranking from `packed`, the [`SiteRecordKind::Ranking`] records.
    fn sad_candidate_pass(
        packed: IntTensor<Self>,
        candidates: IntTensor<Self>,
        hilbert_order: IntTensor<Self>,
        hilbert_rank: IntTensor<Self>,
        geometry: RenderGeometry,
        pass: PassConfig,
    ) -> IntTensor<Self>;

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
    /// (any int tensor will do).
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

    /// One training iteration of the summed squared error against `target`, in place, for an
    /// iteration recorded once and replayed as a graph: the gradient pass, `passes` (≥ 2) tau
    /// diffusion passes from `lists` (the neighbour lists of the step before, as
    /// [`sad_diffuse_and_step`](Self::sad_diffuse_and_step) returns them, over the same
    /// `candidates` and live sites) and the Adam step, with λ and the bias corrections read
    /// from row `tick[0]` of `clock` (`[rows, CLOCK_COLUMNS]`, see
    /// `burn_sad_kernels::sad::clock_value`) instead of `step`; then `tick[0]` advances by
    /// one. `sites`, `state`, `lists` and `tick` are overwritten, whoever else holds them, and
    /// returned (the same buffers): the caller owns them alone.
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
