//! The reference trainer's Adam step over all sites at once.

use cubecl::prelude::*;

use super::clock::{CLOCK_CORRECTION1, CLOCK_CORRECTION2, CLOCK_LAMBDA, clock_value};
use super::layout::{COLOR, DIRECTION, LOG_ANISO, LOG_TAU, POSITION, RADIUS, SITE_PARAMS};
use super::tau_diffusion::{TauNeighbours, jacobi_from_list};

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

launch_struct! {
    /// Step sizes and moment decay of one Adam step, with the bias corrections precomputed on the
    /// host as the reference does (`1 / (1 − β^t)` in f32).
    pub struct AdamStep(AdamStepLaunch, AdamStepCompilationArg) {
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
}

/// Sites one cube of [`adam_kernel()`] steps (its staging takes 152 bytes of shared memory per
/// site, 9.5 KiB per cube: within WebGPU's 16 KiB).
pub const ADAM_CUBE: usize = 64;

/// One Adam step: reads `sites`, `grads` (`[capacity, 10]`, raw sums) and `state`
/// (`[capacity, ADAM_STATE]`), and writes the stepped sites and state to `out_sites` and
/// `out_state`. Inactive sites (position x < 0) are copied unchanged.
///
/// The log τ gradient is not column 2 of `grads` but the last Jacobi pass of tau diffusion
/// (see [`tau_diffusion_kernel()`](crate::sad::tau_diffusion_kernel())), run here per site on the
/// values `tau` holds as `neighbours` places them, with column 2 of `grads` as the raw values
/// and the neighbour `list` an earlier pass wrote. With `neighbours.lambda` = 0 the pass is a
/// copy (`list` is not read): `tau` is then the log τ gradient itself. Folding the last pass in
/// saves a launch per iteration.
///
/// Position and direction use one second moment for both components; the direction gradient is
/// first projected onto the tangent of the unit circle and the stepped direction renormalised.
/// After the step: position clamped to the image, radius to [1, 512], colour to [0, 1], log
/// anisotropy to [−4, 4].
///
/// A cube's rows of sites, gradients and state are staged through shared memory, so that every
/// global load and store is coalesced: with one unit reading its own 10-, 10- and 18-value rows,
/// each load or store instruction of a plane touched 32 separate sectors (`benches/RESULTS.md`
/// has the step's time both ways).
///
/// With `clocked`, λ and the bias corrections come from the clock row `tick[0]` names instead
/// of `neighbours` and `step` (see [`clock_value()`]). With `in_place`, `out_sites` and
/// `out_state` are `sites` and `state` themselves (a cube reads all of its rows before it writes
/// any, and only its own), and a dead site's row of gradients and moments is neither read nor
/// written: most rows of a fit's buffer are dead late in training, so the step moves a fraction
/// of the bytes.
///
/// Launch with cubes of [`ADAM_CUBE`] units, one unit per site, 1D.
#[cube(launch, launch_unchecked)]
// Nine buffers (sites, gradients, tau, lists, state, their outputs, the clock and its tick)
// beside the two launch structs: the last diffusion pass and the clock live in this launch.
#[allow(clippy::too_many_arguments)]
pub fn adam_kernel(
    sites: &Tensor<f32>,
    grads: &Tensor<f32>,
    tau: &Tensor<f32>,
    list: &Tensor<i32>,
    state: &Tensor<f32>,
    out_sites: &mut Tensor<f32>,
    out_state: &mut Tensor<f32>,
    step: AdamStep,
    neighbours: TauNeighbours,
    site_count: usize,
    clock: &Tensor<f32>,
    tick: &Tensor<u32>,
    #[comptime] clocked: bool,
    #[comptime] in_place: bool,
) {
    let first = CUBE_POS * ADAM_CUBE;
    let unit = UNIT_POS as usize;
    let rows = usize::min(ADAM_CUBE, site_count - usize::min(first, site_count));
    let mut values = Shared::<[f32]>::new_slice(ADAM_CUBE * SITE_PARAMS);
    let mut raw = Shared::<[f32]>::new_slice(ADAM_CUBE * SITE_PARAMS);
    let mut moments = Shared::<[f32]>::new_slice(ADAM_CUBE * ADAM_STATE);
    if comptime![in_place] {
        // The sites first: a dead row's gradients and moments are neither read nor written.
        #[unroll]
        for i in 0..SITE_PARAMS {
            let local = i * ADAM_CUBE + unit;
            if local < rows * SITE_PARAMS {
                values[local] = sites[first * SITE_PARAMS + local];
            }
        }
        sync_cube();
        #[unroll]
        for i in 0..SITE_PARAMS {
            let local = i * ADAM_CUBE + unit;
            if local < rows * SITE_PARAMS && row_is_live(&values, local / SITE_PARAMS) {
                raw[local] = grads[first * SITE_PARAMS + local];
            }
        }
        #[unroll]
        for i in 0..ADAM_STATE {
            let local = i * ADAM_CUBE + unit;
            if local < rows * ADAM_STATE && row_is_live(&values, local / ADAM_STATE) {
                moments[local] = state[first * ADAM_STATE + local];
            }
        }
    } else {
        #[unroll]
        for i in 0..SITE_PARAMS {
            let local = i * ADAM_CUBE + unit;
            if local < rows * SITE_PARAMS {
                values[local] = sites[first * SITE_PARAMS + local];
                raw[local] = grads[first * SITE_PARAMS + local];
            }
        }
        #[unroll]
        for i in 0..ADAM_STATE {
            let local = i * ADAM_CUBE + unit;
            if local < rows * ADAM_STATE {
                moments[local] = state[first * ADAM_STATE + local];
            }
        }
    }
    sync_cube();

    let p = unit * SITE_PARAMS;
    let s = unit * ADAM_STATE;
    if unit < rows && values[p + POSITION] >= 0.0 {
        let b1 = step.beta1;
        let b2 = step.beta2;
        let gs = step.grad_scale;
        let lambda = clock_value(neighbours.lambda, clock, tick, CLOCK_LAMBDA, clocked);
        let c1 = clock_value(step.correction1, clock, tick, CLOCK_CORRECTION1, clocked);
        let c2 = clock_value(step.correction2, clock, tick, CLOCK_CORRECTION2, clocked);
        let decay = MomentDecay {
            beta1: step.beta1,
            beta2: step.beta2,
            eps: step.eps,
            c1,
            c2,
        };
        let tau_grad = jacobi_from_list(
            list,
            tau,
            &neighbours,
            lambda,
            first + unit,
            raw[p + LOG_TAU],
            site_count,
        ) * gs;

        // Position: one second moment for both axes.
        let gx = raw[p + POSITION] * gs;
        let gy = raw[p + POSITION + 1] * gs;
        let mx = b1 * moments[s + M_POSITION] + (1.0 - b1) * gx;
        let my = b1 * moments[s + M_POSITION + 1] + (1.0 - b1) * gy;
        let v = b2 * moments[s + V_POSITION] + (1.0 - b2) * (gx * gx + gy * gy);
        let denom = f32::sqrt(v * c2) + step.eps;
        let nx = values[p + POSITION] - step.lr_position * mx * c1 / denom;
        let ny = values[p + POSITION + 1] - step.lr_position * my * c1 / denom;
        values[p + POSITION] = f32::clamp(nx, 0.0, step.max_x);
        values[p + POSITION + 1] = f32::clamp(ny, 0.0, step.max_y);
        moments[s + M_POSITION] = mx;
        moments[s + M_POSITION + 1] = my;
        moments[s + V_POSITION] = v;

        scalar_adam(
            &mut values,
            p + LOG_TAU,
            tau_grad,
            &mut moments,
            s + M_LOG_TAU,
            step.lr_log_tau,
            &decay,
        );
        let radius = raw[p + RADIUS] * gs;
        scalar_adam(
            &mut values,
            p + RADIUS,
            radius,
            &mut moments,
            s + M_RADIUS,
            step.lr_radius,
            &decay,
        );
        values[p + RADIUS] = f32::clamp(values[p + RADIUS], 1.0, 512.0);
        #[unroll]
        for c in 0..3 {
            let g = raw[p + COLOR + c] * gs;
            let m = b1 * moments[s + M_COLOR + c] + (1.0 - b1) * g;
            let v = b2 * moments[s + M_COLOR + 3 + c] + (1.0 - b2) * g * g;
            let value =
                values[p + COLOR + c] - step.lr_color * m * c1 / (f32::sqrt(v * c2) + step.eps);
            values[p + COLOR + c] = f32::clamp(value, 0.0, 1.0);
            moments[s + M_COLOR + c] = m;
            moments[s + M_COLOR + 3 + c] = v;
        }

        // Direction: Riemannian step on the unit circle.
        let ux = values[p + DIRECTION];
        let uy = values[p + DIRECTION + 1];
        let rx = raw[p + DIRECTION] * gs;
        let ry = raw[p + DIRECTION + 1] * gs;
        let radial = rx * ux + ry * uy;
        let tx = rx - ux * radial;
        let ty = ry - uy * radial;
        let mx = b1 * moments[s + M_DIRECTION] + (1.0 - b1) * tx;
        let my = b1 * moments[s + M_DIRECTION + 1] + (1.0 - b1) * ty;
        let v = b2 * moments[s + M_DIRECTION + 2] + (1.0 - b2) * (tx * tx + ty * ty);
        let denom = f32::sqrt(v * c2) + step.eps;
        let nx = ux - step.lr_direction * mx * c1 / denom;
        let ny = uy - step.lr_direction * my * c1 / denom;
        let norm2 = nx * nx + ny * ny;
        let mut dx = 1.0f32;
        let mut dy = 0.0f32;
        if norm2 >= 1e-12 {
            let inv = 1.0 / f32::sqrt(norm2);
            dx = nx * inv;
            dy = ny * inv;
        }
        values[p + DIRECTION] = dx;
        values[p + DIRECTION + 1] = dy;
        moments[s + M_DIRECTION] = mx;
        moments[s + M_DIRECTION + 1] = my;
        moments[s + M_DIRECTION + 2] = v;

        let aniso = raw[p + LOG_ANISO] * gs;
        scalar_adam(
            &mut values,
            p + LOG_ANISO,
            aniso,
            &mut moments,
            s + M_LOG_ANISO,
            step.lr_log_aniso,
            &decay,
        );
        values[p + LOG_ANISO] = f32::clamp(values[p + LOG_ANISO], -4.0, 4.0);
    }
    sync_cube();

    // In place, a dead row is left as it is: its values are already there.
    #[unroll]
    for i in 0..SITE_PARAMS {
        let local = i * ADAM_CUBE + unit;
        if local < rows * SITE_PARAMS
            && (!comptime![in_place] || row_is_live(&values, local / SITE_PARAMS))
        {
            out_sites[first * SITE_PARAMS + local] = values[local];
        }
    }
    #[unroll]
    for i in 0..ADAM_STATE {
        let local = i * ADAM_CUBE + unit;
        if local < rows * ADAM_STATE
            && (!comptime![in_place] || row_is_live(&values, local / ADAM_STATE))
        {
            out_state[first * ADAM_STATE + local] = moments[local];
        }
    }
}

/// Whether row `row` of a cube's staged sites is a live site (position x ≥ 0).
#[cube]
fn row_is_live(values: &Shared<[f32]>, row: usize) -> bool {
    values[row * SITE_PARAMS + POSITION] >= 0.0
}

/// The moment decay, ε and bias corrections of one step, as every parameter's update reads them.
#[derive(CubeType, Clone, Copy)]
struct MomentDecay {
    beta1: f32,
    beta2: f32,
    eps: f32,
    /// 1 / (1 − β1^t).
    c1: f32,
    /// 1 / (1 − β2^t).
    c2: f32,
}

/// Plain Adam on `values[index]` with gradient `grad` and rate `lr`, whose moments sit at
/// `moments[moment]` (m) and `moments[moment + 1]` (v); updates all three in place.
#[cube]
fn scalar_adam(
    values: &mut Shared<[f32]>,
    index: usize,
    grad: f32,
    moments: &mut Shared<[f32]>,
    moment: usize,
    lr: f32,
    decay: &MomentDecay,
) {
    let m = decay.beta1 * moments[moment] + (1.0 - decay.beta1) * grad;
    let v = decay.beta2 * moments[moment + 1] + (1.0 - decay.beta2) * grad * grad;
    moments[moment] = m;
    moments[moment + 1] = v;
    values[index] -= lr * m * decay.c1 / (f32::sqrt(v * decay.c2) + decay.eps);
}
