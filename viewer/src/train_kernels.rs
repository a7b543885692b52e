//! The training step's kernels for the trainer page, as `sad fit` launches them on a WGSL
//! device: the random candidate lists, the packing that zeroes the sums, the squared-error
//! backward (no plane sums, fixed-point table sums), the per-site statistics, the tau diffusion
//! passes, Adam with the last pass inside, and the prune's radix select.

use burn_sad_kernels::sad::{
    ADAM_CUBE, BackwardOutputs, CELL_TILE, DENSIFY_STATS, NeighbourSource, PACK_CUBE, PlaneSums,
    RADIX_BINS, SITE_PARAMS, StatisticsKind, TILE, TableSums, adam_kernel::AdamKernel,
    init_candidates_kernel::InitCandidatesKernel, pack_sites_kernel::PackSitesKernel,
    prune_choose_kernel::PruneChooseKernel, prune_histogram_kernel::PruneHistogramKernel,
    prune_mark_kernel::PruneMarkKernel, prune_start_kernel::PruneStartKernel,
    render_backward_kernel::RenderBackwardKernel, site_statistics_kernel::SiteStatisticsKernel,
    tau_diffusion_kernel::TauDiffusionKernel,
};

use super::ViewerError;
use super::export::{Common, ExportedKernel, F32, LINE_CUBE, VECTOR, export};

/// The training kernels, as `sad fit` launches them on a device without float atomics.
pub(super) fn train_kernels(c: &Common) -> Result<Vec<ExportedKernel>, ViewerError> {
    let tile_2d = [TILE as u32, TILE as u32, 1];
    let cell_2d = [CELL_TILE, CELL_TILE, 1];
    let line = [LINE_CUBE, 1, 1];
    let mut kernels = Vec::new();
    kernels.push(export!(c, "init_candidates", cell_2d, InitCandidatesKernel;
        [candidates: T(i32, 1), cand_w: usize, cand_h: usize, site_count: u32, seed: u32];)?);
    // The full records, with the sums' buffer zeroed in the same launch.
    for (name, columns) in [
        ("pack_gradients", SITE_PARAMS),
        ("pack_densify", DENSIFY_STATS),
        ("pack_removal", 1),
    ] {
        kernels.push(export!(c, name, [PACK_CUBE as u32, 1, 1], PackSitesKernel;
            [sites: T(f32, 1), packed: T(u32, 1), zeroed: T(f32, 1), site_count: usize,
             scale: f32, offset_x: f32, offset_y: f32, log_tau_shift: f32];
            false, columns, F32)?);
    }
    let squared_error = BackwardOutputs {
        from_target: true,
        removal: false,
    };
    kernels.push(export!(c, "backward", tile_2d, RenderBackwardKernel;
        [records: T(u32, VECTOR), candidates: T(i32, VECTOR), grad_image: T(f32, 1),
         grads: T(f32, 1), grid: PixelGrid];
        VECTOR, squared_error, TableSums::Fixed, PlaneSums::Off, 0u32, false, F32)?);
    for (name, kind) in [
        ("statistics_densify", StatisticsKind::Densify),
        ("statistics_removal", StatisticsKind::RemovalDelta),
    ] {
        kernels.push(export!(c, name, tile_2d, SiteStatisticsKernel;
            [records: T(u32, VECTOR), candidates: T(i32, VECTOR), target: T(f32, 1),
             stats: T(f32, 1), grid: PixelGrid];
            VECTOR, kind, TableSums::Bits, F32)?);
    }
    for (name, source) in [
        ("tau_find", NeighbourSource::Find),
        ("tau_list", NeighbourSource::List),
    ] {
        kernels.push(export!(c, name, line, TauDiffusionKernel;
            [sites: T(f32, 1), candidates: T(i32, 1), kept: T(i32, 1), list: T(i32, 1),
             raw: T(f32, 1), raw_stride: usize, raw_offset: usize, input: T(f32, 1),
             output: T(f32, 1), neighbours: TauNeighbours, site_count: usize, clock: T(f32, 1),
             tick: T(u32, 1)];
            source, false)?);
    }
    let adam_cube = [ADAM_CUBE as u32, 1, 1];
    // Unclocked: the clock's tensors are bound but not read.
    kernels.push(export!(c, "adam", adam_cube, AdamKernel;
        [sites: T(f32, 1), grads: T(f32, 1), tau: T(f32, 1), list: T(i32, 1), state: T(f32, 1),
         out_sites: T(f32, 1), out_state: T(f32, 1), step: AdamStep, neighbours: TauNeighbours,
         site_count: usize, clock: T(f32, 1), tick: T(u32, 1)];
        false, false)?);
    let one_cube = [RADIX_BINS as u32, 1, 1];
    kernels.push(export!(c, "prune_start", one_cube, PruneStartKernel;
        [state: T(u32, 1), histogram: T(u32, 1), count: u32];)?);
    kernels.push(
        export!(c, "prune_histogram", one_cube, PruneHistogramKernel;
        [sites: T(f32, 1), removal: T(f32, 1), state: T(u32, 1), histogram: T(u32, 1),
         norm: f32, site_count: usize, digit: RadixDigit];)?,
    );
    kernels.push(export!(c, "prune_choose", one_cube, PruneChooseKernel;
        [state: T(u32, 1), histogram: T(u32, 1), word: u32, shift: u32];)?);
    kernels.push(export!(c, "prune_mark", one_cube, PruneMarkKernel;
        [sites: T(f32, 1), removal: T(f32, 1), state: T(u32, 1), out_sites: T(f32, 1),
         norm: f32, site_count: usize];)?);
    Ok(kernels)
}
