//! Plain-tensor references: the render written with Burn tensor ops (differentiated by Burn's
//! autodiff), and exact candidate lists by brute force on the host. The tests compare the
//! kernels with them, and backends that cannot run CubeCL kernels use them directly.

use burn::tensor::{Bool, Int, Tensor, TensorData};
use burn_sad_kernels::sad::{
    DEAD_X, DIRECTION, K, LOG_ANISO, LOG_TAU, PACKED_WORDS, POSITION, RADIUS, RANK_DIRECTION,
    RANK_RADIUS, RANK_SQUEEZE, RANK_STRETCH, RANK_TAU, RANK_X, SITE_PARAMS,
};

use super::RenderGeometry;
use super::sites::INACTIVE_SITE;

/// The render op with plain tensor ops: `[3, height, width]`.
///
/// Same definition as the kernel (integer pixel coordinates, max(W, H) normalisation, softmax
/// over the live slots with max subtraction, black where no slot is live), except that it does
/// not skip non-finite weights.
pub fn render_reference(
    sites: Tensor<2>,
    candidates: Tensor<2, Int>,
    geometry: RenderGeometry,
) -> Tensor<3> {
    let device = sites.device();
    let capacity = sites.dims()[0];
    let (width, height) = (geometry.width, geometry.height);
    let pixels = width * height;
    let mut cells = Vec::with_capacity(pixels);
    let mut points = Vec::with_capacity(pixels * K * 2);
    for y in 0..height {
        for x in 0..width {
            cells.push(cell_of_pixel(x, y, geometry) as i32);
            for _ in 0..K {
                points.extend([x as f32, y as f32]);
            }
        }
    }
    let cells = Tensor::<1, Int>::from_data(TensorData::new(cells, [pixels]), &device);
    let ids = candidates
        .select(0, cells)
        .reshape([pixels * K])
        .cast(burn::tensor::DType::I32);
    let in_range = ids
        .clone()
        .greater_equal_elem(0)
        .bool_and(ids.clone().lower_elem(capacity as i32));
    let gathered = sites.select(0, ids.clamp(0, capacity as i32 - 1));
    let column = |i: usize| gathered.clone().narrow(1, i, 1);
    let live: Tensor<2, Bool> = in_range
        .reshape([pixels * K, 1])
        .bool_and(column(0).greater_equal_elem(0.0));
    let points = Tensor::<2>::from_data(TensorData::new(points, [pixels * K, 2]), &device);
    let dx = points.clone().narrow(1, 0, 1) - column(0);
    let dy = points.narrow(1, 1, 1) - column(1);
    let diff2 = dx.clone() * dx.clone() + dy.clone() * dy.clone();
    let proj = column(7) * dx + column(8) * dy;
    let proj2 = proj.clone() * proj;
    let perp2 = (diff2 - proj2.clone()).clamp_min(0.0);
    let stretch = column(9).exp();
    let squeeze = stretch.clone().recip();
    let inv_scale_sq = geometry.inv_scale_sq();
    let d2 = ((stretch * proj2 + squeeze * perp2) * inv_scale_sq).clamp_min(1e-8);
    let score = d2.sqrt() - column(3) * inv_scale_sq.sqrt();
    let logits = (column(2).exp().neg() * score).reshape([pixels, K]);
    let live = live.reshape([pixels, K]);
    let max = logits
        .clone()
        .mask_fill(live.clone().bool_not(), -1e30)
        .max_dim(1);
    let shifted = (logits - max).mask_fill(live.clone().bool_not(), -100.0);
    let e = shifted.exp() * live.float();
    let weights = e.clone() / e.sum_dim(1).clamp_min(1e-8);
    let colors = gathered.narrow(1, 4, 3).reshape([pixels, K, 3]);
    let blended: Tensor<2> = (colors * weights.unsqueeze_dim::<3>(2))
        .sum_dim(1)
        .reshape([pixels, 3]);
    blended.transpose().reshape([3, height, width])
}

/// The score s of `site` at point (`qx`, `qy`) (see the kernels' module docs), with e^a floored
/// at 1e-8 before it is inverted.
pub fn site_score(site: &[f32; SITE_PARAMS], qx: f32, qy: f32, inv_scale_sq: f32) -> f32 {
    let (dx, dy) = (qx - site[POSITION], qy - site[POSITION + 1]);
    let diff2 = dx * dx + dy * dy;
    let proj = site[DIRECTION] * dx + site[DIRECTION + 1] * dy;
    let proj2 = proj * proj;
    let perp2 = (diff2 - proj2).max(0.0);
    let stretch = site[LOG_ANISO].exp();
    let d2 = ((stretch * proj2 + perp2 / stretch.max(1e-8)) * inv_scale_sq).max(1e-8);
    d2.sqrt() - site[RADIUS] * inv_scale_sq.sqrt()
}

/// The ranking key of `site` at cell point (`qx`, `qy`), as the kernels compute it; `None` for an
/// inactive site or a non-finite key.
pub fn ranking_key(site: &[f32; SITE_PARAMS], qx: f32, qy: f32, inv_scale_sq: f32) -> Option<f32> {
    if site[POSITION] < 0.0 {
        return None;
    }
    let key = site[LOG_TAU].exp().max(1e-4) * site_score(site, qx, qy, inv_scale_sq);
    key.is_finite().then_some(key)
}

/// The blend of pixel (`x`, `y`) over the ids of its cell: `(site, weight)` per live slot,
/// softmax of −τ·s with max subtraction (the kernels' `blend_weights`).
pub fn blend_at(
    sites: &[[f32; SITE_PARAMS]],
    ids: &[i32],
    x: usize,
    y: usize,
    inv_scale_sq: f32,
) -> Vec<(usize, f32)> {
    let mut slots: Vec<(usize, f32)> = ids
        .iter()
        .filter_map(|&id| {
            let site = sites.get(usize::try_from(id).ok()?)?;
            (site[POSITION] >= 0.0).then(|| {
                let z = -site[LOG_TAU].exp() * site_score(site, x as f32, y as f32, inv_scale_sq);
                (id as usize, z)
            })
        })
        .collect();
    let max = slots.iter().map(|s| s.1).fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for slot in &mut slots {
        slot.1 = (slot.1 - max).exp();
        sum += slot.1;
    }
    let inv_sum = 1.0 / sum.max(1e-8);
    for slot in &mut slots {
        slot.1 *= inv_sum;
    }
    slots
}

/// The cell of the candidate grid that pixel (`x`, `y`) reads.
pub fn cell_of_pixel(x: usize, y: usize, geometry: RenderGeometry) -> usize {
    let cx = (x * geometry.cand_w() / geometry.width).min(geometry.cand_w() - 1);
    let cy = (y * geometry.cand_h() / geometry.height).min(geometry.cand_h() - 1);
    cy * geometry.cand_w() + cx
}

/// The exact candidate lists: for every cell, the [`K`] active sites of smallest ranking key at
/// the cell's point (ties by site index), `[cells · K]` ids with −1 for missing entries.
/// O(cells · sites): the oracle the propagation is tested against, and the lists that backends
/// without CubeCL kernels use.
pub fn exact_candidates(sites: &[[f32; SITE_PARAMS]], geometry: RenderGeometry) -> Vec<i32> {
    let inv_scale_sq = geometry.inv_scale_sq();
    let ds = geometry.downscale.max(1);
    let mut lists = Vec::with_capacity(geometry.cells() * K);
    let mut keyed: Vec<(f32, usize)> = Vec::with_capacity(sites.len());
    for cy in 0..geometry.cand_h() {
        for cx in 0..geometry.cand_w() {
            let qx = (cx * ds).min(geometry.width - 1) as f32;
            let qy = (cy * ds).min(geometry.height - 1) as f32;
            keyed.clear();
            keyed.extend(
                sites
                    .iter()
                    .enumerate()
                    .filter_map(|(i, s)| ranking_key(s, qx, qy, inv_scale_sq).map(|k| (k, i))),
            );
            let take = K.min(keyed.len());
            if take > 0 && take < keyed.len() {
                keyed.select_nth_unstable_by(take - 1, |a, b| {
                    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
                });
            }
            keyed[..take].sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            lists.extend(keyed[..take].iter().map(|&(_, i)| i as i32));
            lists.extend(std::iter::repeat_n(-1, K - take));
        }
    }
    lists
}

/// The jump flood of render-only mode as the kernels run it, on the host: every active site
/// seeds slot 0 of its cell, then steps P/2 … 1 (P the grid's longer side rounded up to a power
/// of two) each keep, per cell, the best 4 distinct live sites of the half-lists that the cell
/// and its 8 neighbours at distance `step` hold in the half read, and write them to the other
/// half; where the last step wrote the upper half, it is copied over the lower one. `[cells · K]`
/// ids, −1 for empty entries. Where several active sites share a cell the device keeps any one
/// of them; this keeps the last.
pub fn jump_flood_reference(sites: &[[f32; SITE_PARAMS]], geometry: RenderGeometry) -> Vec<i32> {
    const HALF: usize = K / 2;
    let (cand_w, cand_h) = (geometry.cand_w(), geometry.cand_h());
    let downscale = geometry.downscale.max(1);
    let inv_downscale = 1.0 / downscale as f32;
    let inv_scale_sq = geometry.inv_scale_sq();
    let mut lists = vec![-1i32; geometry.cells() * K];
    for (id, site) in sites.iter().enumerate() {
        if site[POSITION] >= 0.0 {
            let cell_x = ((site[POSITION] * inv_downscale) as i32).clamp(0, cand_w as i32 - 1);
            let cell_y = ((site[POSITION + 1] * inv_downscale) as i32).clamp(0, cand_h as i32 - 1);
            lists[(cell_y as usize * cand_w + cell_x as usize) * K] = id as i32;
        }
    }
    let mut step = cand_w.max(cand_h).next_power_of_two() / 2;
    let mut read = 0;
    while step >= 1 {
        let before = lists.clone();
        for cy in 0..cand_h {
            for cx in 0..cand_w {
                let qx = (cx * downscale).min(geometry.width - 1) as f32;
                let qy = (cy * downscale).min(geometry.height - 1) as f32;
                // Best first; a key goes before the first strictly greater one.
                let mut best: Vec<(f32, i32)> = Vec::with_capacity(HALF + 1);
                for sample in 0..9i64 {
                    let offset = |c: usize, d: i64, len: usize| {
                        (c as i64 + d * step as i64).clamp(0, len as i64 - 1) as usize
                    };
                    let sx = offset(cx, sample % 3 - 1, cand_w);
                    let sy = offset(cy, sample / 3 - 1, cand_h);
                    let neighbour = (sy * cand_w + sx) * K + read;
                    for &id in &before[neighbour..neighbour + HALF] {
                        if best.iter().any(|&(_, held)| held == id) {
                            continue;
                        }
                        let key = usize::try_from(id)
                            .ok()
                            .and_then(|i| sites.get(i))
                            .and_then(|site| ranking_key(site, qx, qy, inv_scale_sq));
                        if let Some(key) = key {
                            let at = best
                                .iter()
                                .position(|&(k, _)| key < k)
                                .unwrap_or(best.len());
                            best.insert(at, (key, id));
                            best.truncate(HALF);
                        }
                    }
                }
                let write = (cy * cand_w + cx) * K + HALF - read;
                for (i, slot) in lists[write..write + HALF].iter_mut().enumerate() {
                    *slot = best.get(i).map_or(-1, |&(_, id)| id);
                }
            }
        }
        read = HALF - read;
        step /= 2;
    }
    if read == HALF {
        for cell in lists.chunks_exact_mut(K) {
            cell.copy_within(HALF..K, 0);
        }
    }
    lists
}

/// The f16 nearest to `value` (ties to even), as its bits: what the packing kernel stores.
pub fn f16_bits(value: f32) -> u16 {
    let bits = value.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let magnitude = bits & 0x7fff_ffff;
    let half = if magnitude > 0x7f80_0000 {
        0x7e00 // NaN
    } else if magnitude >= 0x477f_f000 {
        0x7c00 // rounds to infinity
    } else if magnitude >= 0x3880_0000 {
        let rounded = magnitude + 0x0fff + ((magnitude >> 13) & 1);
        (rounded >> 13) - (112 << 10)
    } else if magnitude >= 0x3300_0000 {
        let mantissa = (magnitude & 0x007f_ffff) | 0x0080_0000;
        let shift = 126 - (magnitude >> 23);
        (mantissa + (1 << (shift - 1)) - 1 + ((mantissa >> shift) & 1)) >> shift
    } else {
        0
    };
    sign | half as u16
}

/// The value of the f16 `half`, exactly.
pub fn f16_to_f32(half: u16) -> f32 {
    let sign = if half & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((half >> 10) & 0x1f);
    let mantissa = f32::from(half & 0x03ff);
    sign * match exponent {
        0 => mantissa * 2f32.powi(-24),
        31 if mantissa == 0.0 => f32::INFINITY,
        31 => f32::NAN,
        _ => (1.0 + mantissa / 1024.0) * 2f32.powi(exponent - 15),
    }
}

/// `site` as candidate ranking sees it: the ranking inputs (position, log τ, radius, direction,
/// log anisotropy) rounded to f16, as the packed copy holds them; the colour is not packed.
pub fn ranking_view(site: &[f32; SITE_PARAMS]) -> [f32; SITE_PARAMS] {
    if site[POSITION] < 0.0 {
        return INACTIVE_SITE;
    }
    let mut view = *site;
    for column in [
        POSITION,
        POSITION + 1,
        LOG_TAU,
        RADIUS,
        DIRECTION,
        DIRECTION + 1,
        LOG_ANISO,
    ] {
        view[column] = f16_to_f32(f16_bits(site[column]));
    }
    view
}

/// The ranking copy of `sites`, 8 words per site (see [`Candidates::packed`]); its
/// exponentials are the host's, which may differ from a device's in the last bit.
///
/// [`Candidates::packed`]: super::Candidates::packed
pub fn pack_sites_reference(sites: &[[f32; SITE_PARAMS]]) -> Vec<u32> {
    let mut words = Vec::with_capacity(sites.len() * PACKED_WORDS);
    for site in sites {
        let mut record = [0.0f32; PACKED_WORDS];
        if site[POSITION] >= 0.0 {
            let view = ranking_view(site);
            let stretch = view[LOG_ANISO].exp();
            record[RANK_X] = view[POSITION];
            record[RANK_X + 1] = view[POSITION + 1];
            record[RANK_DIRECTION] = view[DIRECTION];
            record[RANK_DIRECTION + 1] = view[DIRECTION + 1];
            record[RANK_STRETCH] = stretch;
            record[RANK_SQUEEZE] = 1.0 / stretch;
            record[RANK_RADIUS] = view[RADIUS];
            record[RANK_TAU] = view[LOG_TAU].exp();
        } else {
            record[RANK_X] = DEAD_X;
            record[RANK_X + 1] = DEAD_X;
        }
        words.extend(record.map(f32::to_bits));
    }
    words
}
