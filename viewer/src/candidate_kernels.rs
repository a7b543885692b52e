//! The candidate build's kernels for the viewer: record packing, the jump flood (seeds, exact
//! ranking records, steps) and the propagation pass.

use burn_sad_kernels::sad::{
    CELL_TILE, PACK_CUBE, candidate_pass_kernel::CandidatePassKernel,
    exact_ranking_kernel::ExactRankingKernel, jfa_flood_kernel::JfaFloodKernel,
    pack_sites_kernel::PackSitesKernel, seed_candidates_kernel::SeedCandidatesKernel,
};

use super::ViewerError;
use super::export::{Common, ExportedKernel, F32, LINE_CUBE, VECTOR, export};

/// The candidate build's kernels, as `sad render` launches them.
pub(super) fn candidate_kernels(c: &Common) -> Result<Vec<ExportedKernel>, ViewerError> {
    let site_1d = [LINE_CUBE, 1, 1];
    let cell_2d = [CELL_TILE, CELL_TILE, 1];
    let mut kernels = Vec::new();
    for (name, round_to_f16) in [("pack_full", false), ("pack_ranking", true)] {
        kernels.push(export!(c, name, [PACK_CUBE as u32, 1, 1], PackSitesKernel;
            [sites: T(f32, 1), packed: T(u32, 1), zeroed: T(f32, 1), site_count: usize,
             scale: f32, offset_x: f32, offset_y: f32, log_tau_shift: f32];
            round_to_f16, 0usize, F32)?);
    }
    kernels.push(export!(c, "exact_ranking", site_1d, ExactRankingKernel;
        [records: T(u32, VECTOR), ranking: T(u32, VECTOR), site_count: usize];
        VECTOR)?);
    for (name, clear) in [("clear_seed", true), ("seed", false)] {
        kernels.push(export!(c, name, site_1d, SeedCandidatesKernel;
            [records: T(u32, 1), candidates: T(i32, 1), grid: PixelGrid];
            clear)?);
    }
    for (name, mirror) in [("flood", false), ("flood_mirror", true)] {
        kernels.push(export!(c, name, cell_2d, JfaFloodKernel;
            [ranking: T(u32, VECTOR), candidates: T(i32, VECTOR), output: T(i32, VECTOR),
             grid: PixelGrid, step: u32, read_half: u32];
            VECTOR, mirror)?);
    }
    kernels.push(export!(c, "candidate_pass", cell_2d, CandidatePassKernel;
        [packed: T(u32, VECTOR), input: T(i32, VECTOR), output: T(i32, VECTOR),
         hilbert_order: T(i32, 1), hilbert_rank: T(i32, 1), grid: PixelGrid, pass: PassConfig];
        VECTOR)?);
    Ok(kernels)
}
