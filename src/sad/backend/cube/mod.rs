//! Launches of the SAD kernels on the CubeCL backend (every runtime): the render and its
//! backward in `render`, the candidate kernels in `candidates`, the training steps in `train`,
//! the device-side prune in `prune`, a replayed iteration's in `replay` (its step clock in
//! `clock`); how the per-site sums are added on each runtime in `accumulation`, the backward's
//! occupancy in `occupancy`.

mod accumulation;
mod adam;
mod candidates;
mod clock;
mod occupancy;
mod prune;
mod render;
mod replay;
mod training;
mod views;

use burn::backend::{TensorMetadata, ops::IntTensorOps};
use burn::tensor::{DType, IntDType, Shape};
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};
use burn_sad_kernels::sad::{
    AdamStep, BackwardOutputs, CELL_TILE, K, PixelGrid, PixelGridLaunch, RECORD_WORDS, SITE_PARAMS,
    StatisticsKind, TILE, ViewColours,
};
use cubecl::{CubeCount, CubeDim};

pub(crate) use accumulation::plane_sums_possible;
use accumulation::{full_plane_masks, plane_sums, table_sums};
#[cfg(feature = "kernel-report")]
pub(crate) use accumulation::{plane_sums_for, table_sums_for};
#[cfg(feature = "kernel-report")]
pub(crate) use candidates::record_vector_size;
use clock::Clock;
use render::{backward, render_records};

use super::{SadCandidateKernels, SadReplayKernels, SadTrainingKernels, SadViewKernels};
use crate::runtime::launch::{empty_contiguous, empty_f32, expect_dims, expect_rows_of};
use crate::sad::{
    BackwardStrategy, PassConfig, RenderGeometry, SadBackend, SiteRecordKind, ViewTransform,
};

fn image_grid(geometry: RenderGeometry) -> (CubeCount, CubeDim) {
    (
        CubeCount::Static(
            geometry.width.div_ceil(TILE) as u32,
            geometry.height.div_ceil(TILE) as u32,
            1,
        ),
        CubeDim::new_2d(TILE as u32, TILE as u32),
    )
}

/// How many cubes [`image_grid`] launches.
fn image_grid_cubes(geometry: RenderGeometry) -> u32 {
    (geometry.width.div_ceil(TILE) * geometry.height.div_ceil(TILE)) as u32
}

fn cell_grid(geometry: RenderGeometry) -> (CubeCount, CubeDim) {
    (
        CubeCount::Static(
            (geometry.cand_w() as u32).div_ceil(CELL_TILE),
            (geometry.cand_h() as u32).div_ceil(CELL_TILE),
            1,
        ),
        CubeDim::new_2d(CELL_TILE, CELL_TILE),
    )
}

/// The per-pixel and per-cell kernels' [`PixelGrid`] of `geometry` over the site records or
/// sites `sites`.
fn pixel_grid(geometry: RenderGeometry, sites: &CubeTensor) -> PixelGridLaunch {
    PixelGrid {
        width: geometry.width,
        height: geometry.height,
        cand_w: geometry.cand_w(),
        cand_h: geometry.cand_h(),
        downscale: geometry.downscale.max(1),
        site_count: capacity(sites),
        inv_scale_sq: geometry.inv_scale_sq(),
    }
    .launch_arg()
}

fn site_grid(sites: usize) -> (CubeCount, CubeDim) {
    (
        CubeCount::Static((sites as u32).div_ceil(256).max(1), 1, 1),
        CubeDim::new_1d(256),
    )
}

/// Checks the shapes every per-pixel and per-cell kernel indexes by: `sites` `[capacity, 10]`
/// and `candidates` `[cells, K]` of `geometry`.
#[track_caller]
fn expect_sites_and_lists(
    op: &str,
    sites: &CubeTensor,
    candidates: &CubeTensor,
    geometry: RenderGeometry,
) {
    expect_rows_of(op, "the sites", sites, SITE_PARAMS);
    expect_dims(
        op,
        "the candidate lists",
        candidates,
        &[geometry.cells(), K],
    );
}

/// Full site records and candidate lists made contiguous and checked, for the kernels that
/// read records per pixel (the render, the winners).
fn records_and_lists(
    op: &str,
    records: CubeTensor,
    candidates: CubeTensor,
    geometry: RenderGeometry,
) -> (CubeTensor, CubeTensor) {
    let records = into_contiguous(records);
    let candidates = ids(candidates);
    expect_rows_of(op, "the site records", &records, RECORD_WORDS);
    expect_dims(
        op,
        "the candidate lists",
        &candidates,
        &[geometry.cells(), K],
    );
    (records, candidates)
}

fn capacity(sites: &CubeTensor) -> usize {
    sites.shape()[0]
}

/// Candidate ids as contiguous i32, whatever int type they arrived in.
fn ids(candidates: CubeTensor) -> CubeTensor {
    let candidates = if candidates.dtype == DType::I32 {
        candidates
    } else {
        CubeBackend::int_cast(candidates, IntDType::I32)
    };
    into_contiguous(candidates)
}

fn empty_i32(like: &CubeTensor, shape: Shape) -> CubeTensor {
    empty_contiguous(like, shape, DType::I32)
}

/// Uninitialised candidate lists, for kernels that write every slot of every cell (no fill
/// launch: at 3840×2160 a fill writes 265 MB).
fn unfilled_ids(like: &CubeTensor, geometry: RenderGeometry) -> CubeTensor {
    empty_i32(like, Shape::new([geometry.cells(), K]))
}

/// Candidate lists with every slot [`EMPTY`](burn_sad_kernels::sad::EMPTY), for kernels that
/// write only some slots.
fn empty_ids(sites: &CubeTensor, geometry: RenderGeometry) -> CubeTensor {
    CubeBackend::int_full(
        Shape::new([geometry.cells(), K]),
        (-1i32).into(),
        &sites.device,
        IntDType::I32,
    )
}

impl SadBackend for CubeBackend {
    fn sad_render(
        sites: CubeTensor,
        candidates: CubeTensor,
        geometry: RenderGeometry,
        _strategy: BackwardStrategy,
    ) -> CubeTensor {
        let sites = into_contiguous(sites);
        let candidates = ids(candidates);
        expect_sites_and_lists("sad_render", &sites, &candidates, geometry);
        render_records(candidates::site_records(&sites), candidates, geometry)
    }

    fn sad_render_backward(
        sites: CubeTensor,
        candidates: CubeTensor,
        grad_image: CubeTensor,
        geometry: RenderGeometry,
        strategy: BackwardStrategy,
    ) -> CubeTensor {
        let outputs = BackwardOutputs {
            from_target: false,
            removal: false,
        };
        backward(sites, candidates, grad_image, geometry, outputs, strategy)
    }
}

impl SadViewKernels for CubeBackend {
    fn sad_render_records(
        records: CubeTensor,
        candidates: CubeTensor,
        geometry: RenderGeometry,
    ) -> CubeTensor {
        let (records, candidates) =
            records_and_lists("sad_render_records", records, candidates, geometry);
        render_records(records, candidates, geometry)
    }

    fn sad_winners(
        records: CubeTensor,
        candidates: CubeTensor,
        geometry: RenderGeometry,
    ) -> CubeTensor {
        let (records, candidates) = records_and_lists("sad_winners", records, candidates, geometry);
        render::winners(records, candidates, geometry)
    }

    fn sad_view_colours(
        sites: CubeTensor,
        winners: CubeTensor,
        colours: ViewColours,
        scale: (f32, f32),
    ) -> CubeTensor {
        views::colours(sites, winners, colours, scale)
    }

    fn sad_mark_sites(records: CubeTensor, image: CubeTensor) -> CubeTensor {
        views::mark_sites(records, image)
    }
}

impl SadCandidateKernels for CubeBackend {
    fn sad_init_candidates(sites: CubeTensor, geometry: RenderGeometry, seed: u32) -> CubeTensor {
        candidates::init_candidates(sites, geometry, seed)
    }

    fn sad_flood_candidates(records: CubeTensor, geometry: RenderGeometry) -> CubeTensor {
        candidates::flood_candidates(records, geometry)
    }

    fn sad_pack_sites(sites: CubeTensor, kind: SiteRecordKind, view: ViewTransform) -> CubeTensor {
        candidates::pack_sites(sites, kind, view)
    }

    fn sad_candidate_pass(
        packed: CubeTensor,
        candidates: CubeTensor,
        hilbert_order: CubeTensor,
        hilbert_rank: CubeTensor,
        geometry: RenderGeometry,
        pass: PassConfig,
    ) -> CubeTensor {
        candidates::candidate_pass(
            packed,
            candidates,
            hilbert_order,
            hilbert_rank,
            geometry,
            pass,
        )
    }
}

impl SadTrainingKernels for CubeBackend {
    fn sad_squared_error_gradients(
        sites: CubeTensor,
        candidates: CubeTensor,
        target: CubeTensor,
        geometry: RenderGeometry,
        removal: bool,
        strategy: BackwardStrategy,
    ) -> CubeTensor {
        let outputs = BackwardOutputs {
            from_target: true,
            removal,
        };
        backward(sites, candidates, target, geometry, outputs, strategy)
    }

    fn sad_site_statistics(
        sites: CubeTensor,
        candidates: CubeTensor,
        target: CubeTensor,
        geometry: RenderGeometry,
        kind: StatisticsKind,
    ) -> CubeTensor {
        training::site_statistics(sites, candidates, target, geometry, kind)
    }

    fn sad_tau_diffusion(
        sites: CubeTensor,
        candidates: CubeTensor,
        grads: CubeTensor,
        geometry: RenderGeometry,
        lambda: f32,
        passes: u32,
    ) -> CubeTensor {
        training::tau_diffusion(sites, candidates, grads, geometry, lambda, passes)
    }

    fn sad_prune(sites: CubeTensor, removal: CubeTensor, count: usize, norm: f32) -> CubeTensor {
        prune::prune(sites, removal, count, norm)
    }

    fn sad_diffuse_and_step(
        sites: CubeTensor,
        candidates: CubeTensor,
        grads: CubeTensor,
        state: CubeTensor,
        kept: CubeTensor,
        use_kept: bool,
        step: AdamStep,
        geometry: RenderGeometry,
        lambda: f32,
        passes: u32,
    ) -> (CubeTensor, CubeTensor, CubeTensor) {
        adam::diffuse_and_step(
            sites,
            candidates,
            grads,
            state,
            use_kept.then_some(kept),
            step,
            (geometry, lambda, passes),
        )
    }

    fn sad_adam_step(
        sites: CubeTensor,
        grads: CubeTensor,
        tau_grads: CubeTensor,
        state: CubeTensor,
        step: AdamStep,
    ) -> (CubeTensor, CubeTensor) {
        adam::adam_step(sites, grads, tau_grads, state, step)
    }
}

impl SadReplayKernels for CubeBackend {
    fn sad_step_in_place(
        sites: CubeTensor,
        state: CubeTensor,
        lists: CubeTensor,
        candidates: CubeTensor,
        target: CubeTensor,
        clock: CubeTensor,
        tick: CubeTensor,
        step: AdamStep,
        geometry: RenderGeometry,
        passes: u32,
        strategy: BackwardStrategy,
    ) -> (CubeTensor, CubeTensor, CubeTensor) {
        let clock = Clock { table: clock, tick };
        replay::step_in_place(
            (&sites, &state, &lists),
            candidates,
            target,
            clock,
            step,
            (geometry, passes, strategy),
        );
        (sites, state, lists)
    }

    fn sad_copy_state(
        sites: CubeTensor,
        state: CubeTensor,
        lists: CubeTensor,
        candidates: CubeTensor,
        sites_into: CubeTensor,
        state_into: CubeTensor,
        lists_into: CubeTensor,
        candidates_into: CubeTensor,
        tick: CubeTensor,
        iteration: Option<u32>,
    ) -> (CubeTensor, CubeTensor, CubeTensor, CubeTensor, CubeTensor) {
        replay::copy_state(
            [sites, state, lists, candidates],
            [&sites_into, &state_into, &lists_into, &candidates_into],
            iteration.map(|iteration| (&tick, iteration)),
        );
        (sites_into, state_into, lists_into, candidates_into, tick)
    }
}
