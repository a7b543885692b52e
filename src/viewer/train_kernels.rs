//! The training step's kernels for the trainer page, as `sad fit` launches them on a WGSL
//! device: the random candidate lists, the packing that zeroes the sums, the squared-error
//! backward (no plane sums, fixed-point table sums), the per-site statistics, the tau diffusion
//! passes, Adam with the last pass inside, and the prune's radix select.

use burn_sad_kernels::sad::AdamStepCompilationArg;
use burn_sad_kernels::sad::{
    ADAM_CUBE, BackwardOutputs, DENSIFY_STATS, NeighbourSource, PACK_CUBE, PlaneSums, RADIX_BINS,
    SITE_PARAMS, StatisticsKind, TILE, TableSums, TauNeighboursCompilationArg,
    adam_kernel::AdamKernel, init_candidates_kernel::InitCandidatesKernel,
    pack_sites_kernel::PackSitesKernel, prune_choose_kernel::PruneChooseKernel,
    prune_histogram_kernel::PruneHistogramKernel, prune_mark_kernel::PruneMarkKernel,
    prune_start_kernel::PruneStartKernel, render_backward_kernel::RenderBackwardKernel,
    site_statistics_kernel::SiteStatisticsKernel, tau_diffusion_kernel::TauDiffusionKernel,
};

use super::ViewerError;
use super::export::{
    CELL_TILE, Common, ExportedKernel, F32, KernelArg, LINE_CUBE, VECTOR, compile, export, scalar,
    t, tensor,
};

/// `TauNeighbours`' compilation argument: every field is a runtime scalar.
fn neighbours_arg() -> TauNeighboursCompilationArg {
    TauNeighboursCompilationArg {
        input_stride: (),
        input_offset: (),
        cand_w: (),
        cand_h: (),
        inv_downscale: (),
        lambda: (),
    }
}

/// The arguments that end the tau diffusion's and Adam's lists: the neighbour description
/// (`TauNeighbours`, field by field, as a struct argument's fields take their places among the
/// scalars), the site count and the clock's two tensors (bound but not read by an unclocked
/// launch).
fn diffusion_tail() -> [KernelArg; 9] {
    [
        scalar("input_stride", "usize"),
        scalar("input_offset", "usize"),
        scalar("cand_w", "usize"),
        scalar("cand_h", "usize"),
        scalar("inv_downscale", "f32"),
        scalar("lambda", "f32"),
        scalar("site_count", "usize"),
        tensor("clock", "f32", 1),
        tensor("tick", "u32", 1),
    ]
}

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
        let mut args = vec![
            tensor("sites", "f32", 1),
            tensor("candidates", "i32", 1),
            tensor("kept", "i32", 1),
            tensor("list", "i32", 1),
            tensor("raw", "f32", 1),
            scalar("raw_stride", "usize"),
            scalar("raw_offset", "usize"),
            tensor("input", "f32", 1),
            tensor("output", "f32", 1),
        ];
        args.extend(diffusion_tail());
        let kernel = TauDiffusionKernel::new(
            c.settings(line),
            c.properties.clone(),
            c.target.clone(),
            t(),
            t(),
            t(),
            t(),
            t(),
            (),
            (),
            t(),
            t(),
            neighbours_arg(),
            (),
            t(),
            t(),
            source,
            false,
        );
        kernels.push(compile(name, line, args, kernel)?);
    }
    let mut args = vec![
        tensor("sites", "f32", 1),
        tensor("grads", "f32", 1),
        tensor("tau", "f32", 1),
        tensor("list", "i32", 1),
        tensor("state", "f32", 1),
        tensor("out_sites", "f32", 1),
        tensor("out_state", "f32", 1),
    ];
    args.extend(
        [
            "lr_position",
            "lr_log_tau",
            "lr_radius",
            "lr_color",
            "lr_direction",
            "lr_log_aniso",
            "beta1",
            "beta2",
            "eps",
            "correction1",
            "correction2",
            "grad_scale",
            "max_x",
            "max_y",
        ]
        .map(|name| scalar(name, "f32")),
    );
    args.extend(diffusion_tail());
    let adam_cube = [ADAM_CUBE as u32, 1, 1];
    let kernel = AdamKernel::new(
        c.settings(adam_cube),
        c.properties.clone(),
        c.target.clone(),
        t(),
        t(),
        t(),
        t(),
        t(),
        t(),
        t(),
        AdamStepCompilationArg {
            lr_position: (),
            lr_log_tau: (),
            lr_radius: (),
            lr_color: (),
            lr_direction: (),
            lr_log_aniso: (),
            beta1: (),
            beta2: (),
            eps: (),
            correction1: (),
            correction2: (),
            grad_scale: (),
            max_x: (),
            max_y: (),
        },
        neighbours_arg(),
        (),
        t(),
        t(),
        false,
        false,
    );
    kernels.push(compile("adam", adam_cube, args, kernel)?);
    let one_cube = [RADIX_BINS as u32, 1, 1];
    kernels.push(export!(c, "prune_start", one_cube, PruneStartKernel;
        [state: T(u32, 1), histogram: T(u32, 1), count: u32];)?);
    kernels.push(
        export!(c, "prune_histogram", one_cube, PruneHistogramKernel;
        [sites: T(f32, 1), removal: T(f32, 1), state: T(u32, 1), histogram: T(u32, 1),
         norm: f32, site_count: usize, word: u32, shift: u32, key_mask: u32, id_mask: u32];)?,
    );
    kernels.push(export!(c, "prune_choose", one_cube, PruneChooseKernel;
        [state: T(u32, 1), histogram: T(u32, 1), word: u32, shift: u32];)?);
    kernels.push(export!(c, "prune_mark", one_cube, PruneMarkKernel;
        [sites: T(f32, 1), removal: T(f32, 1), state: T(u32, 1), out_sites: T(f32, 1),
         norm: f32, site_count: usize];)?);
    Ok(kernels)
}
