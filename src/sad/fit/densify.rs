//! Densify (split the sites that explain the most error) and prune (drop the sites whose
//! removal costs least), on the host between kernel steps.

use burn_sad_kernels::sad::{
    ADAM_STATE, DENSIFY_STATS, DIRECTION, LOG_ANISO, LOG_TAU, POSITION, RADIUS, SITE_PARAMS,
};

use super::TargetImage;
use super::constants::TRAINER_CONSTANTS;

/// Densify statistics below this mass make a site ineligible for splitting.
const MIN_MASS: f32 = TRAINER_CONSTANTS.split_min_mass;

/// The `count` ids with the smallest keys, ties by id (what a stable ascending sort of
/// `(key, id)` pairs yields), in that order.
fn smallest(mut keyed: Vec<(f32, usize)>, count: usize) -> Vec<usize> {
    let order = |a: &(f32, usize), b: &(f32, usize)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
    let count = count.min(keyed.len());
    if count == 0 {
        return Vec::new();
    }
    if count < keyed.len() {
        keyed.select_nth_unstable_by(count - 1, order);
        keyed.truncate(count);
    }
    keyed.sort_unstable_by(order);
    keyed.into_iter().map(|(_, id)| id).collect()
}

/// The sites to prune: the `count` live sites (position x ≥ 0, from `positions_x`) whose
/// removal delta (per pixel of the image, `norm` = 1 / pixels) is smallest, negative deltas
/// counting as 0.
pub fn prune_candidates(
    positions_x: &[f32],
    removal_delta: &[f32],
    norm: f32,
    count: usize,
) -> Vec<usize> {
    let keyed = positions_x
        .iter()
        .zip(removal_delta)
        .enumerate()
        .filter_map(|(id, (&x, &delta))| {
            let delta = delta * norm;
            (x >= 0.0 && delta.is_finite()).then_some((delta.max(0.0), id))
        })
        .collect();
    smallest(keyed, count)
}

/// The sites to split: up to `count` live sites of mass > 1 with the largest
/// energy / mass^`alpha`.
pub fn split_candidates(
    sites: &[[f32; SITE_PARAMS]],
    stats: &[f32],
    alpha: f32,
    count: usize,
) -> Vec<usize> {
    let keyed = sites
        .iter()
        .zip(stats.chunks_exact(DENSIFY_STATS))
        .enumerate()
        .filter_map(|(id, (site, stat))| {
            let (mass, energy) = (stat[0], stat[1]);
            let eligible = site[POSITION] >= 0.0 && mass > MIN_MASS && energy.is_finite();
            // Negated so that the smallest key is the largest score.
            eligible.then(|| (-(energy.max(0.0) / mass.max(1e-8).powf(alpha)), id))
        })
        .collect();
    smallest(keyed, count)
}

/// Splits each parent into two children along the principal axis of its error (or of the
/// image gradient where it has too little error): child A replaces the parent, child B goes to
/// slot `allocated + j`. Both children start with zeroed Adam state.
pub fn split_sites(
    sites: &mut [[f32; SITE_PARAMS]],
    state: &mut [[f32; ADAM_STATE]],
    parents: &[usize],
    stats: &[f32],
    target: &TargetImage,
    allocated: usize,
) {
    let (max_x, max_y) = ((target.width - 1) as f32, (target.height - 1) as f32);
    for (j, &id) in parents.iter().enumerate() {
        let parent = sites[id];
        let child_slot = allocated + j;
        if parent[POSITION] < 0.0 || child_slot == id || child_slot >= sites.len() {
            continue;
        }
        let stat = &stats[id * DENSIFY_STATS..(id + 1) * DENSIFY_STATS];
        let weight = stat[2];
        let mut axis = [parent[DIRECTION], parent[DIRECTION + 1]];
        let mut center = [parent[POSITION], parent[POSITION + 1]];
        let mut log_aniso = parent[LOG_ANISO] * 0.8;
        if weight > 1e-3 {
            let (mx, my) = (stat[3] / weight, stat[4] / weight);
            center = [
                0.4 * parent[POSITION] + 0.6 * mx,
                0.4 * parent[POSITION + 1] + 0.6 * my,
            ];
            let exx = (stat[5] / weight - mx * mx).max(1e-4);
            let exy = stat[6] / weight - mx * my;
            let eyy = (stat[7] / weight - my * my).max(1e-4);
            let theta = 0.5 * (2.0 * exy).atan2(exx - eyy);
            axis = [theta.cos(), theta.sin()];
            let half_trace = 0.5 * (exx + eyy);
            let disc = (0.25 * (exx - eyy) * (exx - eyy) + exy * exy)
                .max(0.0)
                .sqrt();
            let major = (half_trace + disc).max(1e-4);
            let minor = (half_trace - disc).max(1e-4);
            log_aniso = (-0.5 * (major / minor).ln()).clamp(-2.0, 2.0);
        } else {
            let ix = (parent[POSITION] as i64).clamp(0, target.width as i64 - 1) as usize;
            let iy = (parent[POSITION + 1] as i64).clamp(0, target.height as i64 - 1) as usize;
            let [gx, gy] = target.sobel(ix, iy);
            let g2 = gx * gx + gy * gy;
            if g2 > 1e-8 {
                let inv = 1.0 / g2.sqrt();
                axis = [gx * inv, gy * inv];
            }
        }
        let offset = (0.5 * stat[0].max(1.0).sqrt()).clamp(1.5, 48.0);
        let child = |sign: f32| {
            let x = (center[0] + sign * offset * axis[0]).clamp(0.0, max_x);
            let y = (center[1] + sign * offset * axis[1]).clamp(0.0, max_y);
            let rgb = target.rgb(x as usize, y as usize);
            let mut site = parent;
            site[POSITION] = x;
            site[POSITION + 1] = y;
            site[LOG_TAU] = parent[LOG_TAU] - 0.25;
            site[RADIUS] = parent[RADIUS] * 0.85;
            site[4..7].copy_from_slice(&rgb);
            site[DIRECTION] = axis[0];
            site[DIRECTION + 1] = axis[1];
            site[LOG_ANISO] = log_aniso;
            site
        };
        sites[id] = child(1.0);
        sites[child_slot] = child(-1.0);
        state[id] = [0.0; ADAM_STATE];
        state[child_slot] = [0.0; ADAM_STATE];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(x: f32) -> [f32; SITE_PARAMS] {
        [x, 0.0, 5.0, 4.0, 0.5, 0.5, 0.5, 1.0, 0.0, 0.0]
    }

    #[test]
    fn prune_takes_cheapest_first_with_ties_by_id_and_skips_dead_sites() {
        let xs = [1.0, 2.0, -1.0, 3.0, 4.0];
        let delta = [5.0, -2.0, 0.0, 0.0, f32::NAN];
        assert_eq!(prune_candidates(&xs, &delta, 1.0, 2), vec![1, 3]);
        assert_eq!(prune_candidates(&xs, &delta, 1.0, 10), vec![1, 3, 0]);
    }

    #[test]
    fn split_prefers_high_error_per_mass() {
        let sites = [live(1.0), live(2.0), live(3.0)];
        let mut stats = vec![0f32; 3 * DENSIFY_STATS];
        stats[0] = 4.0; // mass 4, energy 4 → score 4 / 4^0.7
        stats[1] = 4.0;
        stats[DENSIFY_STATS] = 9.0; // mass 9, energy 18
        stats[DENSIFY_STATS + 1] = 18.0;
        stats[2 * DENSIFY_STATS] = 0.5; // too light
        stats[2 * DENSIFY_STATS + 1] = 100.0;
        assert_eq!(split_candidates(&sites, &stats, 0.7, 3), vec![1, 0]);
    }
}
