//! The SAD kernels of the report: the render, its backward as a fit and as a loss of a model
//! launch it, the densify statistics, and the candidate kernels.

use burn_sad_kernels::sad::PassConfig;
use burn_sad_kernels::sad::{
    BackwardOutputs, CELL_TILE, PixelGrid, PixelGridCompilationArg, StatisticsKind, TILE,
    candidate_pass_kernel::CandidatePassKernel, jfa_flood_kernel::JfaFloodKernel,
    render_backward_kernel::RenderBackwardKernel, render_kernel::RenderKernel,
    seed_candidates_kernel::SeedCandidatesKernel, site_statistics_kernel::SiteStatisticsKernel,
};
use cubecl::CubeDim;

use super::{CudaKernel, F32, KernelReportError, LoopTrips, OfflineCuda, Work, tensor};
use crate::runtime::capabilities::Capabilities;
use crate::sad::BackwardStrategy;
use crate::sad::backend::cube::{plane_sums_for, record_vector_size, table_sums_for};

/// Units of the per-site kernels' cubes.
const SITE_CUBE: u32 = 256;

fn grid() -> PixelGridCompilationArg {
    PixelGrid::compilation_arg()
}

/// One cube of a per-pixel kernel: a pixel per unit of a `TILE × TILE` tile.
fn pixels() -> (CubeDim, Work) {
    (
        CubeDim::new_2d(TILE as u32, TILE as u32),
        Work {
            outputs: TILE * TILE,
            unit: "pixel",
            loops: LoopTrips::DataDependent,
        },
    )
}

pub(super) fn kernels(device: &OfflineCuda) -> Result<Vec<CudaKernel>, KernelReportError> {
    let vector = record_vector_size();
    let capabilities = Capabilities::from_properties(&device.properties, true);
    let mut kernels = Vec::new();

    let (dim, work) = pixels();
    let render = kernel!(
        device,
        dim,
        RenderKernel,
        tensor(),
        tensor(),
        tensor(),
        grid(),
        vector,
        F32,
    );
    kernels.push(device.compile("sad_render".to_string(), dim, work, render)?);

    let plane_sums = plane_sums_for(&capabilities, BackwardStrategy::Auto).map_err(|reason| {
        KernelReportError::Compile {
            kernel: "sad_backward".to_string(),
            reason,
        }
    })?;
    // A fit's backward forms the squared error's gradient from the target (fixed-point sums);
    // a model's takes an arbitrary upstream gradient (float sums).
    for (variant, from_target) in [("fit", true), ("loss", false)] {
        let (dim, work) = pixels();
        let outputs = BackwardOutputs {
            from_target,
            removal: false,
        };
        let backward = kernel!(
            device,
            dim,
            RenderBackwardKernel,
            tensor(),
            tensor(),
            tensor(),
            tensor(),
            grid(),
            vector,
            outputs,
            table_sums_for(&capabilities, from_target),
            plane_sums,
            0u32,
            false,
            F32,
        );
        let name = format!("sad_backward.{variant}");
        kernels.push(device.compile(name, dim, work, backward)?);
    }

    let (dim, work) = pixels();
    let statistics = kernel!(
        device,
        dim,
        SiteStatisticsKernel,
        tensor(),
        tensor(),
        tensor(),
        tensor(),
        grid(),
        vector,
        StatisticsKind::Densify,
        table_sums_for(&capabilities, false),
        F32,
    );
    let name = "sad_statistics.densify".to_string();
    kernels.push(device.compile(name, dim, work, statistics)?);

    let cell_dim = CubeDim::new_2d(CELL_TILE, CELL_TILE);
    let cells = || Work {
        outputs: (CELL_TILE * CELL_TILE) as usize,
        unit: "cell",
        loops: LoopTrips::DataDependent,
    };
    let pass = kernel!(
        device,
        cell_dim,
        CandidatePassKernel,
        tensor(),
        tensor(),
        tensor(),
        tensor(),
        tensor(),
        grid(),
        PassConfig::compilation_arg(),
        vector,
    );
    kernels.push(device.compile("sad_candidate_pass".to_string(), cell_dim, cells(), pass)?);
    for (variant, mirror) in [("flood", false), ("flood.mirror", true)] {
        let flood = kernel!(
            device,
            cell_dim,
            JfaFloodKernel,
            tensor(),
            tensor(),
            tensor(),
            grid(),
            (),
            (),
            vector,
            mirror,
        );
        let name = format!("sad_candidates.{variant}");
        kernels.push(device.compile(name, cell_dim, cells(), flood)?);
    }
    let site_dim = CubeDim::new_1d(SITE_CUBE);
    for (variant, clear) in [("seed.clear", true), ("seed", false)] {
        let seed = kernel!(
            device,
            site_dim,
            SeedCandidatesKernel,
            tensor(),
            tensor(),
            grid(),
            clear,
        );
        let work = Work {
            outputs: SITE_CUBE as usize,
            unit: "site",
            loops: LoopTrips::DataDependent,
        };
        let name = format!("sad_candidates.{variant}");
        kernels.push(device.compile(name, site_dim, work, seed)?);
    }
    Ok(kernels)
}
