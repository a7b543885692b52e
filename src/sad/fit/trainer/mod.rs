//! The training loop of the reference trainer (`trainVoronoi`), one iteration at a time.

mod clone;
mod finish;
mod phases;
mod replay;
mod warm_up;

use std::time::Instant;

use burn::tensor::{Device, Tensor};
use burn_sad_kernels::sad::ADAM_STATE;

use super::budget::{BudgetSolution, Schedule, solve_target_bpp};
use super::capture_gate::{self, DeviceShare};
use super::constants::TRAINER_CONSTANTS;
use super::init::{InitialShape, Initialisation, per_pixel_candidates};
use super::options::{FitOptions, FitProgress, FitResult, PhaseTimes};
use super::step::{NeighbourLists, diffuse_and_step_keeping};
use super::validate::validate;
use super::{FitError, TargetImage};
use crate::device::KernelFamily;
use crate::sad::sites::live_site_count;
use crate::sad::{Candidates, HilbertOrder, RenderGeometry, render};

/// Jacobi passes of tau-gradient diffusion per iteration (hard-coded in the reference).
const TAU_DIFFUSION_PASSES: u32 = TRAINER_CONSTANTS.tau_diffusion_passes;
/// Diffusion weight at the end of training; it ramps up from a tenth of it.
const TAU_DIFFUSION_LAMBDA: f32 = TRAINER_CONSTANTS.tau_diffusion_lambda;
/// Seed of the random candidate lists at the start of training (the reference's).
const CANDIDATE_SEED: u32 = TRAINER_CONSTANTS.candidate_seed;

/// A fit in progress: sites, optimiser state and candidate lists on the device, and the
/// schedule's bookkeeping on the host.
#[derive(Debug)]
pub struct Trainer {
    target: TargetImage,
    target_tensor: Tensor<3>,
    options: FitOptions,
    schedule: Schedule,
    budget: Option<BudgetSolution>,
    geometry: RenderGeometry,
    sites: Tensor<2>,
    state: Tensor<2>,
    candidates: Candidates,
    pending: Option<Candidates>,
    /// The tau diffusion's neighbour lists of the last step, while they hold (no candidate
    /// update, densify or prune since).
    tau_lists: Option<NeighbourLists>,
    hilbert: Option<(HilbertOrder, usize)>,
    allocated: usize,
    /// Rows of the site buffer: [`Schedule::peak_slots`], at most the configured capacity.
    slots: usize,
    active_estimate: usize,
    iteration: usize,
    per_pixel: bool,
    profile: Option<(PhaseTimes, Instant)>,
    /// The recorded steady iteration (see `replay`).
    replayer: replay::Replayer,
    replayed: usize,
}

impl Trainer {
    /// Places the initial sites and candidate lists for `target` on `device`.
    pub fn new(
        target: TargetImage,
        options: FitOptions,
        device: &Device,
    ) -> Result<Self, FitError> {
        let _share = DeviceShare::take();
        validate(&target, &options)?;
        crate::device::families_support(
            device,
            &[KernelFamily::SadRender, KernelFamily::SadTraining],
        )
        .map_err(|problem| FitError::UnsupportedDevice(problem.to_string()))?;
        if !options.backward.supported(device) {
            return Err(FitError::Config(options.backward.unsupported_reason()));
        }
        let config = &options.config;
        let (width, height) = (target.width, target.height);
        let shape = InitialShape {
            log_tau: config.init_log_tau,
            radius: config.init_radius,
        };
        let table = options.init.sites(&target, shape, options.seed);
        if table.active() == 0 {
            return Err(FitError::NoSites);
        }
        let initial = table.sites.len();
        let per_pixel = options.init == Initialisation::PerPixel;
        // The reference counts the gradient-weighted placeholders as live from the start.
        let active_estimate = match options.init {
            Initialisation::GradientWeighted { .. } => initial,
            _ => table.active(),
        };
        let mut schedule = Schedule::new(config, initial, width, height);
        let budget = (!options.fixed_rates && config.default_target_bpp > 0.0)
            .then(|| solve_target_bpp(config.default_target_bpp, width, height, &schedule));
        if let Some(solution) = budget {
            schedule.densify_rate = solution.densify_rate;
            schedule.prune_rate = solution.prune_rate;
        }
        let geometry = RenderGeometry {
            width,
            height,
            downscale: config.cand_downscale,
        };
        // The buffer holds the slots the schedule will fill, not the whole configured capacity:
        // the kernels that visit every slot then skip a tail no site ever reaches.
        let slots = schedule.peak_slots(active_estimate);
        let sites = table.to_tensor(slots, device);
        let state = Tensor::zeros([slots, ADAM_STATE], device);
        let candidates = if per_pixel && geometry.downscale == 1 {
            per_pixel_candidates(geometry, device)
        } else {
            let seed = CANDIDATE_SEED ^ options.seed as u32;
            Candidates::random(&sites.clone().narrow(0, 0, initial), geometry, seed)
        };
        Ok(Self {
            target_tensor: target.to_tensor(device),
            target,
            options,
            schedule,
            budget,
            geometry,
            sites,
            state,
            candidates,
            pending: None,
            tau_lists: None,
            hilbert: None,
            allocated: initial,
            slots,
            active_estimate,
            iteration: 0,
            per_pixel,
            profile: None,
            replayer: replay::Replayer::default(),
            replayed: 0,
        })
    }

    /// Times every phase of the following iterations (see [`Trainer::phase_times`]). Each phase
    /// then waits for the device, which costs some speed.
    pub fn profile(&mut self) {
        self.profile = Some((PhaseTimes::default(), Instant::now()));
    }

    /// The phase times gathered since [`Trainer::profile`].
    pub fn phase_times(&self) -> Option<&PhaseTimes> {
        self.profile.as_ref().map(|p| &p.0)
    }

    /// Adds the time since the last lap to `phase` when profiling.
    fn lap(&mut self, phase: usize) {
        if let Some((times, last)) = &mut self.profile {
            let _ = self.sites.device().sync();
            let now = Instant::now();
            times.totals[phase] += now - *last;
            *last = now;
        }
    }

    /// Iterations done.
    pub fn iteration(&self) -> usize {
        self.iteration
    }

    /// Iterations run from the recorded graph of a steady iteration so far (see
    /// [`FitOptions::replay`]).
    pub fn replayed_iterations(&self) -> usize {
        self.replayed
    }

    /// Whether every iteration has run.
    pub fn is_done(&self) -> bool {
        self.iteration >= self.options.config.default_iters
    }

    /// The schedule the run follows (with the solved rates).
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// What the bits-per-pixel solver chose, if it ran.
    pub fn budget(&self) -> Option<BudgetSolution> {
        self.budget
    }

    /// The `[slots, 10]` site buffer (inactive slots have position x < 0): as many rows as the
    /// schedule ever fills ([`Schedule::peak_slots`]).
    pub fn sites(&self) -> Tensor<2> {
        match self.replayer.is_loaded() {
            // Later replays rewrite the buffer in place.
            true => self.clone().sites,
            false => self.sites.clone(),
        }
    }

    /// The running estimate of live sites the schedule works with.
    pub fn active_estimate(&self) -> usize {
        self.active_estimate
    }

    /// Live sites, counted on the device.
    pub fn active_sites(&self) -> usize {
        live_site_count(self.sites.clone())
    }

    /// The current render, `[3, H, W]`.
    pub fn render(&self) -> Tensor<3> {
        render(
            self.sites.clone(),
            self.pending.as_ref().unwrap_or(&self.candidates),
        )
    }

    /// PSNR of the current render, in dB.
    pub fn psnr(&self) -> f64 {
        self.psnr_of(self.render())
    }

    /// One training iteration, in the reference's order. Returns the PSNR on measuring
    /// iterations (every `log_every` and the last).
    pub fn step(&mut self) -> Option<f64> {
        // Between iterations, another thread's graph may be recorded; not during one (see
        // `capture_gate`).
        capture_gate::let_recordings_in();
        let _share = DeviceShare::take();
        let it = self.iteration;
        let config = self.options.config.clone();
        let update = config.cand_update_freq > 0
            && it.is_multiple_of(config.cand_update_freq)
            && (!self.per_pixel || it >= self.schedule.prune_start);
        let splits = self
            .schedule
            .splits_at(it, self.allocated, self.active_estimate);
        if update {
            // A densify iteration splits with the new lists; otherwise the gradient still uses
            // the old ones and the new ones arrive for the tau diffusion.
            let mut next = self.candidates.clone();
            self.propagate(&mut next, config.cand_update_passes.max(1));
            if splits > 0 {
                self.candidates = next;
            } else {
                self.pending = Some(next);
            }
        }
        if self.replays(it, update, splits) && self.replay_step(it) {
            self.iteration += 1;
            return self.measured_psnr(it);
        }
        // This iteration replaces the sites, state and lists with new tensors.
        self.replayer.unload();
        if update || splits > 0 {
            // New candidate lists or new sites: the diffusion finds its neighbours again.
            self.tau_lists = None;
        }
        self.lap(0);
        if splits > 0 {
            self.densify(splits);
        }
        self.lap(1);
        let prune = self.schedule.is_prune_iteration(it);

        // On prune iterations the same pass also sums each site's removal delta.
        let (grads, removal) = self.gradients(prune);
        self.lap(2);
        if let Some(next) = self.pending.take() {
            self.candidates = next;
        }
        let lambda = self.diffusion_lambda(it);
        let step = self.adam_parameters(it + 1);
        let (sites, state, lists) = diffuse_and_step_keeping(
            self.sites.clone(),
            &self.candidates,
            grads,
            self.state.clone(),
            &step,
            (lambda, TAU_DIFFUSION_PASSES),
            self.tau_lists.as_ref(),
        );
        self.sites = sites;
        self.state = state;
        self.tau_lists = lists;
        self.lap(3);

        if let Some(removal) = removal {
            let count = self.schedule.prunes_at(it, self.active_estimate);
            if count > 0 {
                self.prune(removal, count);
                self.tau_lists = None;
            }
        }
        self.lap(4);
        self.iteration += 1;
        let psnr = self.measured_psnr(it);
        self.lap(5);
        psnr
    }

    /// Runs the remaining iterations, then measures the result. `progress` sees every
    /// iteration.
    pub fn run(mut self, mut progress: impl FnMut(&FitProgress)) -> FitResult {
        // Device work between the steps too (see `capture_gate`).
        let _share = DeviceShare::take();
        let start = Instant::now();
        let iters = self.options.config.default_iters;
        while !self.is_done() {
            let psnr = self.step();
            let active_sites = if psnr.is_some() {
                self.active_sites()
            } else {
                self.active_estimate
            };
            progress(&FitProgress {
                iteration: self.iteration,
                iters,
                psnr,
                active_sites,
                elapsed: start.elapsed(),
            });
        }
        self.finish(start)
    }
}

/// Fits `target` with SAD on `device`: [`Trainer::new`], [`Trainer::warm_up`], then
/// [`Trainer::run`].
pub fn fit(
    target: &TargetImage,
    options: FitOptions,
    device: &Device,
    progress: impl FnMut(&FitProgress),
) -> Result<FitResult, FitError> {
    // The whole fit, outputs included, is device work that another thread's recording must
    // not interleave with (see `capture_gate`).
    let _share = DeviceShare::take();
    let trainer = Trainer::new(target.clone(), options, device)?;
    trainer.warm_up();
    Ok(trainer.run(progress))
}
