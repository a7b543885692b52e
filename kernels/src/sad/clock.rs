//! The step clock: the per-iteration scalars of a training step (the tau diffusion weight λ and
//! Adam's bias corrections) read on the device, so that one recorded iteration can be replayed
//! as a graph for many iterations, and the kernels that keep the training state where a replay
//! finds it.

use cubecl::prelude::*;

/// f32 values per row of a clock table: λ, 1 / (1 − β1^t), 1 / (1 − β2^t).
pub const CLOCK_COLUMNS: usize = 3;
/// Column of the tau diffusion weight λ in a clock row.
pub const CLOCK_LAMBDA: usize = 0;
/// Column of Adam's first-moment bias correction in a clock row.
pub const CLOCK_CORRECTION1: usize = 1;
/// Column of Adam's second-moment bias correction in a clock row.
pub const CLOCK_CORRECTION2: usize = 2;

/// Value `column` of the clock row that `tick[0]` names (`clock` is `[rows, CLOCK_COLUMNS]`),
/// when `clocked`; `given` (the launch's own scalar) otherwise, and then neither buffer is read.
#[cube]
pub fn clock_value(
    given: f32,
    clock: &Tensor<f32>,
    tick: &Tensor<u32>,
    #[comptime] column: usize,
    #[comptime] clocked: bool,
) -> f32 {
    let mut value = given;
    if comptime![clocked] {
        value = clock[tick[0] as usize * CLOCK_COLUMNS + column];
    }
    value
}

/// Moves the clock to the next row: `tick[0] += 1`. The last launch of a replayed iteration,
/// after every kernel that reads the clock.
///
/// Launch with one cube of one unit.
#[cube(launch, launch_unchecked)]
pub fn advance_clock_kernel(tick: &mut Tensor<u32>) {
    if ABSOLUTE_POS == 0 {
        tick[0] += 1;
    }
}

/// Copies the training state of a fit, 32-bit words as they are: `sites` into `sites_out`,
/// `state` into `state_out`, `lists` into `lists_out` and, with `with_candidates`, `candidates`
/// into `candidates_out`, and then sets `tick[0]` to `iteration`. Each pair has one length;
/// f32 and i32 buffers are bound as words. One launch to load the buffers a replayed iteration
/// reads, or to copy them out.
///
/// Launch 1D with any number of units: each copies every `units`-th word from its own on
/// (a grid stride), so the grid needs not grow with the buffers.
#[cube(launch, launch_unchecked)]
// Four buffer pairs and the clock: one launch copies the whole training state.
#[allow(clippy::too_many_arguments)]
pub fn copy_state_kernel(
    sites: &Tensor<u32>,
    sites_out: &mut Tensor<u32>,
    state: &Tensor<u32>,
    state_out: &mut Tensor<u32>,
    lists: &Tensor<u32>,
    lists_out: &mut Tensor<u32>,
    candidates: &Tensor<u32>,
    candidates_out: &mut Tensor<u32>,
    tick: &mut Tensor<u32>,
    iteration: u32,
    #[comptime] with_candidates: bool,
) {
    copy_words(sites, sites_out);
    copy_words(state, state_out);
    copy_words(lists, lists_out);
    if comptime![with_candidates] {
        copy_words(candidates, candidates_out);
        if ABSOLUTE_POS == 0 {
            tick[0] = iteration;
        }
    }
}

/// `target[w] = source[w]` for this unit's words: its own index, then every `units`-th one
/// after it (a grid stride over the whole launch).
#[cube]
fn copy_words(source: &Tensor<u32>, target: &mut Tensor<u32>) {
    let units = CUBE_COUNT * CUBE_DIM as usize;
    let mut word = ABSOLUTE_POS;
    while word < source.len() {
        target[word] = source[word];
        word += units;
    }
}
