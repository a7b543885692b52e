//! Launches of a training iteration recorded once and replayed as a graph: the whole step in
//! place on the step clock, the clock's advance, and the copies that load the state a replay
//! works on and take it back out.

use burn::backend::TensorMetadata;
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};
use burn_sad_kernels::sad::{
    ADAM_STATE, AdamStep, BackwardOutputs, K, TrainingWordsLaunch, advance_clock_kernel,
    copy_state_kernel,
};
use cubecl::{CubeCount, CubeDim};

use super::super::SadReplayKernels;
use super::adam::launch_adam;
use super::clock::Clock;
use super::diffusion::{diffuse, tau_neighbours};
use super::{backward, capacity, expect_sites_and_lists, ids, site_grid};
use crate::runtime::launch::{expect_contiguous, expect_dims, launch_kernel};
use crate::sad::{BackwardStrategy, RenderGeometry};

/// One iteration of the summed squared error in place (see `SadReplayKernels::sad_step_in_place`):
/// the gradient pass, [`diffuse_and_step_in_place`], then the clock's advance.
pub(super) fn step_in_place(
    (sites, state, lists): (&CubeTensor, &CubeTensor, &CubeTensor),
    candidates: CubeTensor,
    target: CubeTensor,
    clock: Clock,
    step: AdamStep,
    (geometry, passes, strategy): (RenderGeometry, u32, BackwardStrategy),
) {
    let op = "sad_step_in_place";
    let candidates = ids(candidates);
    expect_sites_and_lists(op, sites, &candidates, geometry);
    let count = capacity(sites);
    expect_dims(op, "the Adam state", state, &[count, ADAM_STATE]);
    expect_dims(op, "the neighbour lists", lists, &[K + 1, count]);
    // Written in place: a padded buffer would be copied first, and the copy stepped instead.
    for (what, tensor) in [("sites", sites), ("Adam state", state), ("lists", lists)] {
        expect_contiguous(op, what, tensor);
    }
    clock.expect_shapes(op);
    let outputs = BackwardOutputs {
        from_target: true,
        removal: false,
    };
    let grads = backward(
        sites.clone(),
        candidates.clone(),
        target,
        geometry,
        outputs,
        strategy,
    );
    diffuse_and_step_in_place(
        (sites, state, lists),
        candidates,
        grads,
        step,
        (geometry, passes),
        &clock,
    );
    launch_kernel!(advance_clock_kernel(
        &sites.client,
        CubeCount::Static(1, 1, 1),
        CubeDim::new_1d(1),
        clock.tick.into_tensor_arg(),
    ));
}

/// Units of one copy launch; each copies every `COPY_UNITS`-th word.
const COPY_UNITS: usize = 1024 * 256;

/// Copies `sources` (sites, state, lists and, with a tick, candidates) word for word into
/// `destinations` of the same lengths, and sets `tick` to `iteration` (see `copy_state_kernel`).
pub(super) fn copy_state(
    sources: [CubeTensor; 4],
    destinations: [&CubeTensor; 4],
    tick: Option<(&CubeTensor, u32)>,
) {
    let sources = sources.map(into_contiguous);
    let op = "sad_copy_state";
    for (source, destination) in sources.iter().zip(destinations) {
        let (from, to) = (
            source.shape().num_elements(),
            destination.shape().num_elements(),
        );
        assert!(
            from == to,
            "{op}: copies {from} values into a buffer of {to}"
        );
        expect_contiguous(op, "a destination", destination);
        assert!(
            source.dtype.size() == 4 && destination.dtype.size() == 4,
            "{op}: copies 32-bit words, got {:?} into {:?}",
            source.dtype,
            destination.dtype
        );
    }
    let with_candidates = tick.is_some();
    let words = sources[..if with_candidates { 4 } else { 3 }]
        .iter()
        .map(|tensor| tensor.shape().num_elements())
        .max()
        .unwrap_or(0);
    let (tick, iteration) = tick.unwrap_or((destinations[0], 0));
    // A grid stride: at most 1024 cubes of 256 units (wgpu allows 65 535 cubes per axis).
    let (count, dim) = site_grid(words.min(COPY_UNITS));
    let [sites, state, lists, candidates] = sources;
    let [sites_out, state_out, lists_out, candidates_out] = destinations;
    launch_kernel!(copy_state_kernel(
        &sites_out.client,
        count,
        dim,
        TrainingWordsLaunch::new(
            sites.into_tensor_arg(),
            state.into_tensor_arg(),
            lists.into_tensor_arg(),
            candidates.into_tensor_arg(),
        ),
        TrainingWordsLaunch::new(
            sites_out.clone().into_tensor_arg(),
            state_out.clone().into_tensor_arg(),
            lists_out.clone().into_tensor_arg(),
            candidates_out.clone().into_tensor_arg(),
        ),
        tick.clone().into_tensor_arg(),
        iteration,
        with_candidates,
    ));
}

/// `diffuse_and_step` in place and on the clock, for an iteration recorded once and replayed:
/// `passes` ≥ 2 Jacobi passes from the `lists` of the step before, rewritten in place, the last
/// one inside the Adam kernel, which steps `sites` and `state` in place. Returns nothing new:
/// the three buffers hold the result.
fn diffuse_and_step_in_place(
    (sites, state, lists): (&CubeTensor, &CubeTensor, &CubeTensor),
    candidates: CubeTensor,
    grads: CubeTensor,
    step: AdamStep,
    (geometry, passes): (RenderGeometry, u32),
    clock: &Clock,
) {
    assert!(
        passes >= 2,
        "sad_step_in_place: {passes} tau diffusion passes, expected at least 2"
    );
    let grads = into_contiguous(grads);
    // λ in the launch arguments only gates the shape checks; the clock's is the one used.
    let lambda = 1.0;
    let (before, lists) = diffuse(
        sites.clone(),
        candidates,
        grads.clone(),
        Some(lists.clone()),
        geometry,
        (lambda, passes - 1),
        Some(clock),
    );
    let last = tau_neighbours(geometry, 1, 0, lambda);
    launch_adam(
        sites.clone(),
        grads,
        (before, lists, last),
        state.clone(),
        step,
        Some(clock),
    );
}

impl SadReplayKernels for CubeBackend {
    fn sad_step_in_place(
        sites: CubeTensor,
        state: CubeTensor,
        lists: CubeTensor,
        candidates: CubeTensor,
        target: CubeTensor,
        clock: CubeTensor,
        tick: CubeTensor,
        step: AdamStep,
        geometry: RenderGeometry,
        passes: u32,
        strategy: BackwardStrategy,
    ) -> (CubeTensor, CubeTensor, CubeTensor) {
        let clock = Clock { table: clock, tick };
        step_in_place(
            (&sites, &state, &lists),
            candidates,
            target,
            clock,
            step,
            (geometry, passes, strategy),
        );
        (sites, state, lists)
    }

    fn sad_copy_state(
        sites: CubeTensor,
        state: CubeTensor,
        lists: CubeTensor,
        candidates: CubeTensor,
        sites_into: CubeTensor,
        state_into: CubeTensor,
        lists_into: CubeTensor,
        candidates_into: CubeTensor,
        tick: CubeTensor,
        iteration: Option<u32>,
    ) -> (CubeTensor, CubeTensor, CubeTensor, CubeTensor, CubeTensor) {
        copy_state(
            [sites, state, lists, candidates],
            [&sites_into, &state_into, &lists_into, &candidates_into],
            iteration.map(|iteration| (&tick, iteration)),
        );
        (sites_into, state_into, lists_into, candidates_into, tick)
    }
}
