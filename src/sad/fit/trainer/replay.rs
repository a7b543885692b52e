//! Steady-state iterations recorded once as a device graph and replayed: one dispatch per
//! iteration instead of six kernel launches, each with its host-side cost (buffer lookups,
//! argument upload, the driver call), which is most of an iteration's time on a small photo.
//!
//! An iteration is steady when nothing but the gradient pass, tau diffusion over the kept
//! neighbour lists and Adam runs: no candidate update, densify or prune, the squared-error loss
//! only (see `Trainer::replays`). Its kernels then run in place on buffers the
//! [`Replay`] owns, reading λ and Adam's bias corrections from a clock table on the device
//! whose tick the iteration advances (see `SadReplayKernels::sad_step_in_place`), so the recording
//! stays valid from one iteration to the next. A run of steady iterations (between two
//! candidate updates, say) starts by copying the trainer's state into those buffers in one
//! launch; the trainer then works on them directly, and the next other iteration replaces them
//! with new tensors as it always does.
//!
//! Graphs are used on CubeCL devices (CUDA and HIP replay them as one dispatch; wgpu re-encodes
//! the recorded dispatches), not under Burn's fusion, and not when
//! [`FitOptions::replay`](crate::sad::fit::FitOptions::replay) is off.

use burn::backend::{Backend, BackendGraph, Dispatch};
use burn::tensor::{DType, Device, FloatDType, Int, IntDType, Tensor, TensorData};
use burn_sad_kernels::sad::{ADAM_STATE, CLOCK_COLUMNS, K, SITE_PARAMS};

use super::{TAU_DIFFUSION_PASSES, Trainer};
use crate::sad::backend::KernelCall;
use crate::sad::fit::capture_gate;
use crate::sad::fit::step::NeighbourLists;
use crate::sad::{Candidates, SadReplayKernels};

/// The longest fit whose clock table is kept on the device (12 bytes per iteration); longer
/// fits run op by op.
const MAX_CLOCK_ROWS: usize = 1 << 20;

/// The buffers a recorded iteration works on, and the recording.
pub(super) struct Replay {
    sites: Tensor<2>,
    state: Tensor<2>,
    lists: Tensor<2, Int>,
    candidates: Tensor<2, Int>,
    clock: Tensor<1>,
    tick: Tensor<1, Int>,
    /// The recorded iteration, once recorded.
    graph: Option<BackendGraph<Dispatch>>,
}

/// Whether a trainer replays its steady iterations, and the recording once it has one.
#[derive(Default)]
pub(super) enum Replayer {
    /// Not tried yet: the first steady iteration records the graph.
    #[default]
    Untried,
    /// Recorded; `loaded` while the trainer's sites, state and lists are the replay's buffers.
    Ready { replay: Box<Replay>, loaded: bool },
    /// Not available here (or recording failed): every iteration runs op by op.
    Off,
}

impl Clone for Replayer {
    /// A clone records its own graph: the buffers of this one are not shared.
    fn clone(&self) -> Self {
        match self {
            Self::Off => Self::Off,
            _ => Self::Untried,
        }
    }
}

impl std::fmt::Debug for Replayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Untried => f.write_str("Untried"),
            Self::Ready { loaded, .. } => write!(f, "Ready {{ loaded: {loaded} }}"),
            Self::Off => f.write_str("Off"),
        }
    }
}

impl Replayer {
    /// Whether the trainer's sites, state and lists are the replay's buffers right now.
    pub(super) fn is_loaded(&self) -> bool {
        matches!(self, Self::Ready { loaded: true, .. })
    }

    /// The trainer's tensors are its own again (an iteration replaced them).
    pub(super) fn unload(&mut self) {
        if let Self::Ready { loaded, .. } = self {
            *loaded = false;
        }
    }
}

/// Whether recorded iterations can run on `device` in this build.
#[cfg(feature = "cube")]
fn available(device: &Device) -> bool {
    !cfg!(feature = "fusion") && crate::device::uses_fused_kernels(device)
}

/// Without CubeCL there are no kernels to record.
#[cfg(not(feature = "cube"))]
fn available(_device: &Device) -> bool {
    false
}

impl Trainer {
    /// Whether iteration `it` is steady, so that it can run from the recorded graph.
    pub(super) fn replays(&self, it: usize, update: bool, splits: usize) -> bool {
        let config = &self.options.config;
        !matches!(self.replayer, Replayer::Off)
            && !update
            && splits == 0
            && self.pending.is_none()
            && self.tau_lists.is_some()
            && self.profile.is_none()
            && self.options.ssim_weight == 0.0
            && !self.schedule.is_prune_iteration(it)
            && config.default_iters <= MAX_CLOCK_ROWS
    }

    /// Runs iteration `it` (steady, see [`Trainer::replays`]) from the recorded graph, recording
    /// it first if there is none yet. Falls back to `false` (nothing run) where graphs are not
    /// available.
    pub(super) fn replay_step(&mut self, it: usize) -> bool {
        if matches!(self.replayer, Replayer::Untried) {
            let (replayer, ran) = match self.options.replay && available(&self.sites.device()) {
                // While no other thread's commands can reach the device thread (see
                // `capture_gate`).
                true => capture_gate::exclusive(|| self.record(it)),
                false => (Replayer::Off, false),
            };
            self.replayer = replayer;
            // Recording ran iteration `it` itself, in place, before it recorded it.
            self.replayed += usize::from(matches!(self.replayer, Replayer::Ready { .. }));
            return ran;
        }
        let Replayer::Ready { replay, loaded } = &mut self.replayer else {
            return false;
        };
        if !*loaded {
            let live = (&mut self.sites, &mut self.state, &mut self.tau_lists);
            replay.adopt(live, &self.candidates, it);
            *loaded = true;
        }
        let device = self.sites.device();
        // SAFETY: every buffer the recording touched is alive (the replay owns its buffers and
        // the graph guards the pages of the intermediates), only this thread uses them, and
        // loads, replays and reads all go through this thread's stream.
        let graph = replay.graph.as_ref().expect("a ready replay is recorded");
        unsafe { <Dispatch as Backend>::graph_replay(device.as_dispatch(), graph) }
            .expect("a recorded iteration replays");
        self.replayed += 1;
        true
    }

    /// Allocates the replay's buffers, loads the state, runs iteration `it` in place and
    /// records it. Also says whether iteration `it` ran: it has once the buffers are loaded,
    /// even if recording then fails (the trainer goes on op by op from the buffers).
    fn record(&mut self, it: usize) -> (Replayer, bool) {
        let device = self.sites.device();
        let dispatch = device.as_dispatch();
        // Before the warm-up run, so that the pools keep what it allocates for the recording.
        if <Dispatch as Backend>::graph_prepare(dispatch).is_err() {
            return (Replayer::Off, false);
        }
        // The buffers take the sizes of the state they load.
        let capacity = self.sites.dims()[0];
        let words = (&device, DType::I32);
        let cells = self.candidates.ids().dims()[0];
        let mut replay = Replay {
            sites: contiguous_f32([capacity, SITE_PARAMS], &device),
            state: contiguous_f32([capacity, ADAM_STATE], &device),
            lists: contiguous_i32([K + 1, capacity], &device),
            candidates: contiguous_i32([cells, K], &device),
            clock: clock_table(self, &device),
            tick: Tensor::zeros([1], words),
            graph: None,
        };
        let live = (&mut self.sites, &mut self.state, &mut self.tau_lists);
        replay.adopt(live, &self.candidates, it);
        // The warm-up run: iteration `it`.
        replay.step(self);
        if <Dispatch as Backend>::graph_start_capture(dispatch).is_err() {
            // Closing unwinds a prepared capture, which would hold the stream otherwise.
            let _ = <Dispatch as Backend>::graph_stop_capture(dispatch);
            return (Replayer::Off, true);
        }
        // Recorded, not run.
        replay.step(self);
        match <Dispatch as Backend>::graph_stop_capture(dispatch) {
            Ok(graph) => {
                replay.graph = Some(graph);
                let replay = Box::new(replay);
                let ready = Replayer::Ready {
                    replay,
                    loaded: true,
                };
                (ready, true)
            }
            Err(_) => (Replayer::Off, true),
        }
    }
}

impl Replay {
    /// Loads the trainer's `live` sites, state and lists and its `candidates` (see
    /// [`Replay::load`]) and hands it the replay's buffers in their place, to work on from
    /// now on.
    fn adopt(&self, live: LiveState<'_>, candidates: &Candidates, it: usize) {
        let (sites, state, lists) = live;
        let kept = lists.as_ref().expect("steady iterations keep their lists");
        self.load((sites, state, &kept.0, &candidates.ids()), it);
        (*sites, *state) = (self.sites.clone(), self.state.clone());
        *lists = Some(NeighbourLists(self.lists.clone()));
    }

    /// Copies `(sites, state, lists, candidates)` into the replay's buffers and sets the clock
    /// to iteration `it`, in one launch.
    fn load(&self, (sites, state, lists, candidates): TrainingState, it: usize) {
        // Word for word: every buffer in its 32-bit type (casts to the same type are free).
        drop(<Dispatch as SadReplayKernels>::sad_copy_state(
            sites.clone().cast(FloatDType::F32).into_dispatch(),
            state.clone().cast(FloatDType::F32).into_dispatch(),
            lists.clone().cast(IntDType::I32).into_dispatch(),
            candidates.clone().cast(IntDType::I32).into_dispatch(),
            KernelCall::arg(self.sites.clone()),
            KernelCall::arg(self.state.clone()),
            KernelCall::arg(self.lists.clone()),
            KernelCall::arg(self.candidates.clone()),
            KernelCall::arg(self.tick.clone()),
            Some(it as u32),
        ));
    }

    /// One iteration in place on the replay's buffers.
    fn step(&self, trainer: &Trainer) {
        drop(<Dispatch as SadReplayKernels>::sad_step_in_place(
            KernelCall::arg(self.sites.clone()),
            KernelCall::arg(self.state.clone()),
            KernelCall::arg(self.lists.clone()),
            KernelCall::arg(self.candidates.clone()),
            KernelCall::arg(trainer.target_tensor.clone()),
            KernelCall::arg(self.clock.clone()),
            KernelCall::arg(self.tick.clone()),
            // Its learning rates, decays and clamps; λ and the bias corrections come from the
            // clock, so the recording holds for every iteration.
            trainer.adam_parameters(1),
            trainer.geometry,
            TAU_DIFFUSION_PASSES,
            trainer.options.backward,
        ));
    }

    /// Copies of the replay's sites, state and lists that later replays leave alone.
    pub(super) fn detached(&self) -> (Tensor<2>, Tensor<2>, Tensor<2, Int>) {
        let device = self.sites.device();
        let call = KernelCall::on(&device);
        let (sites, state, lists, _, _) = <Dispatch as SadReplayKernels>::sad_copy_state(
            KernelCall::arg(self.sites.clone()),
            KernelCall::arg(self.state.clone()),
            KernelCall::arg(self.lists.clone()),
            KernelCall::arg(self.candidates.clone()),
            KernelCall::arg(contiguous_f32(self.sites.dims(), &device)),
            KernelCall::arg(contiguous_f32(self.state.dims(), &device)),
            KernelCall::arg(contiguous_i32(self.lists.dims(), &device)),
            KernelCall::arg(self.candidates.clone()),
            KernelCall::arg(self.tick.clone()),
            None,
        );
        (call.out(sites), call.out(state), call.out(lists))
    }
}

/// An uninitialised f32 matrix with contiguous rows, as the in-place kernels index it: a 1D
/// buffer reshaped (a 2D allocation may pad its rows).
fn contiguous_f32(dims: [usize; 2], device: &Device) -> Tensor<2> {
    Tensor::<1>::empty([dims[0] * dims[1]], (device, DType::F32)).reshape(dims)
}

/// [`contiguous_f32`] of i32.
fn contiguous_i32(dims: [usize; 2], device: &Device) -> Tensor<2, Int> {
    Tensor::<1, Int>::empty([dims[0] * dims[1]], (device, DType::I32)).reshape(dims)
}

/// The trainer's sites, state and neighbour lists, which a replay takes over.
type LiveState<'a> = (
    &'a mut Tensor<2>,
    &'a mut Tensor<2>,
    &'a mut Option<NeighbourLists>,
);

type TrainingState<'a> = (
    &'a Tensor<2>,
    &'a Tensor<2>,
    &'a Tensor<2, Int>,
    &'a Tensor<2, Int>,
);

/// The clock table of the whole fit, row after row in one dimension: row `it` holds iteration
/// `it`'s λ and bias corrections, computed as the op-by-op iterations compute them.
fn clock_table(trainer: &Trainer, device: &Device) -> Tensor<1> {
    let iters = trainer.options.config.default_iters;
    let rows: Vec<f32> = (0..iters)
        .flat_map(|it| {
            let step = trainer.adam_parameters(it + 1);
            [
                trainer.diffusion_lambda(it),
                step.correction1,
                step.correction2,
            ]
        })
        .collect();
    Tensor::from_data(TensorData::new(rows, [iters * CLOCK_COLUMNS]), device)
}
