// The training schedule of the trainer page: when to densify and prune and by how much, and the
// bits-per-pixel solver that picks the rates. A line-for-line port of the library's
// `src/sad/fit/budget.rs` (`Schedule`, `solve_target_bpp`), in f32 where the library computes in
// f32; its constants come from the manifest's `training.constants` table, which the Rust trainer
// reads too.

const f = Math.fround;

/** Sites a budget of `bpp` bits per pixel allows on a width × height image (at least 1). */
export function targetSites(bpp, width, height, constants) {
  return Math.max(1, Math.round(f(f(f(bpp) * f(width * height)) / f(constants.bits_per_site))));
}

/** Bits per pixel of `sites` sites. */
export function bitsPerPixel(sites, width, height, constants) {
  return (sites * constants.bits_per_site) / (width * height);
}

/** The densify and prune schedule of one fit (the library's `Schedule`). */
export class Schedule {
  /** The schedule of `config` (the TrainingConfig keys) for `initialSites` sites. */
  static of(config, initialSites, width, height, constants) {
    const maxSites = config.DEFAULT_MAX_SITES > 0
      ? config.DEFAULT_MAX_SITES
      : Math.min(2 * width * height, Math.max(8 * initialSites, 8192));
    const pruneStart = !config.PRUNE_DURING_DENSIFY && config.PRUNE_START < config.DENSIFY_END
      ? config.DENSIFY_END : config.PRUNE_START;
    const pruneEnd = config.PRUNE_END > 0 ? config.PRUNE_END : Math.max(0, config.DEFAULT_ITERS - 1);
    return new Schedule({
      iters: config.DEFAULT_ITERS,
      initialSites,
      capacity: Math.max(initialSites, maxSites),
      densifyStart: config.DENSIFY_START,
      densifyEnd: config.DENSIFY_END,
      densifyFreq: Math.max(1, config.DENSIFY_FREQ),
      densifyRate: f(config.DENSIFY_PERCENTILE),
      pruneStart,
      pruneEnd,
      pruneFreq: Math.max(1, config.PRUNE_FREQ),
      pruneRate: f(config.PRUNE_PERCENTILE),
    }, constants.max_event_sites);
  }

  constructor(fields, maxEventSites) {
    Object.assign(this, fields);
    this.maxEventSites = maxEventSites;
  }

  with(fields) {
    return new Schedule({ ...this, ...fields }, this.maxEventSites);
  }

  /** Sites to add by splitting at `iteration`. */
  splitsAt(iteration, allocated, active) {
    const due = this.densifyRate > 0 && iteration >= this.densifyStart && iteration <= this.densifyEnd
      && iteration % this.densifyFreq === 0 && allocated < this.capacity;
    if (!due) return 0;
    const desired = Math.trunc(f(f(active) * this.densifyRate));
    return Math.min(desired, this.capacity - allocated, this.maxEventSites);
  }

  /** Sites to remove at `iteration`. */
  prunesAt(iteration, active) {
    if (!this.isPruneIteration(iteration)) return 0;
    return Math.min(Math.trunc(f(f(active) * this.pruneRate)), this.maxEventSites);
  }

  isPruneIteration(iteration) {
    return this.pruneRate > 0 && iteration >= this.pruneStart && iteration < this.pruneEnd
      && iteration % this.pruneFreq === 0;
  }

  /** Live sites at the end. */
  finalSites() {
    return this.replayEvents(this.initialSites).active;
  }

  /** Rows the site buffer needs: the most sites ever allocated. */
  peakSlots(initialActive) {
    return this.replayEvents(initialActive).allocated;
  }

  replayEvents(initialActive) {
    let allocated = this.initialSites;
    let active = initialActive;
    const never = Number.MAX_SAFE_INTEGER;
    const first = (start, freq) => Math.ceil(start / freq) * freq;
    let nextDensify = this.densifyRate > 0 ? first(this.densifyStart, this.densifyFreq) : never;
    let nextPrune = this.pruneRate > 0 ? first(this.pruneStart, this.pruneFreq) : never;
    for (;;) {
      if (nextDensify > this.densifyEnd) nextDensify = never;
      if (nextPrune >= this.pruneEnd) nextPrune = never;
      const iteration = Math.min(nextDensify, nextPrune);
      if (iteration >= this.iters) return { active, allocated };
      const split = this.splitsAt(iteration, allocated, active);
      allocated += split;
      active += split;
      active -= Math.min(this.prunesAt(iteration, active), active);
      if (iteration === nextDensify) nextDensify += this.densifyFreq;
      if (iteration === nextPrune) nextPrune += this.pruneFreq;
      const prunesNothing = Math.trunc(f(f(active) * this.pruneRate)) === 0;
      if ((nextDensify === never || allocated >= this.capacity) && prunesNothing) {
        return { active, allocated };
      }
    }
  }
}

/**
 * The densify and prune rates whose schedule ends nearest `bpp`'s site count: the base rates
 * scaled by one factor, sampled coarsely and then refined (the library's `solve_target_bpp`).
 */
export function solveTargetBpp(bpp, width, height, schedule, constants) {
  const maxRate = f(constants.budget_max_rate);
  const samples = constants.budget_samples;
  const target = targetSites(bpp, width, height, constants);
  const baseDensify = schedule.densifyRate, basePrune = schedule.pruneRate;
  const rates = (scale) => [Math.min(f(baseDensify * scale), maxRate), Math.min(f(basePrune * scale), maxRate)];
  const evaluate = (scale) => {
    const [densifyRate, pruneRate] = rates(scale);
    return schedule.with({ densifyRate, pruneRate }).finalSites();
  };
  const maxBase = Math.max(baseDensify, basePrune);
  if (maxBase <= 0) {
    return { targetSites: target, finalSites: evaluate(0), scale: 0, densifyRate: 0, pruneRate: 0 };
  }
  const maxScale = Math.min(f(maxRate / maxBase), 50);
  let best = [0, evaluate(0)];
  const error = (sites) => Math.abs(sites - target);
  const consider = (scale) => {
    const sites = evaluate(scale);
    const better = error(sites) < error(best[1]);
    if (better) best = [scale, sites];
    return better;
  };
  for (let i = 0; i <= samples; i++) consider(f(f(maxScale * i) / samples));
  let step = f(maxScale / samples);
  for (let round = 0; round < constants.budget_refinements; round++) {
    const lower = f(best[0] - step), upper = f(best[0] + step);
    let improved = false;
    if (lower >= 0) improved = consider(lower) || improved;
    if (upper <= maxScale) improved = consider(upper) || improved;
    if (!improved) step = f(step * 0.5);
  }
  const [densifyRate, pruneRate] = rates(best[0]);
  return { targetSites: target, finalSites: best[1], scale: best[0], densifyRate, pruneRate };
}
