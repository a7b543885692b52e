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

/// The training state of a fit as 32-bit words (f32 and i32 buffers are bound as words): what
/// [`copy_state_kernel`](crate::sad::copy_state_kernel()) copies.
#[derive(CubeLaunch, CubeType)]
pub struct TrainingWords {
    /// The sites.
    pub sites: OwnedTensor<u32>,
    /// The Adam state.
    pub state: OwnedTensor<u32>,
    /// The tau diffusion's neighbour lists.
    pub lists: OwnedTensor<u32>,
    /// The candidate lists.
    pub candidates: OwnedTensor<u32>,
}

/// Copies the training state of a fit `from` → `to`, word for word: the sites, the state, the
/// lists and, with `with_candidates`, the candidates; and then sets `tick[0]` to `iteration`.
/// Each pair has one length. One launch to load the buffers a replayed iteration reads, or to
/// copy them out.
///
/// Launch 1D with any number of units: each copies every `units`-th word from its own on
/// (a grid stride), so the grid needs not grow with the buffers.
#[cube(launch, launch_unchecked)]
pub fn copy_state_kernel(
    from: &TrainingWords,
    to: &mut TrainingWords,
    tick: &mut Tensor<u32>,
    iteration: u32,
    #[comptime] with_candidates: bool,
) {
    copy_words(&from.sites, &mut to.sites);
    copy_words(&from.state, &mut to.state);
    copy_words(&from.lists, &mut to.lists);
    if comptime![with_candidates] {
        copy_words(&from.candidates, &mut to.candidates);
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
