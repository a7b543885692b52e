//! The SAD kernels on the CubeCL backend (every runtime): each kernel family's `CubeBackend` impl
//! in the file of its launches. `render`: the render and its backward (`SadBackend`); `views`: the
//! debug views (`SadViewKernels`); `candidates`: the candidate lists (`SadCandidateKernels`);
//! `training`: the training steps (`SadTrainingKernels`, with tau diffusion in `diffusion`, Adam's
//! launches in `adam` and the device-side prune in `prune`); `replay`: a replayed iteration
//! (`SadReplayKernels`, its step clock in `clock`). How the per-site sums are added on each runtime
//! is in `accumulation`, the backward's occupancy in `occupancy`; the grids and checks the launches
//! share are here.

mod accumulation;
mod adam;
mod candidates;
mod clock;
mod diffusion;
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
    CELL_TILE, K, PixelGrid, PixelGridLaunch, RECORD_WORDS, SITE_PARAMS, TILE,
};
use cubecl::{CubeCount, CubeDim};

pub(crate) use accumulation::plane_sums_possible;
use accumulation::{full_plane_masks, plane_sums, table_sums};
#[cfg(feature = "kernel-report")]
pub(crate) use accumulation::{plane_sums_for, table_sums_for};
#[cfg(feature = "kernel-report")]
pub(crate) use candidates::record_vector_size;
use render::backward;

use crate::runtime::launch::{empty_contiguous, empty_f32, expect_dims, expect_rows_of};
use crate::sad::RenderGeometry;

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
