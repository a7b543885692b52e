//! Backward render: the gradient of a loss with respect to all 10 parameters of every site,
//! given the loss's gradient with respect to the rendered image.

use cubecl::prelude::*;

use super::grid::PixelGrid;

use super::blend::{blend_weights, blended_colour, slot_score, slot_weight};
use super::layout::{COLOR, DIRECTION, K, LOG_ANISO, LOG_TAU, POSITION, RADIUS, SITE_PARAMS};
use super::lists::cell_ids;
use super::plane_runs::{PlaneSums, accumulate_plane};
use super::record::{RECORD_WORDS, read_colour, read_site};
use super::render::cell_of_pixel;
use super::statistics::removal_delta;
use super::table_sums::TableSums;
use super::tile_hash::{FREE, TileHash, accumulate, flush};

/// What [`render_backward_kernel()`] adds per site besides the gradient.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BackwardOutputs {
    /// ∂L/∂ĉ is 2(ĉ − t) for the summed squared error against the target that `grad_image`
    /// then holds (no render pass), instead of `grad_image` itself.
    pub from_target: bool,
    /// An 11th column: the removal delta of the squared error (see
    /// [`StatisticsKind::RemovalDelta`](super::StatisticsKind::RemovalDelta)), as the
    /// reference's gradient kernel adds it on prune iterations. Needs `from_target`.
    pub removal: bool,
}

impl BackwardOutputs {
    /// Columns per site of the output: [`SITE_PARAMS`], plus one with `removal`.
    pub const fn columns(self) -> usize {
        if self.removal {
            SITE_PARAMS + 1
        } else {
            SITE_PARAMS
        }
    }
}

/// Accumulates ∂L/∂site into `grads` (`[capacity, outputs.columns()]`, zeroed by the caller),
/// from `grad_image` (`[3, height, width]`, ∂L/∂image), or, with `outputs.from_target`, for the
/// summed squared error against the image `grad_image` holds (∂L/∂ĉ = 2(ĉ − t), formed in the
/// kernel: no render pass). With `outputs.removal` the last column gets each site's removal
/// delta. With `outputs.from_target`, a target pixel whose red value is negative lies outside
/// the fit's mask and adds nothing.
///
/// Sites are read from their full records `records` (see
/// [`pack_sites_kernel`](crate::sad::pack_sites_kernel())): a few 16-byte loads per slot instead
/// of a load per value, and τ, e^a and 1/e^a formed once per site, not per pixel and slot.
///
/// Every pixel computes its forward blend (the softmax's maximum and normaliser), then, slot by
/// slot in a runtime loop, scores the slot's site again and adds its contribution to the site.
/// Contributions are first summed per tile in a shared-memory hash table keyed by site id
/// (neighbouring pixels share most of their candidates), and each occupied entry is flushed
/// with one global atomic add per column (see `TileHash`; `sums` is the table's form, see
/// [`TableSums`]). Unless `plane_sums` is [`PlaneSums::Off`], runs of neighbouring lanes that
/// hold the same site in a slot are summed with plane shuffles first, their runs found as it
/// says (see `accumulate_plane`). The loop visits the list's distinct sites in increasing id
/// order, each once with its contribution scaled by the number of slots that hold it:
/// neighbouring pixels usually hold the same sites in another rank order, and in id order they
/// reach a shared site at the same step, so the runs the plane sums add up are longer than in
/// slot order. Every unit reaches every barrier and every plane operation: pixels outside the
/// image only contribute nothing.
///
/// `_min_cubes_per_sm` is the occupancy the launch asked the compiler for (CUDA: cubes per
/// multiprocessor, see the workspace's `vendor/cubecl-llvm/PATCH.md`; 0 for none), and
/// `_full_plane_masks` whether its plane operations were compiled with the whole plane as their
/// member mask (CUDA, same patch). The kernel reads neither: they are compile-time arguments so
/// that kernels compiled each way have different keys in the kernel cache.
///
/// Launch with `(TILE, TILE)` cubes over the image.
#[cube(launch, launch_unchecked)]
pub fn render_backward_kernel<F: Float, N: Size>(
    records: &Tensor<Vector<u32, N>>,
    candidates: &Tensor<Vector<i32, N>>,
    grad_image: &Tensor<F>,
    grads: &mut Tensor<Atomic<F>>,
    grid: PixelGrid,
    #[comptime] outputs: BackwardOutputs,
    #[comptime] sums: TableSums,
    #[comptime] plane_sums: PlaneSums,
    #[comptime] _min_cubes_per_sm: u32,
    #[comptime] _full_plane_masks: bool,
    #[define(F)] _dtype: ElemType,
) {
    let columns = comptime![outputs.columns()];
    let hash = TileHash::<F>::new(columns, sums);

    let x = CUBE_POS_X as usize * CUBE_DIM_X as usize + UNIT_POS_X as usize;
    let y = CUBE_POS_Y as usize * CUBE_DIM_Y as usize + UNIT_POS_Y as usize;
    let inside = x < grid.width && y < grid.height;
    // Units past the image's edge blend an edge pixel and contribute nothing, so that every
    // unit takes part in the plane operations below.
    let px = usize::min(x, grid.width - 1);
    let py = usize::min(y, grid.height - 1);
    let cell = cell_of_pixel(px, py, grid.width, grid.height, grid.cand_w, grid.cand_h);
    let qx = F::cast_from(px);
    let qy = F::cast_from(py);
    let inv_scale_sq = F::cast_from(grid.inv_scale_sq);
    // The forward blend, as the reference's gradient pass computes it.
    let blend = blend_weights::<F, N>(records, candidates, &grid, cell, qx, qy, true);
    let plane = grid.height * grid.width;
    let pixel = py * grid.width + px;
    // A target pixel with a negative red value lies outside the fit's mask: no loss there.
    let in_mask = !comptime![outputs.from_target] || grad_image[pixel] >= F::new(0.0);
    let active = inside && blend.any && in_mask;
    let mut pred = Array::<F>::new(3usize);
    let mut truth = Array::<F>::new(3usize);
    let mut upstream = Array::<F>::new(3usize);
    let mut err = F::new(0.0);
    let blended = blended_colour::<F, N>(records, &blend);
    #[unroll]
    for c in 0..3 {
        let sum = blended[c];
        pred[c] = sum;
        let given = grad_image[c * plane + pixel];
        truth[c] = given;
        if comptime![outputs.from_target] {
            let d = sum - given;
            err += d * d;
            upstream[c] = F::new(2.0) * d;
        } else {
            upstream[c] = given;
        }
    }

    let inv_scale = F::sqrt(inv_scale_sq);
    // A runtime loop over the slots, each scored again from its site: unrolled, with each slot's
    // score parts kept from the blend, the kernel held K copies of the accumulation code (about
    // 1 450 shared atomics) and ~80 live values across the colour pass, which took 128
    // registers with spills and about twice the time of this loop (benches/RESULTS.md).
    let list = cell_ids::<N>(candidates, cell);
    // Step k takes the list's k-th smallest distinct id, and how many of its slots hold it.
    let mut previous = (-1i32).runtime();
    for _ in 0..K {
        let step = next_distinct(&list, previous);
        let copies = step.copies;
        previous = step.id;
        let id = step.id;
        let record = read_site::<N>(records, id, grid.site_count, RECORD_WORDS);
        let live = active && record.live;
        let site = if live { id as usize } else { 0usize };
        let mut contribution = Array::<F>::new(columns);
        #[unroll]
        for c in 0..columns {
            contribution[c] = F::new(0.0);
        }
        if live {
            let slot = slot_score::<F>(&record, qx, qy, inv_scale_sq, true);
            let (tau, score) = (slot.tau, slot.score);
            let w = slot_weight::<F>(&blend, slot.logit);
            // Every slot that holds the site adds the same: `copies` of them add once, scaled
            // (every column is proportional to the weight).
            let weight = w * F::cast_from(copies);
            let colour = read_colour::<F, N>(records, site);
            // ∂L/∂z_k = Σ_c g_c · w_k · (c_k − ĉ).
            let mut gz = F::new(0.0);
            #[unroll]
            for c in 0..3 {
                gz += upstream[c] * weight * (colour[c] - pred[c]);
                contribution[COLOR + c] = weight * upstream[c];
            }
            let stretch = score.stretch;
            let proj = score.proj;
            let squeeze = score.squeeze;
            let inv_sqrt_d2 = F::new(1.0) / F::sqrt(score.d2);
            let ux = F::cast_from(record.ux);
            let uy = F::cast_from(record.uy);
            let along = (stretch - squeeze) * proj;
            let pos_scale = gz * tau * inv_scale_sq * inv_sqrt_d2;
            contribution[POSITION] = pos_scale * (squeeze * score.dx + along * ux);
            contribution[POSITION + 1] = pos_scale * (squeeze * score.dy + along * uy);
            contribution[LOG_TAU] = -gz * score.value * tau;
            contribution[RADIUS] = gz * tau * inv_scale;
            let shape_scale = -gz * tau * F::new(0.5) * inv_sqrt_d2;
            contribution[LOG_ANISO] =
                shape_scale * (stretch * proj * proj - squeeze * score.perp2) * inv_scale_sq;
            let dir_scale = shape_scale * F::new(2.0) * along * inv_scale_sq;
            contribution[DIRECTION] = dir_scale * score.dx;
            contribution[DIRECTION + 1] = dir_scale * score.dy;
            if comptime![outputs.removal] {
                // Once per distinct site of the pixel (each is visited once), with its total
                // weight: every slot of one site has the same weight.
                if w > F::new(0.0) {
                    let total = weight;
                    contribution[SITE_PARAMS] =
                        removal_delta::<F>(&colour, total, &pred, &truth, err);
                }
            }
        }
        if comptime![plane_sums == PlaneSums::Off] {
            if live {
                accumulate::<F>(&hash, grads, site, &contribution, columns, sums);
            }
        } else {
            let adding = if live { site as u32 } else { FREE };
            accumulate_plane::<F>(
                &hash,
                grads,
                adding,
                &contribution,
                columns,
                sums,
                plane_sums,
            );
        }
    }

    flush::<F>(&hash, grads, columns, sums);
}

/// The smallest id of a list above `previous`, and how many of its slots hold it.
#[derive(CubeType)]
struct DistinctId {
    /// The id, or `i32::MAX` (no site) once the list has none above `previous`.
    id: i32,
    /// How many slots of the list hold it.
    copies: u32,
}

/// [`DistinctId`] of `list` after `previous`: walking a list this way visits each distinct site
/// once, in increasing id order, so neighbouring pixels whose lists hold the same sites in
/// another rank order reach each of them at the same step.
#[cube]
fn next_distinct(list: &Array<i32>, previous: i32) -> DistinctId {
    let mut id = i32::MAX.runtime();
    #[unroll]
    for j in 0..K {
        let candidate = list[j];
        if candidate > previous && candidate < id {
            id = candidate;
        }
    }
    let mut copies = 0u32.runtime();
    #[unroll]
    for j in 0..K {
        if list[j] == id {
            copies += 1;
        }
    }
    DistinctId { id, copies }
}
