//! Host references of the training kernels, written plainly from the spec. Tests compare the
//! kernels with them, and backends that cannot run CubeCL kernels train with them.

use burn_sad_kernels::sad::{
    ADAM_STATE, AdamStep, DENSIFY_STATS, DIRECTION, K, LOG_ANISO, LOG_TAU, M_COLOR, M_DIRECTION,
    M_LOG_ANISO, M_LOG_TAU, M_POSITION, M_RADIUS, POSITION, RADIUS, SITE_PARAMS, StatisticsKind,
    V_POSITION,
};

use super::TargetImage;
use crate::sad::{RenderGeometry, blend_at, cell_of_pixel};

/// Per-site statistics (see [`StatisticsKind`]): `[sites.len() · kind.channels()]`.
pub fn site_statistics_reference(
    sites: &[[f32; SITE_PARAMS]],
    ids: &[i32],
    target: &TargetImage,
    geometry: RenderGeometry,
    kind: StatisticsKind,
) -> Vec<f32> {
    let channels = kind.channels();
    let mut stats = vec![0f32; sites.len() * channels];
    let inv_scale_sq = geometry.inv_scale_sq();
    for y in 0..geometry.height {
        for x in 0..geometry.width {
            let cell = cell_of_pixel(x, y, geometry);
            let slots = blend_at(sites, &ids[cell * K..cell * K + K], x, y, inv_scale_sq);
            if slots.is_empty() || !target.counts(x, y) {
                continue;
            }
            let truth = target.rgb(x, y);
            let mut pred = [0f32; 3];
            for &(site, w) in &slots {
                for c in 0..3 {
                    pred[c] += w * sites[site][4 + c];
                }
            }
            let err: f32 = (0..3).map(|c| (pred[c] - truth[c]).powi(2)).sum();
            let mut seen = Vec::with_capacity(K);
            for &(site, _) in &slots {
                if seen.contains(&site) {
                    continue;
                }
                seen.push(site);
                let total: f32 = slots.iter().filter(|s| s.0 == site).map(|s| s.1).sum();
                if total <= 0.0 {
                    continue;
                }
                let out = &mut stats[site * channels..site * channels + channels];
                match kind {
                    StatisticsKind::RemovalDelta => {
                        let rest = 1.0 - total;
                        out[0] += if rest < 1e-4 {
                            1e6
                        } else {
                            let without: f32 = (0..3)
                                .map(|c| {
                                    ((pred[c] - total * sites[site][4 + c]) / rest - truth[c])
                                        .powi(2)
                                })
                                .sum();
                            without - err
                        };
                    }
                    StatisticsKind::Densify => {
                        let (px, py) = (x as f32, y as f32);
                        let omega = total * err.min(1.0);
                        let values: [f32; DENSIFY_STATS] = [
                            total,
                            total * err,
                            omega,
                            omega * px,
                            omega * py,
                            omega * px * px,
                            omega * px * py,
                            omega * py * py,
                        ];
                        for (o, v) in out.iter_mut().zip(values) {
                            *o += v;
                        }
                    }
                }
            }
        }
    }
    stats
}

/// `passes` Jacobi passes of tau-gradient diffusion (see
/// [`tau_diffusion`](super::tau_diffusion)).
pub fn tau_diffusion_reference(
    sites: &[[f32; SITE_PARAMS]],
    ids: &[i32],
    raw: &[f32],
    geometry: RenderGeometry,
    lambda: f32,
    passes: u32,
) -> Vec<f32> {
    let ds = geometry.downscale.max(1) as f32;
    let home = |v: f32, cells: usize| ((v / ds + 0.5) as i32).clamp(0, cells as i32 - 1) as usize;
    let neighbours: Vec<Vec<usize>> = sites
        .iter()
        .enumerate()
        .map(|(i, site)| {
            if site[POSITION] < 0.0 {
                return Vec::new();
            }
            let cell = home(site[POSITION + 1], geometry.cand_h()) * geometry.cand_w()
                + home(site[POSITION], geometry.cand_w());
            let mut list: Vec<usize> = Vec::with_capacity(K);
            for &id in &ids[cell * K..cell * K + K] {
                let Ok(j) = usize::try_from(id) else { continue };
                if j != i && j < sites.len() && sites[j][0] >= 0.0 && !list.contains(&j) {
                    list.push(j);
                }
            }
            list
        })
        .collect();
    let mut current = raw.to_vec();
    for _ in 0..passes {
        current = sites
            .iter()
            .enumerate()
            .map(|(i, site)| {
                if site[POSITION] < 0.0 || lambda <= 0.0 {
                    return current[i];
                }
                let sum: f32 = neighbours[i].iter().map(|&j| current[j]).sum();
                (raw[i] + lambda * sum) / (1.0 + lambda * neighbours[i].len() as f32)
            })
            .collect();
    }
    current
}

/// One Adam step of every site in place (see [`adam_step`](super::adam_step)).
pub fn adam_step_reference(
    sites: &mut [[f32; SITE_PARAMS]],
    state: &mut [[f32; ADAM_STATE]],
    grads: &[[f32; SITE_PARAMS]],
    tau_grads: &[f32],
    step: &AdamStep,
) {
    let (b1, b2) = (step.beta1, step.beta2);
    let update = |value: f32, m: f32, v: f32, lr: f32| {
        value - lr * m * step.correction1 / ((v * step.correction2).sqrt() + step.eps)
    };
    for (i, (site, state)) in sites.iter_mut().zip(state.iter_mut()).enumerate() {
        if site[POSITION] < 0.0 {
            continue;
        }
        let g: Vec<f32> = grads[i].iter().map(|g| g * step.grad_scale).collect();
        // Plain Adam on one value with first moment at `m` and second at `v`.
        let mut scalar = |value: f32, grad: f32, m: usize, v: usize, lr: f32| {
            state[m] = b1 * state[m] + (1.0 - b1) * grad;
            state[v] = b2 * state[v] + (1.0 - b2) * grad * grad;
            update(value, state[m], state[v], lr)
        };
        let tau_grad = tau_grads[i] * step.grad_scale;
        site[LOG_TAU] = scalar(
            site[LOG_TAU],
            tau_grad,
            M_LOG_TAU,
            M_LOG_TAU + 1,
            step.lr_log_tau,
        );
        site[RADIUS] = scalar(
            site[RADIUS],
            g[RADIUS],
            M_RADIUS,
            M_RADIUS + 1,
            step.lr_radius,
        )
        .clamp(1.0, 512.0);
        for c in 0..3 {
            let (m, v) = (M_COLOR + c, M_COLOR + 3 + c);
            site[4 + c] = scalar(site[4 + c], g[4 + c], m, v, step.lr_color).clamp(0.0, 1.0);
        }
        let (m, v) = (M_LOG_ANISO, M_LOG_ANISO + 1);
        site[LOG_ANISO] =
            scalar(site[LOG_ANISO], g[LOG_ANISO], m, v, step.lr_log_aniso).clamp(-4.0, 4.0);

        let mut pair = |value: [f32; 2], grad: [f32; 2], moment: usize, lr: f32| {
            for a in 0..2 {
                state[moment + a] = b1 * state[moment + a] + (1.0 - b1) * grad[a];
            }
            let v = b2 * state[moment + 2] + (1.0 - b2) * (grad[0] * grad[0] + grad[1] * grad[1]);
            state[moment + 2] = v;
            [0, 1].map(|a| update(value[a], state[moment + a], v, lr))
        };
        debug_assert_eq!(V_POSITION, M_POSITION + 2);
        let [x, y] = pair(
            [site[POSITION], site[POSITION + 1]],
            [g[POSITION], g[POSITION + 1]],
            M_POSITION,
            step.lr_position,
        );
        site[POSITION] = x.clamp(0.0, step.max_x);
        site[POSITION + 1] = y.clamp(0.0, step.max_y);
        let (ux, uy) = (site[DIRECTION], site[DIRECTION + 1]);
        let radial = g[DIRECTION] * ux + g[DIRECTION + 1] * uy;
        let tangent = [g[DIRECTION] - ux * radial, g[DIRECTION + 1] - uy * radial];
        let [nx, ny] = pair([ux, uy], tangent, M_DIRECTION, step.lr_direction);
        let norm2 = nx * nx + ny * ny;
        [site[DIRECTION], site[DIRECTION + 1]] = if norm2 < 1e-12 {
            [1.0, 0.0]
        } else {
            let inv = 1.0 / norm2.sqrt();
            [nx * inv, ny * inv]
        };
    }
}
