//! Launches of the candidate-list kernels: random init, jump flood, propagation passes.

use burn::backend::cubecl::dtype_to_storage_type;
use burn::tensor::{DType, Shape};
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};
use burn_sad_kernels::sad::{
    K, PACK_CUBE, PACKED_WORDS, RECORD_WORDS, SITE_PARAMS, candidate_pass_kernel,
    exact_ranking_kernel, init_candidates_kernel, jfa_flood_kernel, pack_sites_kernel,
    seed_candidates_kernel,
};
use cubecl::{CubeCount, CubeDim};

use super::super::SadCandidateKernels;
use super::{
    capacity, cell_grid, empty_i32, empty_ids, expect_sites_and_lists, ids, pixel_grid, site_grid,
    unfilled_ids,
};
use crate::runtime::launch::{
    empty_contiguous, expect_dims, expect_len_at_least, expect_rows_of, launch_kernel,
};
use crate::sad::{PassConfig, RenderGeometry, SiteRecordKind, ViewTransform};

/// The full records of contiguous `sites`, `[capacity, RECORD_WORDS]` u32, which the render,
/// the backward, the statistics and the flood read.
pub(super) fn site_records(sites: &CubeTensor) -> CubeTensor {
    records_of(sites, false, 0, ViewTransform::IDENTITY).0
}

/// [`site_records`], and a zeroed f32 accumulator of `columns` per site written by the same
/// launch, for the kernel that reads the records and adds into it.
pub(super) fn site_records_and_zeros(
    sites: &CubeTensor,
    columns: usize,
) -> (CubeTensor, CubeTensor) {
    records_of(sites, false, columns, ViewTransform::IDENTITY)
}

/// The ranking copy (`round_to_f16`) or the full records of contiguous `sites` as `view` places
/// them, and a `[capacity, zero_columns]` f32 tensor, zeroed where `zero_columns` > 0 (else one
/// unwritten element: the kernel's argument must be bound to something).
fn records_of(
    sites: &CubeTensor,
    round_to_f16: bool,
    zero_columns: usize,
    view: ViewTransform,
) -> (CubeTensor, CubeTensor) {
    let count_sites = expect_rows_of("sad_pack_sites", "the sites", sites, SITE_PARAMS);
    let words = if round_to_f16 {
        PACKED_WORDS
    } else {
        RECORD_WORDS
    };
    let packed = empty_contiguous(sites, Shape::new([count_sites, words]), DType::U32);
    let zeroed_shape = match zero_columns {
        0 => Shape::new([1]),
        columns => Shape::new([count_sites, columns]),
    };
    let zeroed = empty_contiguous(sites, zeroed_shape, DType::F32);
    let count = CubeCount::Static((count_sites as u32).div_ceil(PACK_CUBE as u32).max(1), 1, 1);
    let dim = CubeDim::new_1d(PACK_CUBE as u32);
    launch_kernel!(pack_sites_kernel(
        &sites.client,
        count,
        dim,
        sites.clone().into_tensor_arg(),
        packed.clone().into_tensor_arg(),
        zeroed.clone().into_tensor_arg(),
        count_sites,
        view.scale,
        view.offset_x,
        view.offset_y,
        view.log_tau_shift,
        round_to_f16,
        zero_columns,
        dtype_to_storage_type(sites.dtype),
    ));
    (packed, zeroed)
}

/// Words in one 16-byte load.
const RANKING_LOAD_WORDS: usize = 4;

/// Words per load of the site records: every kernel reads them in 16-byte vectors.
pub(crate) fn record_vector_size() -> usize {
    RANKING_LOAD_WORDS
}

/// Writes every active site into slot 0 of its cell, from the full records `records`: with
/// `clear_first` empties those slots (lists that hold ids), then the highest id of each cell
/// takes it (the same seeds from run to run).
fn seed_sites(
    records: &CubeTensor,
    candidates: &CubeTensor,
    geometry: RenderGeometry,
    clear_first: bool,
) {
    let (count, dim) = site_grid(capacity(records));
    let passes: &[bool] = if clear_first {
        &[true, false]
    } else {
        &[false]
    };
    for &clear in passes {
        launch_kernel!(seed_candidates_kernel(
            &records.client,
            count.clone(),
            dim,
            records.clone().into_tensor_arg(),
            candidates.clone().into_tensor_arg(),
            pixel_grid(geometry, records),
            clear,
        ));
    }
}

impl SadCandidateKernels for CubeBackend {
    fn sad_init_candidates(sites: CubeTensor, geometry: RenderGeometry, seed: u32) -> CubeTensor {
        let sites = into_contiguous(sites);
        let candidates = unfilled_ids(&sites, geometry);
        expect_sites_and_lists("sad_init_candidates", &sites, &candidates, geometry);
        let (count, dim) = cell_grid(geometry);
        let records = site_records(&sites);
        launch_kernel!(init_candidates_kernel(
            &sites.client,
            count,
            dim,
            candidates.clone().into_tensor_arg(),
            geometry.cand_w(),
            geometry.cand_h(),
            capacity(&sites) as u32,
            seed,
        ));
        seed_sites(&records, &candidates, geometry, true);
        candidates
    }

    /// The jump flood from the full records `records` (`[capacity, RECORD_WORDS]` u32): seeds,
    /// copies their ranking words into exact 32-byte records, then steps P/2 … 1 in place; where
    /// the last step writes the upper half, it writes both halves of a new tensor instead (the
    /// reference copies the upper half over the lower one).
    fn sad_flood_candidates(records: CubeTensor, geometry: RenderGeometry) -> CubeTensor {
        let op = "sad_flood_candidates";
        let records = into_contiguous(records);
        let sites = expect_rows_of(op, "the site records", &records, RECORD_WORDS);
        let mut candidates = empty_ids(&records, geometry);
        // Every slot is EMPTY already: no clearing launch.
        seed_sites(&records, &candidates, geometry, false);
        // The flood ranks by exact keys, as the reference's f32 flood does.
        let (count, dim) = cell_grid(geometry);
        // The flood reads 8 words of each record: from 32-byte records, one aligned sector (the
        // first 32 bytes of a 48-byte record straddle two sectors for every other site); measured
        // faster in benches/RESULTS.md.
        let ranking = empty_contiguous(&records, Shape::new([sites, PACKED_WORDS]), DType::U32);
        let (site_count, site_dim) = site_grid(sites);
        launch_kernel!(exact_ranking_kernel(
            &records.client,
            site_count,
            site_dim,
            record_vector_size(),
            records.clone().into_tensor_arg(),
            ranking.clone().into_tensor_arg(),
            sites,
        ));
        let top = geometry.cand_w().max(geometry.cand_h()).next_power_of_two() as u32;
        let mut step = top / 2;
        let mut read_half = 0u32;
        while step >= 1 {
            let mirror = step == 1 && read_half == 0;
            let output = if mirror {
                unfilled_ids(&records, geometry)
            } else {
                // Unused; one list long, so that it holds a whole vector of ids.
                empty_i32(&records, Shape::new([K]))
            };
            launch_kernel!(jfa_flood_kernel(
                &records.client,
                count.clone(),
                dim,
                record_vector_size(),
                ranking.clone().into_tensor_arg(),
                candidates.clone().into_tensor_arg(),
                output.clone().into_tensor_arg(),
                pixel_grid(geometry, &ranking),
                step,
                read_half,
                mirror,
            ));
            if mirror {
                candidates = output;
            }
            read_half ^= 1;
            step /= 2;
        }
        candidates
    }

    /// The records of `kind` of `sites` as `view` places them, `[capacity, kind.words()]` u32.
    fn sad_pack_sites(sites: CubeTensor, kind: SiteRecordKind, view: ViewTransform) -> CubeTensor {
        let round_to_f16 = kind == SiteRecordKind::Ranking;
        records_of(&into_contiguous(sites), round_to_f16, 0, view).0
    }

    fn sad_candidate_pass(
        packed: CubeTensor,
        candidates: CubeTensor,
        hilbert_order: CubeTensor,
        hilbert_rank: CubeTensor,
        geometry: RenderGeometry,
        pass: PassConfig,
    ) -> CubeTensor {
        let packed = into_contiguous(packed);
        let input = ids(candidates);
        let hilbert_order = ids(hilbert_order);
        let hilbert_rank = ids(hilbert_rank);
        let output = unfilled_ids(&packed, geometry);
        let op = "sad_candidate_pass";
        let sites = expect_rows_of(op, "the packed sites", &packed, PACKED_WORDS);
        expect_dims(op, "the candidate lists", &input, &[geometry.cells(), K]);
        expect_len_at_least(op, "the Hilbert order", &hilbert_order, sites);
        expect_len_at_least(op, "the Hilbert ranks", &hilbert_rank, sites);
        let (count, dim) = cell_grid(geometry);
        launch_kernel!(candidate_pass_kernel(
            &packed.client,
            count,
            dim,
            record_vector_size(),
            packed.clone().into_tensor_arg(),
            input.into_tensor_arg(),
            output.clone().into_tensor_arg(),
            hilbert_order.into_tensor_arg(),
            hilbert_rank.into_tensor_arg(),
            pixel_grid(geometry, &packed),
            pass.launch_arg(),
        ));
        output
    }
}
