//! The training loop of the reference trainer (`trainVoronoi`), one iteration at a time.

use std::time::{Duration, Instant};

use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_sad_kernels::sad::{ADAM_STATE, AdamStep, K, StatisticsKind};

use super::budget::{BudgetSolution, Schedule, bits_per_pixel, solve_target_bpp};
use super::densify::{split_candidates, split_sites};
use super::init::{InitialShape, Initialisation};
use super::ops::{
    adam_step, prune_sites, removal_deltas, site_statistics, squared_error_gradients, tau_diffusion,
};
use super::{FitError, TargetImage, TrainingConfig};
use crate::sad::{
    Candidates, HilbertOrder, PropagationOptions, RenderGeometry, SiteTable, psnr, render,
};
use crate::ssim::{SsimOptions, fused_ssim};

/// Jacobi passes of tau-gradient diffusion per iteration (hard-coded in the reference).
const TAU_DIFFUSION_PASSES: u32 = 4;
/// Diffusion weight at the end of training; it ramps up from a tenth of it.
const TAU_DIFFUSION_LAMBDA: f32 = 0.05;
/// Seed of the random candidate lists at the start of training (the reference's).
const CANDIDATE_SEED: u32 = 0;

/// Everything a fit needs besides the image.
#[derive(Clone, Debug, PartialEq)]
pub struct FitOptions {
    /// The reference's configuration keys (iterations, schedules, learning rates, …).
    pub config: TrainingConfig,
    /// Where the sites start.
    pub init: Initialisation,
    /// Multiplier of every learning rate (the reference's `--lr`).
    pub lr_scale: f32,
    /// Weight w of the SSIM term: the loss is SSE + w·W·H·(1 − SSIM), with the exact 11×11
    /// Gaussian SSIM of [`fused_ssim`] (0: the reference's plain summed squared error).
    pub ssim_weight: f32,
    /// Shifts the initial R2 sequence and the random candidate lists (0: the reference's).
    pub seed: u64,
    /// Iterations between PSNR measurements (each one renders and waits for the device).
    pub log_every: usize,
    /// Disable the bits-per-pixel solver even if the config sets a target.
    pub fixed_rates: bool,
}

impl FitOptions {
    /// The reference's defaults for `config`: gradient-weighted initialisation with
    /// `DEFAULT_SITES` sites, learning-rate scale 1, no SSIM term.
    pub fn new(config: TrainingConfig) -> Self {
        Self {
            init: Initialisation::GradientWeighted {
                sites: config.default_sites,
                alpha: 1.0,
            },
            config,
            lr_scale: 1.0,
            ssim_weight: 0.0,
            seed: 0,
            log_every: 1000,
            fixed_rates: false,
        }
    }
}

impl Default for FitOptions {
    fn default() -> Self {
        Self::new(TrainingConfig::default())
    }
}

/// Where a fit stands after an iteration.
#[derive(Clone, Debug, PartialEq)]
pub struct FitProgress {
    /// Iterations done.
    pub iteration: usize,
    /// Iterations in the run.
    pub iters: usize,
    /// PSNR of the current render in dB, on iterations that measured it.
    pub psnr: Option<f64>,
    /// Live sites (counted on measuring iterations, the running estimate otherwise).
    pub active_sites: usize,
    /// Time since the loop started.
    pub elapsed: Duration,
}

/// The outcome of a fit.
#[derive(Clone, Debug)]
pub struct FitResult {
    /// The live sites, compacted, with the image size.
    pub sites: SiteTable,
    /// The final render, `[3, H, W]`, not clamped.
    pub image: Tensor<3>,
    /// PSNR of the render in dB (on f32 values, as the reference reports it).
    pub psnr: f64,
    /// SSIM of the render (11×11 Gaussian, σ 1.5, mean over RGB).
    pub ssim: f64,
    /// Bits per pixel of the sites at 128 bits per site.
    pub bits_per_pixel: f64,
    /// Time of the training loop, final render included (not initialisation or file I/O).
    pub training_time: Duration,
    /// Iterations run.
    pub iterations: usize,
    /// What the bits-per-pixel solver chose, if it ran.
    pub budget: Option<BudgetSolution>,
    /// Time per phase of the iteration, if the run was profiled ([`Trainer::profile`]).
    pub phase_times: Option<PhaseTimes>,
}

/// Phases of an iteration, as [`PhaseTimes`] names them.
const PHASES: [&str; 7] = [
    "candidates",
    "densify",
    "gradients",
    "tau diffusion",
    "adam",
    "prune",
    "measure",
];

/// Where the training time went, per phase of the iteration (see [`Trainer::profile`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseTimes {
    /// Total time per phase, in [`PHASES`] order.
    totals: [Duration; PHASES.len()],
}

impl PhaseTimes {
    /// `(phase, total time)` pairs.
    pub fn phases(&self) -> impl Iterator<Item = (&'static str, Duration)> + '_ {
        PHASES.iter().copied().zip(self.totals.iter().copied())
    }
}

impl std::fmt::Display for PhaseTimes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let total: Duration = self.totals.iter().sum();
        for (name, time) in self.phases() {
            let share = 100.0 * time.as_secs_f64() / total.as_secs_f64().max(1e-12);
            writeln!(
                f,
                "{name:>14}: {:9.1} ms ({share:4.1} %)",
                time.as_secs_f64() * 1e3
            )?;
        }
        Ok(())
    }
}

/// A fit in progress: sites, optimiser state and candidate lists on the device, and the
/// schedule's bookkeeping on the host.
#[derive(Clone, Debug)]
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
    hilbert: Option<(HilbertOrder, usize)>,
    allocated: usize,
    active_estimate: usize,
    iteration: usize,
    per_pixel: bool,
    profile: Option<(PhaseTimes, Instant)>,
}

impl Trainer {
    /// Places the initial sites and candidate lists for `target` on `device`.
    pub fn new(
        target: TargetImage,
        options: FitOptions,
        device: &Device,
    ) -> Result<Self, FitError> {
        validate(&target, &options)?;
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
        let max_sites = if config.default_max_sites > 0 {
            config.default_max_sites
        } else {
            (2 * width * height).min((8 * initial).max(8192))
        };
        let mut schedule = Schedule::new(config, initial);
        schedule.capacity = initial.max(max_sites);
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
        let sites = table.to_tensor(schedule.capacity, device);
        let state = Tensor::zeros([schedule.capacity, ADAM_STATE], device);
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
            hilbert: None,
            allocated: initial,
            active_estimate,
            iteration: 0,
            per_pixel,
            profile: None,
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

    /// Runs every kernel of an iteration once on the current buffers and discards the results,
    /// so that just-in-time compilation happens before a timed run (the reference's timings
    /// exclude its module loading too).
    pub fn warm_up(&self) {
        let mut candidates = self.candidates.clone();
        let mut scratch = self.clone();
        scratch.profile = None;
        scratch.propagate(&mut candidates, 1);
        let (_, removal) = scratch.gradients(true);
        let (grads, _) = scratch.gradients(false);
        drop(site_statistics(
            &scratch.sites,
            &scratch.candidates,
            &scratch.target_tensor,
            StatisticsKind::Densify,
        ));
        if let Some(removal) = removal {
            scratch.prune(removal, 1);
        }
        let tau = tau_diffusion(
            &scratch.sites,
            &candidates,
            grads.clone(),
            0.01,
            TAU_DIFFUSION_PASSES,
        );
        let step = scratch.adam_parameters(1);
        let (sites, _) = adam_step(
            scratch.sites.clone(),
            grads,
            tau,
            scratch.state.clone(),
            &step,
        );
        scratch.sites = sites;
        let _ = scratch.active_sites();
        let _ = scratch.psnr();
        let _ = self.sites.device().sync();
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

    /// The `[capacity, 10]` site buffer (inactive slots have position x < 0).
    pub fn sites(&self) -> Tensor<2> {
        self.sites.clone()
    }

    /// The running estimate of live sites the schedule works with.
    pub fn active_estimate(&self) -> usize {
        self.active_estimate
    }

    /// Live sites, counted on the device.
    pub fn active_sites(&self) -> usize {
        let live = self
            .sites
            .clone()
            .narrow(1, 0, 1)
            .greater_equal_elem(0.0)
            .int()
            .sum();
        live.into_scalar::<i64>() as usize
    }

    /// The current render, `[3, H, W]`.
    pub fn render(&self) -> Tensor<3> {
        render(
            self.sites.clone(),
            self.pending.as_ref().unwrap_or(&self.candidates),
            [self.geometry.height, self.geometry.width],
        )
    }

    /// PSNR of the current render, in dB.
    pub fn psnr(&self) -> f64 {
        psnr(self.render(), self.target_tensor.clone())
    }

    /// One training iteration, in the reference's order. Returns the PSNR on measuring
    /// iterations (every `log_every` and the last).
    pub fn step(&mut self) -> Option<f64> {
        let it = self.iteration;
        let config = self.options.config.clone();
        let iters = config.default_iters;

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
        let progress = it as f32 / iters.max(1) as f32;
        let lambda = TAU_DIFFUSION_LAMBDA * (0.1 + 0.9 * progress);
        let tau = tau_diffusion(
            &self.sites,
            &self.candidates,
            grads.clone(),
            lambda,
            TAU_DIFFUSION_PASSES,
        );
        self.lap(3);
        let step = self.adam_parameters(it + 1);
        let (sites, state) = adam_step(self.sites.clone(), grads, tau, self.state.clone(), &step);
        self.sites = sites;
        self.state = state;
        self.lap(4);

        if let Some(removal) = removal {
            let count = self.schedule.prunes_at(it, self.active_estimate);
            if count > 0 {
                self.prune(removal, count);
            }
        }
        self.lap(5);
        self.iteration += 1;
        let log_every = self.options.log_every.max(1);
        let psnr = (it.is_multiple_of(log_every) || self.iteration == iters).then(|| self.psnr());
        self.lap(6);
        psnr
    }

    /// Runs the remaining iterations, then measures the result. `progress` sees every
    /// iteration.
    pub fn run(mut self, mut progress: impl FnMut(&FitProgress)) -> FitResult {
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

    /// The final render and its metrics; `start` is when the loop began.
    pub fn finish(mut self, start: Instant) -> FitResult {
        if let Some(next) = self.pending.take() {
            self.candidates = next;
        }
        let image = self.render();
        let psnr = psnr(image.clone(), self.target_tensor.clone());
        let training_time = start.elapsed();
        let ssim = fused_ssim(
            image.clone().unsqueeze::<4>(),
            self.target_tensor.clone().unsqueeze::<4>(),
            SsimOptions::default(),
        )
        .into_scalar::<f32>() as f64;
        let (width, height) = (self.geometry.width, self.geometry.height);
        let mut sites = SiteTable::from_tensor(self.sites.clone(), width, height);
        sites.sites.retain(|s| s[0] >= 0.0);
        FitResult {
            bits_per_pixel: bits_per_pixel(sites.sites.len(), width, height),
            sites,
            image,
            psnr,
            ssim,
            training_time,
            iterations: self.iteration,
            budget: self.budget,
            phase_times: self.profile.map(|(times, _)| times),
        }
    }

    fn propagate(&mut self, candidates: &mut Candidates, passes: usize) {
        let live = self.sites.clone().narrow(0, 0, self.allocated);
        if self.hilbert.as_ref().map(|h| h.1) != Some(self.allocated) {
            let (width, height) = (self.geometry.width, self.geometry.height);
            let table = SiteTable::from_tensor(live.clone(), width, height);
            let order = HilbertOrder::of(&table, width, height, &live.device());
            self.hilbert = Some((order, self.allocated));
        }
        let config = &self.options.config;
        let options = PropagationOptions {
            inject: config.cand_inject_count as u32,
            hilbert_probes: config.cand_hilbert_probes as u32,
            hilbert_window: config.cand_hilbert_window as u32,
        };
        let (hilbert, _) = self.hilbert.as_ref().expect("built above");
        for _ in 0..passes {
            candidates.propagate(&live, hilbert, options);
        }
    }

    /// ∂L/∂sites, `[capacity, 10]`, summed over pixels, and with `removal` the removal delta of
    /// the squared error per site.
    fn gradients(&self, removal: bool) -> (Tensor<2>, Option<Tensor<1>>) {
        if self.options.ssim_weight == 0.0 {
            return squared_error_gradients(
                &self.sites,
                &self.candidates,
                &self.target_tensor,
                removal,
            );
        }
        let removal =
            removal.then(|| removal_deltas(&self.sites, &self.candidates, &self.target_tensor));
        let tracked = self.sites.clone().autodiff().require_grad();
        let size = [self.geometry.height, self.geometry.width];
        let image = render(tracked.clone(), &self.candidates, size);
        let error = image.clone() - self.target_tensor.clone();
        let mut loss = (error.clone() * error).sum();
        let ssim = fused_ssim(
            image.unsqueeze::<4>(),
            self.target_tensor.clone().unsqueeze::<4>(),
            SsimOptions::default(),
        );
        let pixels = (size[0] * size[1]) as f32;
        let weight = self.options.ssim_weight * pixels;
        loss = loss + ssim.neg().add_scalar(1.0).mul_scalar(weight);
        let grads = loss.backward();
        let grads = tracked.grad(&grads).expect("the sites are tracked").inner();
        (grads, removal)
    }

    fn adam_parameters(&self, t: usize) -> AdamStep {
        let config = &self.options.config;
        let scale = self.options.lr_scale;
        let t = t as f32;
        AdamStep {
            lr_position: config.lr_pos_base * scale,
            lr_log_tau: config.lr_tau_base * scale,
            lr_radius: config.lr_radius_base * scale,
            lr_color: config.lr_color_base * scale,
            lr_direction: config.lr_dir_base * scale,
            lr_log_aniso: config.lr_aniso_base * scale,
            beta1: config.beta1,
            beta2: config.beta2,
            eps: config.eps,
            correction1: 1.0 / (1.0 - config.beta1.powf(t)),
            correction2: 1.0 / (1.0 - config.beta2.powf(t)),
            grad_scale: 1.0 / (self.geometry.width * self.geometry.height) as f32,
            max_x: (self.geometry.width - 1) as f32,
            max_y: (self.geometry.height - 1) as f32,
        }
    }

    fn densify(&mut self, splits: usize) {
        let stats = site_statistics(
            &self.sites,
            &self.candidates,
            &self.target_tensor,
            StatisticsKind::Densify,
        )
        .try_to_vec_as::<f32>()
        .expect("statistics are readable");
        let device = self.sites.device();
        let (width, height) = (self.geometry.width, self.geometry.height);
        let mut table = SiteTable::from_tensor(self.sites.clone(), width, height);
        let parents = split_candidates(
            &table.sites,
            &stats,
            self.options.config.densify_score_alpha,
            splits,
        );
        let mut state: Vec<[f32; ADAM_STATE]> = self
            .state
            .clone()
            .try_to_vec_as::<f32>()
            .expect("state is readable")
            .chunks_exact(ADAM_STATE)
            .map(|row| row.try_into().expect("rows"))
            .collect();
        split_sites(
            &mut table.sites,
            &mut state,
            &parents,
            &stats,
            &self.target,
            self.allocated,
        );
        self.sites = table.to_tensor(self.schedule.capacity, &device);
        self.state = Tensor::from_data(
            TensorData::new(state.concat(), [self.schedule.capacity, ADAM_STATE]),
            &device,
        );
        // The reference counts the planned splits even where a parent had too few candidates.
        self.allocated += splits;
        self.active_estimate += splits;
    }

    fn prune(&mut self, removal: Tensor<1>, count: usize) {
        // The reference normalises by the masked pixels, all of them here.
        let norm = 1.0 / (self.geometry.width * self.geometry.height).max(1) as f32;
        self.sites = prune_sites(self.sites.clone(), removal, count, norm);
        self.active_estimate = self.active_estimate.saturating_sub(count);
    }
}

/// The reference's lists for one site per pixel: the pixel's own site, then its 7 clamped
/// neighbours (−1,0), (1,0), (0,−1), (0,1), (−1,−1), (1,−1), (−1,1).
fn per_pixel_candidates(geometry: RenderGeometry, device: &Device) -> Candidates {
    const OFFSETS: [(i64, i64); K] = [
        (0, 0),
        (-1, 0),
        (1, 0),
        (0, -1),
        (0, 1),
        (-1, -1),
        (1, -1),
        (-1, 1),
    ];
    let (w, h) = (geometry.width as i64, geometry.height as i64);
    let mut ids = Vec::with_capacity(geometry.cells() * K);
    for y in 0..h {
        for x in 0..w {
            for (dx, dy) in OFFSETS {
                let (nx, ny) = ((x + dx).clamp(0, w - 1), (y + dy).clamp(0, h - 1));
                ids.push((ny * w + nx) as i32);
            }
        }
    }
    let ids = Tensor::<2, Int>::from_data(TensorData::new(ids, [geometry.cells(), K]), device);
    Candidates::from_ids(ids, geometry)
}

fn validate(target: &TargetImage, options: &FitOptions) -> Result<(), FitError> {
    options.config.validate()?;
    let (width, height) = (target.width, target.height);
    let max_dim = options.config.max_dim.min(65_535);
    if width == 0 || height == 0 {
        return Err(FitError::Image("the image is empty".into()));
    }
    if width.max(height) > max_dim {
        return Err(FitError::Image(format!(
            "{width}×{height} is larger than MAX_DIM = {max_dim}"
        )));
    }
    if !(options.lr_scale.is_finite() && options.lr_scale > 0.0) {
        return Err(FitError::Config("--lr must be a positive number".into()));
    }
    if !(options.ssim_weight.is_finite() && options.ssim_weight >= 0.0) {
        return Err(FitError::Config(
            "--ssim-weight must be a non-negative number".into(),
        ));
    }
    match &options.init {
        Initialisation::GradientWeighted { sites, alpha } => {
            if *sites == 0 {
                return Err(FitError::Config("--sites must be at least 1".into()));
            }
            if !(alpha.is_finite() && *alpha >= 0.0) {
                return Err(FitError::Config(
                    "--init-gradient-alpha must be a non-negative number".into(),
                ));
            }
        }
        Initialisation::PerPixel => {}
        Initialisation::FromSites(table) => {
            if table.sites.len() > i32::MAX as usize {
                return Err(FitError::Config("too many sites in the file".into()));
            }
        }
    }
    Ok(())
}

/// Fits `target` with SAD on `device`: [`Trainer::new`], [`Trainer::warm_up`], then
/// [`Trainer::run`].
pub fn fit(
    target: &TargetImage,
    options: FitOptions,
    device: &Device,
    progress: impl FnMut(&FitProgress),
) -> Result<FitResult, FitError> {
    let trainer = Trainer::new(target.clone(), options, device)?;
    trainer.warm_up();
    Ok(trainer.run(progress))
}
