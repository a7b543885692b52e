//! The bits-per-pixel budget: how many sites a target bpp allows, and the densify and prune
//! rates whose schedule lands on that count (the reference's `solveTargetBpp`).

use super::TrainingConfig;
use super::constants::TRAINER_CONSTANTS;

/// Bits one site costs in the 16-byte packed format that defines the budget.
pub const BITS_PER_SITE: f64 = TRAINER_CONSTANTS.bits_per_site;

/// Most sites one densify or prune event may touch.
pub const MAX_EVENT_SITES: usize = TRAINER_CONSTANTS.max_event_sites;

/// Sites allowed by `bpp` on a `width × height` image: max(1, round(bpp·W·H / 128)).
pub fn target_sites(bpp: f64, width: usize, height: usize) -> usize {
    let pixels = (width * height) as f32;
    (bpp as f32 * pixels / BITS_PER_SITE as f32)
        .round()
        .max(1.0) as usize
}

/// Bits per pixel of `sites` sites on a `width × height` image.
pub fn bits_per_pixel(sites: usize, width: usize, height: usize) -> f64 {
    sites as f64 * BITS_PER_SITE / (width * height) as f64
}

/// The densify and prune events of a run, as rates per event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    /// Iterations.
    pub iters: usize,
    /// Sites the run starts with.
    pub initial_sites: usize,
    /// Site-buffer capacity.
    pub capacity: usize,
    /// First densify iteration.
    pub densify_start: usize,
    /// Last densify iteration (inclusive).
    pub densify_end: usize,
    /// Iterations between densify events.
    pub densify_freq: usize,
    /// Share of the active sites split per densify event.
    pub densify_rate: f32,
    /// First prune iteration.
    pub prune_start: usize,
    /// Prune events happen before this iteration.
    pub prune_end: usize,
    /// Iterations between prune events.
    pub prune_freq: usize,
    /// Share of the active sites pruned per prune event.
    pub prune_rate: f32,
}

impl Schedule {
    /// The schedule `config` describes for a run on a `width`×`height` image that starts with
    /// `initial_sites` sites. The capacity is `default_max_sites`, or, where that is 0, as the
    /// reference sizes it: min(2·W·H, max(8·initial, 8192)); never below `initial_sites`.
    pub fn new(config: &TrainingConfig, initial_sites: usize, width: usize, height: usize) -> Self {
        let max_sites = if config.default_max_sites > 0 {
            config.default_max_sites
        } else {
            (2 * width * height).min((8 * initial_sites).max(8192))
        };
        Self {
            iters: config.default_iters,
            initial_sites,
            capacity: initial_sites.max(max_sites),
            densify_start: config.densify_start,
            densify_end: config.densify_end,
            densify_freq: config.densify_freq.max(1),
            densify_rate: config.densify_percentile,
            prune_start: config.effective_prune_start(),
            prune_end: config.effective_prune_end(config.default_iters),
            prune_freq: config.prune_freq.max(1),
            prune_rate: config.prune_percentile,
        }
    }

    /// Sites to split at iteration `iteration`, given `allocated` slots in use and the running
    /// estimate `active` of live sites (0 if it is no densify iteration).
    pub fn splits_at(&self, iteration: usize, allocated: usize, active: usize) -> usize {
        let due = self.densify_rate > 0.0
            && (self.densify_start..=self.densify_end).contains(&iteration)
            && iteration.is_multiple_of(self.densify_freq)
            && allocated < self.capacity;
        if !due {
            return 0;
        }
        let desired = (active as f32 * self.densify_rate) as usize;
        desired.min(self.capacity - allocated).min(MAX_EVENT_SITES)
    }

    /// Sites to prune at iteration `iteration` given the running estimate `active` of live
    /// sites (0 if it is no prune iteration).
    pub fn prunes_at(&self, iteration: usize, active: usize) -> usize {
        if !self.is_prune_iteration(iteration) {
            return 0;
        }
        ((active as f32 * self.prune_rate) as usize).min(MAX_EVENT_SITES)
    }

    /// Whether iteration `iteration` prunes (even if it would prune 0 sites).
    pub fn is_prune_iteration(&self, iteration: usize) -> bool {
        self.prune_rate > 0.0
            && iteration >= self.prune_start
            && iteration < self.prune_end
            && iteration.is_multiple_of(self.prune_freq)
    }

    /// The live sites at the end of the run: the schedule replayed on counts.
    ///
    /// Only event iterations are visited, and the replay stops once nothing can change (no
    /// densify event ahead and pruning rounds to zero sites), so the cost depends on the number
    /// of events, not on the iteration count: the budget solver replays the schedule about 120
    /// times.
    pub fn final_sites(&self) -> usize {
        self.replay_events(self.initial_sites).active
    }

    /// The slots a run that starts with `initial_active` live sites (of `initial_sites`) ever
    /// fills: densify writes its children to slots `allocated..`, and no slot is reused, so a
    /// site buffer of this many rows holds the whole run. Kernels that visit every slot (Adam,
    /// tau diffusion, the record pack) then skip the configured capacity's never-used tail.
    pub fn peak_slots(&self, initial_active: usize) -> usize {
        self.replay_events(initial_active).allocated
    }

    /// The counts after the last event that changes them.
    fn replay_events(&self, initial_active: usize) -> EventCounts {
        let mut allocated = self.initial_sites;
        let mut active = initial_active;
        let first = |start: usize, freq: usize| start.div_ceil(freq.max(1)) * freq.max(1);
        let mut next_densify = if self.densify_rate > 0.0 {
            first(self.densify_start, self.densify_freq)
        } else {
            usize::MAX
        };
        let mut next_prune = if self.prune_rate > 0.0 {
            first(self.prune_start, self.prune_freq)
        } else {
            usize::MAX
        };
        loop {
            if next_densify > self.densify_end {
                next_densify = usize::MAX;
            }
            if next_prune >= self.prune_end {
                next_prune = usize::MAX;
            }
            let iteration = next_densify.min(next_prune);
            if iteration >= self.iters {
                return EventCounts { active, allocated };
            }
            let split = self.splits_at(iteration, allocated, active);
            allocated += split;
            active += split;
            active -= self.prunes_at(iteration, active).min(active);
            if iteration == next_densify {
                next_densify = next_densify.saturating_add(self.densify_freq.max(1));
            }
            if iteration == next_prune {
                next_prune = next_prune.saturating_add(self.prune_freq.max(1));
            }
            let prunes_nothing = (active as f32 * self.prune_rate) as usize == 0;
            if (next_densify == usize::MAX || allocated >= self.capacity) && prunes_nothing {
                return EventCounts { active, allocated };
            }
        }
    }

    /// The counts at the end, by replaying every iteration (the tests' oracle).
    #[cfg(test)]
    fn replay_every_iteration(&self) -> EventCounts {
        let mut allocated = self.initial_sites;
        let mut active = self.initial_sites;
        for iteration in 0..self.iters {
            let split = self.splits_at(iteration, allocated, active);
            allocated += split;
            active += split;
            active -= self.prunes_at(iteration, active).min(active);
        }
        EventCounts { active, allocated }
    }
}

/// Live sites and filled slots at some point of a schedule's replay.
#[derive(Clone, Copy, Debug, PartialEq)]
struct EventCounts {
    active: usize,
    allocated: usize,
}

/// What the budget solver found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BudgetSolution {
    /// Sites the budget allows.
    pub target_sites: usize,
    /// Sites the solved schedule ends with.
    pub final_sites: usize,
    /// The common multiplier of the base densify and prune rates.
    pub scale: f32,
    /// Solved densify rate.
    pub densify_rate: f32,
    /// Solved prune rate.
    pub prune_rate: f32,
}

impl BudgetSolution {
    /// Whether the solved schedule ends at the budget's site count, within 1 % (at least 2
    /// sites): a schedule too short to prune, or a capacity below the target, does not.
    pub fn reaches_target(&self) -> bool {
        let tolerance = (self.target_sites / 100).max(2);
        self.final_sites.abs_diff(self.target_sites) <= tolerance
    }
}

/// Finds the multiplier s of the base rates (densify `min(0.95, base_d·s)`, prune
/// `min(0.95, base_p·s)`) whose schedule ends closest to the sites `bpp` allows: 81 samples of
/// s ∈ [0, min(0.95 / max base, 50)], then 20 rounds of local search, as the reference does.
pub fn solve_target_bpp(
    bpp: f64,
    width: usize,
    height: usize,
    schedule: &Schedule,
) -> BudgetSolution {
    const MAX_RATE: f32 = TRAINER_CONSTANTS.budget_max_rate;
    const SAMPLES: usize = TRAINER_CONSTANTS.budget_samples;
    let target = target_sites(bpp, width, height);
    let (base_densify, base_prune) = (schedule.densify_rate, schedule.prune_rate);
    let rates = |scale: f32| {
        (
            (base_densify * scale).min(MAX_RATE),
            (base_prune * scale).min(MAX_RATE),
        )
    };
    let evaluate = |scale: f32| {
        let (densify_rate, prune_rate) = rates(scale);
        Schedule {
            densify_rate,
            prune_rate,
            ..*schedule
        }
        .final_sites()
    };
    let max_base = base_densify.max(base_prune);
    if max_base <= 0.0 {
        return BudgetSolution {
            target_sites: target,
            final_sites: evaluate(0.0),
            scale: 0.0,
            densify_rate: 0.0,
            prune_rate: 0.0,
        };
    }
    let max_scale = (MAX_RATE / max_base).min(50.0);
    let mut best = (0.0f32, evaluate(0.0));
    let error = |sites: usize| sites.abs_diff(target);
    let consider = |scale: f32, best: &mut (f32, usize)| {
        let sites = evaluate(scale);
        let better = error(sites) < error(best.1);
        if better {
            *best = (scale, sites);
        }
        better
    };
    for i in 0..=SAMPLES {
        consider(max_scale * i as f32 / SAMPLES as f32, &mut best);
    }
    let mut step = max_scale / SAMPLES as f32;
    for _ in 0..TRAINER_CONSTANTS.budget_refinements {
        let (lower, upper) = (best.0 - step, best.0 + step);
        let mut improved = false;
        if lower >= 0.0 {
            improved |= consider(lower, &mut best);
        }
        if upper <= max_scale {
            improved |= consider(upper, &mut best);
        }
        if !improved {
            step *= 0.5;
        }
    }
    let (densify_rate, prune_rate) = rates(best.0);
    BudgetSolution {
        target_sites: target,
        final_sites: best.1,
        scale: best.0,
        densify_rate,
        prune_rate,
    }
}

#[cfg(test)]
mod tests;
