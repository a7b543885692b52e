//! The candidate build's kernels for the viewer: record packing, the jump flood (seeds, exact
//! ranking records, steps) and the propagation pass.

use burn_sad_kernels::sad::{
    PACK_CUBE, candidate_pass_kernel, exact_ranking_kernel, jfa_flood_kernel, pack_sites_kernel,
    seed_candidates_kernel,
};

use super::ViewerError;
use super::kernels::{
    CELL_TILE, Common, ExportedKernel, F32, LINE_CUBE, VECTOR, compile, scalar, t, tensor,
};

/// The candidate build's kernels, as `sad render` launches them.
pub(super) fn candidate_kernels(c: &Common) -> Result<Vec<ExportedKernel>, ViewerError> {
    let site_1d = [LINE_CUBE, 1, 1];
    let cell_2d = [CELL_TILE, CELL_TILE, 1];
    let mut kernels = Vec::new();
    for (name, round_to_f16) in [("pack_full", false), ("pack_ranking", true)] {
        let workgroup = [PACK_CUBE as u32, 1, 1];
        let args = vec![
            tensor("sites", "f32", 1),
            tensor("packed", "u32", 1),
            tensor("zeroed", "f32", 1),
            scalar("site_count", "usize"),
            scalar("scale", "f32"),
            scalar("offset_x", "f32"),
            scalar("offset_y", "f32"),
            scalar("log_tau_shift", "f32"),
        ];
        let kernel = pack_sites_kernel::PackSitesKernel::new(
            c.settings(workgroup),
            c.properties.clone(),
            c.target.clone(),
            t(),
            t(),
            t(),
            (),
            (),
            (),
            (),
            (),
            round_to_f16,
            0usize,
            F32,
        );
        kernels.push(compile(name, workgroup, args, kernel)?);
    }
    let args = vec![
        tensor("records", "u32", VECTOR),
        tensor("ranking", "u32", VECTOR),
        scalar("site_count", "usize"),
    ];
    let kernel = exact_ranking_kernel::ExactRankingKernel::new(
        c.settings(site_1d),
        c.properties.clone(),
        c.target.clone(),
        t(),
        t(),
        (),
        VECTOR,
    );
    kernels.push(compile("exact_ranking", site_1d, args, kernel)?);
    let args = vec![
        tensor("records", "u32", 1),
        tensor("candidates", "i32", 1),
        scalar("cand_w", "usize"),
        scalar("cand_h", "usize"),
        scalar("site_count", "usize"),
        scalar("inv_downscale", "f32"),
    ];
    let kernel = seed_candidates_kernel::SeedCandidatesKernel::new(
        c.settings(site_1d),
        c.properties.clone(),
        c.target.clone(),
        t(),
        t(),
        (),
        (),
        (),
        (),
    );
    kernels.push(compile("seed", site_1d, args, kernel)?);
    for (name, mirror) in [("flood", false), ("flood_mirror", true)] {
        let args = vec![
            tensor("ranking", "u32", VECTOR),
            tensor("candidates", "i32", VECTOR),
            tensor("output", "i32", VECTOR),
            scalar("cand_w", "usize"),
            scalar("cand_h", "usize"),
            scalar("width", "usize"),
            scalar("height", "usize"),
            scalar("downscale", "usize"),
            scalar("site_count", "usize"),
            scalar("step", "u32"),
            scalar("read_half", "u32"),
            scalar("inv_scale_sq", "f32"),
        ];
        let kernel = jfa_flood_kernel::JfaFloodKernel::new(
            c.settings(cell_2d),
            c.properties.clone(),
            c.target.clone(),
            t(),
            t(),
            t(),
            (),
            (),
            (),
            (),
            (),
            (),
            (),
            (),
            (),
            VECTOR,
            mirror,
            F32,
        );
        kernels.push(compile(name, cell_2d, args, kernel)?);
    }
    let args = vec![
        tensor("packed", "u32", VECTOR),
        tensor("input", "i32", VECTOR),
        tensor("output", "i32", VECTOR),
        tensor("hilbert_order", "i32", 1),
        tensor("hilbert_rank", "i32", 1),
        scalar("cand_w", "usize"),
        scalar("cand_h", "usize"),
        scalar("width", "usize"),
        scalar("height", "usize"),
        scalar("downscale", "usize"),
        scalar("site_count", "usize"),
        scalar("jump", "u32"),
        scalar("pass", "u32"),
        scalar("inject", "u32"),
        scalar("hilbert_probes", "u32"),
        scalar("hilbert_window", "u32"),
        scalar("inv_scale_sq", "f32"),
    ];
    let kernel = candidate_pass_kernel::CandidatePassKernel::new(
        c.settings(cell_2d),
        c.properties.clone(),
        c.target.clone(),
        t(),
        t(),
        t(),
        t(),
        t(),
        (),
        (),
        (),
        (),
        (),
        (),
        (),
        (),
        (),
        (),
        (),
        (),
        VECTOR,
        F32,
    );
    kernels.push(compile("candidate_pass", cell_2d, args, kernel)?);
    Ok(kernels)
}
