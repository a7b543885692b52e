//! The reference trainer's Adam step over all sites at once.

use cubecl::prelude::*;

use super::{COLOR, DIRECTION, LOG_ANISO, LOG_TAU, POSITION, RADIUS, SITE_PARAMS};

/// f32 values of optimiser state per site, in this order: position m (2) and v (1, shared by
/// both axes), log τ m, v, radius m, v, colour m (3), v (3), direction m (2) and v (1, shared),
/// log anisotropy m, v.
pub const ADAM_STATE: usize = 18;

/// Column of the position first moment (x, y) in the state layout.
pub const M_POSITION: usize = 0;
/// Column of the position second moment.
pub const V_POSITION: usize = 2;
/// Column of the log τ first moment (second follows).
pub const M_LOG_TAU: usize = 3;
/// Column of the radius first moment (second follows).
pub const M_RADIUS: usize = 5;
/// Column of the colour first moments (r, g, b; the second moments follow).
pub const M_COLOR: usize = 7;
/// Column of the direction first moment (x, y; the shared second moment follows).
pub const M_DIRECTION: usize = 13;
/// Column of the log anisotropy first moment (second follows).
pub const M_LOG_ANISO: usize = 16;

/// Step sizes and moment decay of one Adam step, with the bias corrections precomputed on the
/// host as the reference does (`1 / (1 − β^t)` in f32).
#[derive(CubeLaunch, CubeType, Clone, Copy, Debug)]
pub struct AdamStep {
    /// Learning rate of the position.
    pub lr_position: f32,
    /// Learning rate of log τ.
    pub lr_log_tau: f32,
    /// Learning rate of the radius.
    pub lr_radius: f32,
    /// Learning rate of the colour.
    pub lr_color: f32,
    /// Learning rate of the direction.
    pub lr_direction: f32,
    /// Learning rate of log anisotropy.
    pub lr_log_aniso: f32,
    /// First-moment decay β1.
    pub beta1: f32,
    /// Second-moment decay β2.
    pub beta2: f32,
    /// ε added to √v̂.
    pub eps: f32,
    /// 1 / (1 − β1^t).
    pub correction1: f32,
    /// 1 / (1 − β2^t).
    pub correction2: f32,
    /// Factor applied to every raw gradient (the reference's 1 / (W·H)).
    pub grad_scale: f32,
    /// Largest position x (W − 1).
    pub max_x: f32,
    /// Largest position y (H − 1).
    pub max_y: f32,
}

/// One Adam step: reads `sites`, `grads` (`[capacity, 10]`, raw sums), `tau_grads`
/// (`[capacity]`, the diffused log τ gradient, used instead of column 2 of `grads`) and `state`
/// (`[capacity, ADAM_STATE]`), and writes the stepped sites and state to `out_sites` and
/// `out_state`. Inactive sites (position x < 0) are copied unchanged.
///
/// Position and direction use one second moment for both components; the direction gradient is
/// first projected onto the tangent of the unit circle and the stepped direction renormalised.
/// After the step: position clamped to the image, radius to [1, 512], colour to [0, 1], log
/// anisotropy to [−4, 4].
///
/// Each value is read once into a register and written once: copying every value first and
/// then overwriting the live ones kept all 28 in flight at once (80 registers per unit on CUDA,
/// a third of the occupancy this memory-bound kernel needs) and doubled its stores.
///
/// Launch with one unit per site, 1D.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub fn adam_kernel(
    sites: &Tensor<f32>,
    grads: &Tensor<f32>,
    tau_grads: &Tensor<f32>,
    state: &Tensor<f32>,
    out_sites: &mut Tensor<f32>,
    out_state: &mut Tensor<f32>,
    step: AdamStep,
    site_count: usize,
) {
    let site = ABSOLUTE_POS;
    if site < site_count {
        let p = site * SITE_PARAMS;
        let s = site * ADAM_STATE;
        let x = sites[p + POSITION];
        if x < 0.0 {
            #[unroll]
            for i in 0..SITE_PARAMS {
                out_sites[p + i] = sites[p + i];
            }
            #[unroll]
            for i in 0..ADAM_STATE {
                out_state[s + i] = state[s + i];
            }
        } else {
            let b1 = step.beta1;
            let b2 = step.beta2;
            let gs = step.grad_scale;

            // Position: one second moment for both axes.
            let gx = grads[p + POSITION] * gs;
            let gy = grads[p + POSITION + 1] * gs;
            let mx = b1 * state[s + M_POSITION] + (1.0 - b1) * gx;
            let my = b1 * state[s + M_POSITION + 1] + (1.0 - b1) * gy;
            let v = b2 * state[s + V_POSITION] + (1.0 - b2) * (gx * gx + gy * gy);
            let denom = f32::sqrt(v * step.correction2) + step.eps;
            let nx = x - step.lr_position * mx * step.correction1 / denom;
            let ny = sites[p + POSITION + 1] - step.lr_position * my * step.correction1 / denom;
            out_sites[p + POSITION] = f32::clamp(nx, 0.0, step.max_x);
            out_sites[p + POSITION + 1] = f32::clamp(ny, 0.0, step.max_y);
            out_state[s + M_POSITION] = mx;
            out_state[s + M_POSITION + 1] = my;
            out_state[s + V_POSITION] = v;

            out_sites[p + LOG_TAU] = scalar_adam(
                sites[p + LOG_TAU],
                tau_grads[site] * gs,
                state,
                out_state,
                s + M_LOG_TAU,
                step.lr_log_tau,
                &step,
            );
            let radius = scalar_adam(
                sites[p + RADIUS],
                grads[p + RADIUS] * gs,
                state,
                out_state,
                s + M_RADIUS,
                step.lr_radius,
                &step,
            );
            out_sites[p + RADIUS] = f32::clamp(radius, 1.0, 512.0);
            #[unroll]
            for c in 0..3 {
                let g = grads[p + COLOR + c] * gs;
                let m = b1 * state[s + M_COLOR + c] + (1.0 - b1) * g;
                let v = b2 * state[s + M_COLOR + 3 + c] + (1.0 - b2) * g * g;
                let value = sites[p + COLOR + c]
                    - step.lr_color * m * step.correction1
                        / (f32::sqrt(v * step.correction2) + step.eps);
                out_sites[p + COLOR + c] = f32::clamp(value, 0.0, 1.0);
                out_state[s + M_COLOR + c] = m;
                out_state[s + M_COLOR + 3 + c] = v;
            }

            // Direction: Riemannian step on the unit circle.
            let ux = sites[p + DIRECTION];
            let uy = sites[p + DIRECTION + 1];
            let rx = grads[p + DIRECTION] * gs;
            let ry = grads[p + DIRECTION + 1] * gs;
            let radial = rx * ux + ry * uy;
            let tx = rx - ux * radial;
            let ty = ry - uy * radial;
            let mx = b1 * state[s + M_DIRECTION] + (1.0 - b1) * tx;
            let my = b1 * state[s + M_DIRECTION + 1] + (1.0 - b1) * ty;
            let v = b2 * state[s + M_DIRECTION + 2] + (1.0 - b2) * (tx * tx + ty * ty);
            let denom = f32::sqrt(v * step.correction2) + step.eps;
            let nx = ux - step.lr_direction * mx * step.correction1 / denom;
            let ny = uy - step.lr_direction * my * step.correction1 / denom;
            let norm2 = nx * nx + ny * ny;
            let mut dx = 1.0f32;
            let mut dy = 0.0f32;
            if norm2 >= 1e-12 {
                let inv = 1.0 / f32::sqrt(norm2);
                dx = nx * inv;
                dy = ny * inv;
            }
            out_sites[p + DIRECTION] = dx;
            out_sites[p + DIRECTION + 1] = dy;
            out_state[s + M_DIRECTION] = mx;
            out_state[s + M_DIRECTION + 1] = my;
            out_state[s + M_DIRECTION + 2] = v;

            let aniso = scalar_adam(
                sites[p + LOG_ANISO],
                grads[p + LOG_ANISO] * gs,
                state,
                out_state,
                s + M_LOG_ANISO,
                step.lr_log_aniso,
                &step,
            );
            out_sites[p + LOG_ANISO] = f32::clamp(aniso, -4.0, 4.0);
        }
    }
}

/// Plain Adam on one value whose moments sit at `state[moment]` (m) and `state[moment + 1]`
/// (v); writes the new moments and returns the stepped value.
#[cube]
fn scalar_adam(
    value: f32,
    grad: f32,
    state: &Tensor<f32>,
    out_state: &mut Tensor<f32>,
    moment: usize,
    lr: f32,
    step: &AdamStep,
) -> f32 {
    let m = step.beta1 * state[moment] + (1.0 - step.beta1) * grad;
    let v = step.beta2 * state[moment + 1] + (1.0 - step.beta2) * grad * grad;
    out_state[moment] = m;
    out_state[moment + 1] = v;
    value - lr * m * step.correction1 / (f32::sqrt(v * step.correction2) + step.eps)
}
