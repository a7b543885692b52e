// The trainer page's fit: the library's training loop (`src/sad/fit/trainer/mod.rs`, `step()`,
// and its phases in `phases.rs`) on WebGPU, step for step, with the library's own kernels
// compiled to WGSL (kernels.json) and the schedule table the Rust trainer reads (the manifest's
// `training`). Host-side steps (initialisation, the split of densify, the Hilbert order) are in
// target.js and sites.js; the densify and prune schedule in schedule.js.

import { SITE_PARAMS, hilbertOrder } from './sites.js';
import { Schedule, bitsPerPixel, solveTargetBpp } from './schedule.js';
import { ADAM_STATE, DENSIFY_STATS, fromSites, gradientWeighted, splitCandidates, splitSites } from './target.js';
import {
  K, LINE_CUBE, PACKED_WORDS, PACK_CUBE, RECORD_WORDS, TILE, grid1d, grid2d, jumpForPass, renderView, seedLists,
  uploadSites,
} from './gpu.js';

const f = Math.fround;
/** Cube sizes of the training kernels beyond the viewer's. */
const CELL_TILE = 16;
const ADAM_CUBE = 64;
const RADIX_BINS = 256;
const SELECT_STATE = 4;
/** The log τ column. */
const LOG_TAU = 2;
const IDENTITY = { scale: 1, offset_x: 0, offset_y: 0, log_tau_shift: 0 };

/** Every kernel a fit launches (the page checks the adapter's limits against them). */
export const TRAINING_KERNELS = ['init_candidates', 'clear_seed', 'seed', 'pack_full', 'pack_ranking', 'pack_gradients',
  'pack_densify', 'pack_removal', 'candidate_pass', 'backward', 'statistics_densify', 'statistics_removal',
  'tau_find', 'tau_list', 'adam', 'prune_start', 'prune_histogram', 'prune_choose', 'prune_mark', 'render', 'rgba',
  // The saved file's render (`filePsnr`), as `sad render` builds its lists.
  'exact_ranking', 'flood', 'flood_mirror'];

/** The config keys that are counts (usize in the library's `TrainingConfig`). */
const WHOLE_KEYS = ['DEFAULT_SITES', 'DEFAULT_MAX_SITES', 'DEFAULT_ITERS', 'PRUNE_START', 'PRUNE_FREQ',
  'PRUNE_END', 'DENSIFY_START', 'DENSIFY_FREQ', 'DENSIFY_END', 'CAND_UPDATE_FREQ', 'CAND_UPDATE_PASSES',
  'CAND_RADIUS_PROBES', 'CAND_DOWNSCALE', 'CAND_INJECT_COUNT', 'CAND_HILBERT_WINDOW', 'CAND_HILBERT_PROBES', 'MAX_DIM'];

/**
 * The configuration of a fit: `config` holds `sad fit`'s config keys (the manifest's defaults
 * with the user's edits), checked as `TrainingConfig::validate` checks them.
 */
export function checkConfig(config, defaults) {
  for (const key of Object.keys(config)) {
    if (!(key in defaults)) throw new Error(`unknown config key ${key}`);
    if (typeof config[key] !== typeof defaults[key]) throw new Error(`${key} must be a ${typeof defaults[key]}`);
  }
  const c = { ...defaults, ...config };
  const bad = (key, why) => { throw new Error(`${key} ${why}`); };
  const unit = (v) => v >= 0 && v < 1;
  for (const key of WHOLE_KEYS) if (!Number.isInteger(c[key]) || c[key] < 0) bad(key, 'must be a whole number');
  if (c.DEFAULT_SITES === 0) bad('DEFAULT_SITES', 'must be at least 1');
  if (c.DEFAULT_ITERS === 0) bad('DEFAULT_ITERS', 'must be at least 1');
  if (!Number.isFinite(c.DEFAULT_TARGET_BPP)) bad('DEFAULT_TARGET_BPP', 'must be a finite number');
  if (c.DEFAULT_TARGET_BPP > 256) bad('DEFAULT_TARGET_BPP', 'must be at most 256 (2 sites per pixel at 128 bits per site)');
  for (const key of ['PRUNE_PERCENTILE', 'DENSIFY_PERCENTILE', 'BETA1', 'BETA2']) if (!unit(c[key])) bad(key, 'must be in [0, 1)');
  for (const key of ['PRUNE_FREQ', 'DENSIFY_FREQ', 'CAND_DOWNSCALE', 'MAX_DIM']) if (c[key] === 0) bad(key, 'must be at least 1');
  if (c.CAND_RADIUS_PROBES !== 0) bad('CAND_RADIUS_PROBES', 'must be 0: random radius probes are not implemented');
  for (const key of ['LR_POS_BASE', 'LR_TAU_BASE', 'LR_RADIUS_BASE', 'LR_COLOR_BASE', 'LR_DIR_BASE', 'LR_ANISO_BASE',
    'INIT_RADIUS', 'EPS', 'CAND_RADIUS_SCALE']) {
    if (!(Number.isFinite(c[key]) && c[key] > 0)) bad(key, 'must be a positive number');
  }
  if (!(Number.isFinite(c.DENSIFY_SCORE_ALPHA) && c.DENSIFY_SCORE_ALPHA >= 0)) bad('DENSIFY_SCORE_ALPHA', 'must be a non-negative number');
  if (!Number.isFinite(c.INIT_LOG_TAU)) bad('INIT_LOG_TAU', 'must be a finite number');
  return c;
}

/** A fit in progress on the GPU (the library's `Trainer`). */
export class Trainer {
  /**
   * Places the initial sites and candidate lists. `options`: `config` (checked), `constants`
   * (the manifest's table), `seed`, `logEvery`, `init` (a parsed sites file or null).
   */
  constructor(gpu, target, options) {
    const { config, constants } = options;
    this.gpu = gpu;
    this.target = target;
    this.config = config;
    this.constants = constants;
    this.logEvery = Math.max(1, options.logEvery ?? constants.default_log_every);
    const { width, height } = target;
    if (Math.max(width, height) > config.MAX_DIM) {
      throw new Error(`the photo is ${width}×${height}, over MAX_DIM ${config.MAX_DIM}: sad fit scales such a photo down, the page does not; scale it first or raise MAX_DIM`);
    }
    const shape = { logTau: f(config.INIT_LOG_TAU), radius: f(config.INIT_RADIUS) };
    const seed = options.seed ?? 0;
    const initial = options.init
      ? fromSites(options.init, target)
      : gradientWeighted(target, config.DEFAULT_SITES, shape, seed, constants);
    const count = initial.length / SITE_PARAMS;
    let active = 0;
    for (let i = 0; i < count; i++) if (initial[i * SITE_PARAMS] >= 0) active++;
    if (active === 0) throw new Error('the initialisation placed no site (is the photo flat, or the mask empty?)');
    // The reference counts the gradient-weighted placeholders as live from the start.
    this.activeEstimate = options.init ? active : count;
    let schedule = Schedule.of(config, count, width, height, constants);
    this.budget = null;
    if (config.DEFAULT_TARGET_BPP > 0) {
      this.budget = solveTargetBpp(config.DEFAULT_TARGET_BPP, width, height, schedule, constants);
      schedule = schedule.with({ densifyRate: this.budget.densifyRate, pruneRate: this.budget.pruneRate });
    }
    this.schedule = schedule;
    this.geometry = {
      width, height, downscale: config.CAND_DOWNSCALE,
      candW: Math.max(1, Math.ceil(width / config.CAND_DOWNSCALE)),
      candH: Math.max(1, Math.ceil(height / config.CAND_DOWNSCALE)),
      invScaleSq: f(1 / f(f(Math.max(width, height)) * f(Math.max(width, height)))),
    };
    this.slots = schedule.peakSlots(this.activeEstimate);
    this.allocated = count;
    this.iteration = 0;
    this.passes = 0;
    this.hilbertFor = -1;
    this.pending = null;
    const cells = this.geometry.candW * this.geometry.candH;
    const limit = gpu.device.limits.maxComputeWorkgroupsPerDimension;
    if (Math.ceil(this.slots / PACK_CUBE) > limit || Math.ceil(width / TILE) > limit || Math.ceil(height / TILE) > limit) {
      throw new Error(`${this.slots} sites on ${width}×${height} pixels is more than this GPU launches at once (${limit} workgroups a dimension)`);
    }
    const sites = new Float32Array(this.slots * SITE_PARAMS);
    sites.set(initial);
    for (let i = count; i < this.slots; i++) sites.set([-1, -1, 0, 0, 0, 0, 0, 1, 0, 0], i * SITE_PARAMS);
    const n = this.slots;
    const t = (shape, element, init) => gpu.tensor(shape, element, init);
    this.t = {
      sites: t([n, SITE_PARAMS], 'f32', sites),
      sitesNext: t([n, SITE_PARAMS], 'f32'),
      state: t([n, ADAM_STATE], 'f32', new Float32Array(n * ADAM_STATE)),
      stateNext: t([n, ADAM_STATE], 'f32'),
      grads: t([n, SITE_PARAMS], 'f32'),
      // WebGPU binds no buffer twice as writable storage in one launch: the first diffusion
      // pass reads the log τ column from this copy of the gradients, and `kept` (read only by
      // the replayed step, which the page does not record) is bound to a word of its own.
      gradsCopy: t([n, SITE_PARAMS], 'f32'),
      kept: t([1], 'i32'),
      records: t([n, RECORD_WORDS], 'u32'),
      ranking: t([n, PACKED_WORDS], 'u32'),
      zeroed: t([1], 'f32'),
      lists: [t([cells, K], 'i32'), t([cells, K], 'i32'), t([cells, K], 'i32')],
      order: t([n], 'i32'),
      rank: t([n], 'i32'),
      tauA: t([n], 'f32'),
      tauB: t([n], 'f32'),
      neighbours: t([K + 1, n], 'i32'),
      clock: t([1], 'f32'),
      tick: t([1], 'u32'),
      stats: t([n, DENSIFY_STATS], 'f32'),
      removal: t([n, 1], 'f32'),
      selectState: t([SELECT_STATE], 'u32'),
      histogram: t([RADIX_BINS], 'u32'),
      targetImage: t([3, height, width], 'f32', target.kernelPlanar()),
      image: t([3, height, width], 'f32'),
      rgba: t([width * height], 'u32'),
    };
    // Lists in use, the next ones while they wait for the tau diffusion, and a spare.
    this.current = 0;
    this.seedLists(count, (constants.candidate_seed ^ seed) >>> 0);
  }

  /** Random candidate lists over the first `count` sites, each site in its own cell first. */
  seedLists(count, seed) {
    const { gpu, t, geometry: g } = this;
    gpu.submit((e) => {
      gpu.launch(e, 'init_candidates', { candidates: t.lists[0] },
        { cand_w: g.candW, cand_h: g.candH, site_count: count, seed }, grid2d(g.candW, g.candH, CELL_TILE));
      this.pack(e, 'pack_full', count, t.zeroed);
      seedLists(gpu, e, t.records, t.lists[0], { ...this.sizes(), site_count: count }, count);
    });
  }

  /** Packs the first `count` sites into full records (`pack_full`) or zeroes `zeroed` too. */
  pack(e, kernel, count, zeroed) {
    const { gpu, t } = this;
    const packed = kernel === 'pack_ranking' ? t.ranking : t.records;
    gpu.launch(e, kernel, { sites: t.sites, packed, zeroed }, { site_count: count, ...IDENTITY }, grid1d(count, PACK_CUBE));
  }

  isDone() {
    return this.iteration >= this.config.DEFAULT_ITERS;
  }

  sizes() {
    const g = this.geometry;
    return {
      width: g.width, height: g.height, cand_w: g.candW, cand_h: g.candH, downscale: g.downscale,
      inv_scale_sq: g.invScaleSq,
    };
  }

  /** Reads `count` elements of a tensor back (`Type`: Float32Array, Int32Array, Uint32Array). */
  async read(tensor, Type, count = tensor.elements) {
    return this.gpu.read(tensor.buffer, Type, count);
  }

  /** The Hilbert order of the first `allocated` sites, when `allocated` changed since. */
  async updateHilbert() {
    if (this.hilbertFor === this.allocated) return;
    const sites = await this.read(this.t.sites, Float32Array, this.allocated * SITE_PARAMS);
    const { order, rank } = hilbertOrder({ count: this.allocated, sites }, { scale: 1, offsetX: 0, offsetY: 0 },
      this.geometry.width, this.geometry.height);
    this.gpu.device.queue.writeBuffer(this.t.order.buffer, 0, order);
    this.gpu.device.queue.writeBuffer(this.t.rank.buffer, 0, rank);
    this.hilbertFor = this.allocated;
  }

  /** `passes` propagation passes from the lists in use into a free buffer; returns its index. */
  propagate(e, passes) {
    const { gpu, t, geometry: g, config } = this;
    this.pack(e, 'pack_ranking', this.allocated, t.zeroed);
    let input = this.current;
    for (let p = 0; p < passes; p++) {
      const output = [0, 1, 2].find((i) => i !== input && i !== this.current);
      gpu.launch(e, 'candidate_pass',
        { packed: t.ranking, input: t.lists[input], output: t.lists[output], hilbert_order: t.order, hilbert_rank: t.rank },
        {
          width: g.width, height: g.height, cand_w: g.candW, cand_h: g.candH, downscale: g.downscale,
          site_count: this.allocated, jump: jumpForPass(this.passes, g.candW, g.candH), pass: this.passes,
          inject: config.CAND_INJECT_COUNT, hilbert_probes: config.CAND_HILBERT_PROBES,
          hilbert_window: config.CAND_HILBERT_WINDOW, inv_scale_sq: g.invScaleSq,
        }, grid2d(g.candW, g.candH, CELL_TILE));
      this.passes++;
      input = output;
    }
    return input;
  }

  /** Adam's step sizes for step `step` (the library's `adam_parameters`). */
  adamParameters(step) {
    const c = this.config;
    const g = this.geometry;
    return {
      lr_position: f(c.LR_POS_BASE), lr_log_tau: f(c.LR_TAU_BASE), lr_radius: f(c.LR_RADIUS_BASE),
      lr_color: f(c.LR_COLOR_BASE), lr_direction: f(c.LR_DIR_BASE), lr_log_aniso: f(c.LR_ANISO_BASE),
      beta1: f(c.BETA1), beta2: f(c.BETA2), eps: f(c.EPS),
      correction1: f(1 / f(1 - f(Math.pow(f(c.BETA1), step)))),
      correction2: f(1 / f(1 - f(Math.pow(f(c.BETA2), step)))),
      grad_scale: f(1 / f(g.width * g.height)),
      max_x: g.width - 1, max_y: g.height - 1,
    };
  }

  /** The tau diffusion weight of iteration `it`, ramping up from a tenth. */
  diffusionLambda(it) {
    const progress = f(f(it) / f(Math.max(1, this.config.DEFAULT_ITERS)));
    return f(f(this.constants.tau_diffusion_lambda) * f(0.1 + f(0.9 * progress)));
  }

  /** One iteration, in the library's order. Resolves to the PSNR on measuring iterations. */
  async step() {
    const it = this.iteration;
    const { config, schedule, gpu, t } = this;
    const update = config.CAND_UPDATE_FREQ > 0 && it % config.CAND_UPDATE_FREQ === 0;
    const splits = schedule.splitsAt(it, this.allocated, this.activeEstimate);
    if (update) {
      await this.updateHilbert();
      gpu.submit((e) => {
        const next = this.propagate(e, Math.max(1, config.CAND_UPDATE_PASSES));
        // A densify iteration splits with the new lists; otherwise the gradient still uses the
        // old ones and the new ones arrive for the tau diffusion.
        if (splits > 0) this.current = next;
        else this.pending = next;
      });
    }
    if (splits > 0) await this.densify(splits);
    const prune = schedule.isPruneIteration(it);
    const pruneCount = prune ? schedule.prunesAt(it, this.activeEstimate) : 0;
    gpu.submit((e) => {
      this.gradients(e, pruneCount > 0);
      if (this.pending !== null) {
        this.current = this.pending;
        this.pending = null;
      }
      this.diffuseAndStep(e, this.diffusionLambda(it), this.adamParameters(it + 1));
      if (pruneCount > 0) this.prune(e, pruneCount);
    });
    if (pruneCount > 0) this.activeEstimate = Math.max(0, this.activeEstimate - pruneCount);
    this.iteration++;
    const last = this.iteration === config.DEFAULT_ITERS;
    if (it % this.logEvery === 0 || last) return this.psnr();
    return null;
  }

  /** ∂L/∂sites of the summed squared error into `grads`, and the removal deltas if asked. */
  gradients(e, removal) {
    const { gpu, t } = this;
    const n = this.slots;
    const lists = t.lists[this.current];
    const sizes = { ...this.sizes(), site_count: n };
    const tiles = grid2d(this.geometry.width, this.geometry.height, TILE);
    this.pack(e, 'pack_gradients', n, t.grads);
    gpu.launch(e, 'backward', { records: t.records, candidates: lists, grad_image: t.targetImage, grads: t.grads }, sizes, tiles);
    if (removal) {
      // The library's removal_deltas: the statistics pass (the CUDA backward adds it in place).
      this.pack(e, 'pack_removal', n, t.removal);
      gpu.launch(e, 'statistics_removal', { records: t.records, candidates: lists, target: t.targetImage, stats: t.removal }, sizes, tiles);
    }
  }

  /** The tau diffusion's Jacobi passes and the Adam step with the last pass inside. */
  diffuseAndStep(e, lambda, step) {
    const { gpu, t, geometry: g } = this;
    const n = this.slots;
    const lists = t.lists[this.current];
    const passes = this.constants.tau_diffusion_passes;
    const neighbours = (stride, offset, weight) => ({
      input_stride: stride, input_offset: offset, cand_w: g.candW, cand_h: g.candH,
      inv_downscale: f(1 / g.downscale), lambda: weight,
    });
    const line = grid1d(n, LINE_CUBE);
    const common = { sites: t.sites, candidates: lists, kept: t.kept, list: t.neighbours, raw: t.grads, clock: t.clock, tick: t.tick };
    const raw = { raw_stride: SITE_PARAMS, raw_offset: LOG_TAU, site_count: n };
    e.copyBufferToBuffer(t.grads.buffer, 0, t.gradsCopy.buffer, 0, t.grads.buffer.size);
    let tau = t.gradsCopy, stride = SITE_PARAMS, offset = LOG_TAU, adamLambda = lambda;
    if (passes === 0) {
      adamLambda = 0;
    } else {
      let [into, spare] = [t.tauA, t.tauB];
      for (let pass = 0; pass < passes - 1; pass++) {
        gpu.launch(e, pass === 0 ? 'tau_find' : 'tau_list', { ...common, input: tau, output: into },
          { ...raw, ...neighbours(stride, offset, lambda) }, line);
        tau = into;
        [into, spare] = [spare, into];
        stride = 1;
        offset = 0;
      }
      if (passes === 1) {
        // One pass finds the neighbours on its own; Adam then reads its result as it is.
        gpu.launch(e, 'tau_find', { ...common, input: tau, output: into }, { ...raw, ...neighbours(stride, offset, lambda) }, line);
        tau = into;
        stride = 1;
        offset = 0;
        adamLambda = 0;
      }
    }
    gpu.launch(e, 'adam', {
      sites: t.sites, grads: t.grads, tau, list: t.neighbours, state: t.state,
      out_sites: t.sitesNext, out_state: t.stateNext, clock: t.clock, tick: t.tick,
    }, { ...step, ...neighbours(stride, offset, adamLambda), site_count: n }, grid1d(n, ADAM_CUBE));
    [t.sites, t.sitesNext] = [t.sitesNext, t.sites];
    [t.state, t.stateNext] = [t.stateNext, t.state];
  }

  /** Marks the `count` sites whose removal costs least inactive: a radix select on the GPU. */
  prune(e, count) {
    const { gpu, t } = this;
    const n = this.slots;
    const norm = f(1 / Math.max(1, this.target.countedPixels()));
    const one = [1, 1, 1];
    const select = { state: t.selectState, histogram: t.histogram };
    gpu.launch(e, 'prune_start', select, { count }, one);
    const idBits = 32 - Math.clz32(n - 1);
    const digits = [24, 16, 8, 0].map((shift) => [0, shift]);
    for (let byte = Math.ceil(idBits / 8) - 1; byte >= 0; byte--) digits.push([1, 8 * byte]);
    const above = (bits) => (bits >= 32 ? 0 : (0xffffffff << bits) >>> 0);
    for (const [word, shift] of digits) {
      const [keyMask, idMask] = word === 0 ? [above(shift + 8), 0] : [0xffffffff, above(shift + 8)];
      gpu.launch(e, 'prune_histogram', { sites: t.sites, removal: t.removal, ...select },
        { norm, site_count: n, word, shift, key_mask: keyMask, id_mask: idMask }, grid1d(n, LINE_CUBE));
      gpu.launch(e, 'prune_choose', select, { word, shift }, one);
    }
    gpu.launch(e, 'prune_mark', { sites: t.sites, removal: t.removal, state: t.selectState, out_sites: t.sitesNext },
      { norm, site_count: n }, grid1d(n, LINE_CUBE));
    [t.sites, t.sitesNext] = [t.sitesNext, t.sites];
  }

  /** Splits the `splits` sites that explain the most error (statistics on the GPU, the split
   * on the host, as the library does). */
  async densify(splits) {
    const { gpu, t } = this;
    const n = this.slots;
    gpu.submit((e) => {
      this.pack(e, 'pack_densify', n, t.stats);
      gpu.launch(e, 'statistics_densify', { records: t.records, candidates: t.lists[this.current], target: t.targetImage, stats: t.stats },
        { ...this.sizes(), site_count: n }, grid2d(this.geometry.width, this.geometry.height, TILE));
    });
    const [stats, sites, state] = await Promise.all([
      this.read(t.stats, Float32Array), this.read(t.sites, Float32Array), this.read(t.state, Float32Array)]);
    const parents = splitCandidates(sites, stats, this.config.DENSIFY_SCORE_ALPHA, splits, this.constants);
    if (this.allocated + splits > this.slots) throw new Error(`densify at ${this.allocated} + ${splits} overruns the ${this.slots} slots the schedule predicted`);
    splitSites(sites, state, parents, stats, this.target, this.allocated);
    gpu.device.queue.writeBuffer(t.sites.buffer, 0, sites);
    gpu.device.queue.writeBuffer(t.state.buffer, 0, state);
    // The reference counts the planned splits even where a parent had too few candidates.
    this.allocated += splits;
    this.activeEstimate += splits;
  }

  /** The current render, planar [3, H, W] floats. */
  async render() {
    const { gpu, t } = this;
    gpu.submit((e) => {
      this.pack(e, 'pack_full', this.slots, t.zeroed);
      const lists = t.lists[this.pending ?? this.current];
      gpu.launch(e, 'render', { records: t.records, candidates: lists, image: t.image },
        { ...this.sizes(), site_count: this.slots }, grid2d(this.geometry.width, this.geometry.height, TILE));
    });
    return this.read(t.image, Float32Array);
  }

  /** PSNR of the current render against the photo, over the pixels the fit counts. */
  async psnr() {
    return this.target.psnr(await this.render());
  }

  /**
   * PSNR of the live sites rendered as `sad render` renders the saved file: candidate lists
   * built afresh (a jump flood, then propagation passes), not the lists the fit kept. The two
   * can differ a little: a site the fit's lists missed shows up in fresh ones.
   */
  async filePsnr() {
    const parsed = await this.sitesFile();
    if (parsed.count === 0) return this.psnr();
    const tensor = uploadSites(this.gpu, parsed);
    try {
      const { width, height } = this.geometry;
      const identity = { scale: 1, offsetX: 0, offsetY: 0, logTauShift: 0 };
      return this.target.psnr(await renderView(this.gpu, parsed, tensor, identity, width, height, 'image', true));
    } finally {
      tensor.buffer.destroy();
    }
  }

  /** The current render as RGBA bytes for a canvas. */
  async rgba() {
    const { gpu, t } = this;
    await this.render();
    const pixels = this.geometry.width * this.geometry.height;
    gpu.submit((e) => gpu.launch(e, 'rgba', { image: t.image, rgba: t.rgba }, { pixels }, grid1d(pixels, LINE_CUBE)));
    const words = await this.read(t.rgba, Uint32Array, pixels);
    return new Uint8ClampedArray(words.buffer, words.byteOffset, pixels * 4);
  }

  /** Live sites, counted on the host. */
  async activeSites() {
    const sites = await this.read(this.t.sites, Float32Array);
    let live = 0;
    for (let i = 0; i < this.slots; i++) if (sites[i * SITE_PARAMS] >= 0) live++;
    return live;
  }

  /** The live sites as a parsed sites file (what sites_export.js writes). */
  async sitesFile() {
    const all = await this.read(this.t.sites, Float32Array);
    const live = [];
    for (let i = 0; i < this.slots; i++) {
      if (all[i * SITE_PARAMS] >= 0) live.push(...all.subarray(i * SITE_PARAMS, (i + 1) * SITE_PARAMS));
    }
    const { width, height } = this.geometry;
    const count = live.length / SITE_PARAMS;
    return { width, height, count, live: count, sites: new Float32Array(live), bpp: bitsPerPixel(count, width, height, this.constants) };
  }

  /** Frees the GPU buffers. */
  destroy() {
    for (const tensor of Object.values(this.t).flat()) tensor.buffer.destroy();
  }
}
