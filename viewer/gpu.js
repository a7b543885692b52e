// The WebGPU host of the viewer: binds and launches the library's kernels from kernels.json
// (WGSL compiled by CubeCL from the kernels `sad render` launches) in the order and with the
// arguments `sad render` uses: pack the viewed records, jump flood, propagation passes, render,
// then a debug view and the canvas's RGBA pixels.

import { SITE_PARAMS, hilbertOrder, viewScale } from './sites.js';

/** Candidates per cell (the kernels' K). */
export const K = 8;
/** Words of a full record and of the ranking copy. */
export const RECORD_WORDS = 12;
export const PACKED_WORDS = 8;
/** Units of a pack cube, of a 1D cube, and per side of a 2D cube. */
export const PACK_CUBE = 64;
export const LINE_CUBE = 256;
export const TILE = 16;
/** The propagation's probes (the library's PropagationOptions::default) and pass count. */
const PROPAGATION = { inject: 4, hilbertProbes: 1, hilbertWindow: 32 };
const RENDER_PASSES = 16;

const f32Bits = (() => {
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  return (v) => { f[0] = v; return u[0]; };
})();

/** The kernels the viewer launches (the page asks the adapter for what these need). */
export const VIEWER_KERNELS = ['pack_full', 'pack_ranking', 'clear_seed', 'seed', 'exact_ranking', 'flood', 'flood_mirror',
  'candidate_pass', 'render', 'winners', 'colours_cells', 'colours_tau', 'colours_anisotropy', 'mark_rings',
  'mark_centres', 'rgba'];

/** Why the page cannot render: shown to the user as is. */
export class NoWebGpu extends Error {}

/** The device, the kernels and their pipelines. */
export class Gpu {
  /**
   * The device, with the limits that the manifest's kernels named in `needs` (all by default)
   * take: storage buffers per stage, workgroup sizes and workgroup memory, read from their
   * argument lists and WGSL. Refuses, naming the limit, an adapter that has less.
   */
  static async create(manifestUrl, needs = null) {
    if (!('gpu' in navigator)) {
      throw new NoWebGpu('This browser has no WebGPU (navigator.gpu is missing). Use a recent Chrome, Edge or Safari, or Firefox with WebGPU enabled, over http://localhost or https.');
    }
    const adapter = await navigator.gpu.requestAdapter();
    if (!adapter) throw new NoWebGpu('WebGPU is present but no GPU adapter is available.');
    const response = await fetch(manifestUrl);
    if (!response.ok) throw new Error(`${manifestUrl}: ${response.status} ${response.statusText}`);
    const manifest = await response.json();
    const kernels = manifest.kernels.filter((k) => !needs || needs.includes(k.name));
    const required = kernelLimits(kernels);
    const limits = adapter.limits;
    for (const [name, value] of Object.entries(required)) {
      if (limits[name] < value) {
        throw new NoWebGpu(`This GPU adapter's ${name} is ${limits[name]}; the kernels need ${value}.`);
      }
    }
    const device = await adapter.requestDevice({
      requiredLimits: {
        ...required,
        maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize,
        maxBufferSize: limits.maxBufferSize,
      },
    });
    return new Gpu(device, manifest);
  }

  constructor(device, manifest) {
    this.device = device;
    this.manifest = manifest;
    this.kernels = new Map(manifest.kernels.map((k) => [k.name, k]));
    this.pipelines = new Map();
    this.lost = null;
    device.lost.then((info) => { this.lost = info.message; });
  }

  /** Compiles the pipelines of `names` now and waits for them (before a clock starts). */
  async warm(names) {
    await Promise.all(names.filter((name) => !this.pipelines.has(name)).map(async (name) => {
      const { kernel, layout, module } = this.describe(name);
      const pipeline = await this.device.createComputePipelineAsync({
        layout: this.device.createPipelineLayout({ bindGroupLayouts: [layout] }),
        compute: { module },
        label: name,
      });
      this.pipelines.set(name, { kernel, layout, pipeline });
    }));
  }

  /** A kernel's entry in the manifest, its bind group layout and its shader module. */
  describe(name) {
    const kernel = this.kernels.get(name);
    if (!kernel) throw new Error(`kernels.json has no ${name} kernel`);
    const tensors = kernel.args.filter((a) => a.kind === 'tensor').length;
    const entries = [];
    for (let i = 0; i <= tensors; i++) {
      entries.push({
        binding: i,
        visibility: GPUShaderStage.COMPUTE,
        buffer: { type: i < tensors ? 'storage' : 'read-only-storage' },
      });
    }
    const layout = this.device.createBindGroupLayout({ entries });
    const module = this.device.createShaderModule({ code: kernel.wgsl, label: name });
    return { kernel, layout, module };
  }

  /** A compute pipeline per kernel, with the explicit layout CubeCL binds by. */
  pipeline(name) {
    let entry = this.pipelines.get(name);
    if (entry) return entry;
    const { kernel, layout, module } = this.describe(name);
    const pipeline = this.device.createComputePipeline({
      layout: this.device.createPipelineLayout({ bindGroupLayouts: [layout] }),
      compute: { module },
      label: name,
    });
    entry = { kernel, layout, pipeline };
    this.pipelines.set(name, entry);
    return entry;
  }

  /** A storage buffer for a tensor of `shape` (elements of 4 bytes). */
  tensor(shape, element, init = null) {
    const elements = shape.reduce((a, b) => a * b, 1);
    const size = Math.max(16, Math.ceil((elements * 4) / 16) * 16);
    const buffer = this.device.createBuffer({
      size,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC,
    });
    if (init) this.device.queue.writeBuffer(buffer, 0, init);
    return { buffer, shape, element, elements };
  }

  /**
   * The info buffer of one launch: scalars grouped by type (usize — each tensor adds its length
   * in vectors and its rank, in argument order —, then f32, then u32), each group padded to an
   * even number of words; the buffers' lengths (in vectors), the tensors' shape and stride
   * offsets; then every shape, then every stride.
   */
  info(kernel, tensors, scalars) {
    const groups = { usize: [], f32: [], i32: [], u32: [] };
    const lengths = [], shapes = [], strides = [], offsets = [];
    for (const arg of kernel.args) {
      if (arg.kind === 'tensor') {
        const t = tensors[arg.name];
        if (!t) throw new Error(`${kernel.name}: no tensor for ${arg.name}`);
        const vector = arg.vector;
        lengths.push(Math.floor(t.buffer.size / 4 / vector));
        offsets.push(shapes.length);
        let stride = 1;
        const own = [];
        for (let d = t.shape.length - 1; d >= 0; d--) { own.unshift(stride); stride *= t.shape[d]; }
        shapes.push(...t.shape);
        strides.push(...own);
        groups.usize.push(Math.floor(t.elements / vector), t.shape.length);
      } else {
        const value = scalars[arg.name];
        if (value === undefined) throw new Error(`${kernel.name}: no value for ${arg.name}`);
        groups[arg.kind].push(arg.kind === 'f32' ? f32Bits(value) : value >>> 0);
      }
    }
    const words = [];
    const pad = () => { if (words.length % 2) words.push(0); };
    for (const kind of ['usize', 'f32', 'i32', 'u32']) { words.push(...groups[kind]); pad(); }
    words.push(...lengths, ...offsets, ...offsets.map((o) => o + shapes.length));
    pad();
    words.push(...shapes, ...strides);
    pad();
    while (words.length < 4) words.push(0);
    return new Uint32Array(words);
  }

  /** Records one launch of kernel `name` on `encoder` over `count` workgroups. */
  launch(encoder, name, tensors, scalars, count) {
    const { kernel, layout, pipeline } = this.pipeline(name);
    const info = this.info(kernel, tensors, scalars);
    const infoBuffer = this.device.createBuffer({
      size: info.byteLength,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
    });
    this.device.queue.writeBuffer(infoBuffer, 0, info);
    const entries = kernel.args
      .filter((a) => a.kind === 'tensor')
      .map((a, i) => ({ binding: i, resource: { buffer: tensors[a.name].buffer } }));
    entries.push({ binding: entries.length, resource: { buffer: infoBuffer } });
    const group = this.device.createBindGroup({ layout, entries });
    const pass = encoder.beginComputePass({ label: name });
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(...count);
    pass.end();
    this.garbage.push(infoBuffer);
  }

  /**
   * Runs `record(encoder)` and submits it without waiting: the queue keeps the order, and a
   * read (`read`, or a mapped copy) waits for the work before it. Returns what `record` returns.
   */
  submit(record) {
    this.garbage = [];
    const encoder = this.device.createCommandEncoder();
    const result = record(encoder);
    this.device.queue.submit([encoder.finish()]);
    // Freed once the submitted work is done.
    for (const buffer of this.garbage) buffer.destroy();
    if (this.lost) throw new Error(`the GPU device was lost: ${this.lost}`);
    return result;
  }

  /** The first `count` elements of `buffer` (`Type`: a typed array), after the queued work. */
  async read(buffer, Type, count) {
    const bytes = count * 4;
    const readback = this.device.createBuffer({ size: Math.max(4, bytes), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const encoder = this.device.createCommandEncoder();
    encoder.copyBufferToBuffer(buffer, 0, readback, 0, bytes);
    this.device.queue.submit([encoder.finish()]);
    await readback.mapAsync(GPUMapMode.READ);
    const values = new Type(readback.getMappedRange().slice(0, bytes));
    readback.unmap();
    readback.destroy();
    if (this.lost) throw new Error(`the GPU device was lost: ${this.lost}`);
    return values;
  }
}

/** The limits `kernels` take beyond WebGPU's defaults, by their argument lists and WGSL. */
function kernelLimits(kernels) {
  const need = {
    maxStorageBuffersPerShaderStage: 8,
    maxComputeWorkgroupSizeX: 1,
    maxComputeWorkgroupSizeY: 1,
    maxComputeInvocationsPerWorkgroup: 1,
    maxComputeWorkgroupStorageSize: 0,
  };
  for (const kernel of kernels) {
    // The tensors and the info buffer.
    const buffers = kernel.args.filter((a) => a.kind === 'tensor').length + 1;
    const [x, y, z] = kernel.workgroup;
    let shared = 0;
    for (const [, type, length] of kernel.wgsl.matchAll(/var<workgroup> \w+: array<([^,]+), (\d+)>/g)) {
      shared += Number(length) * (/vec4|vec3/.test(type) ? 16 : /vec2/.test(type) ? 8 : 4);
    }
    need.maxStorageBuffersPerShaderStage = Math.max(need.maxStorageBuffersPerShaderStage, buffers);
    need.maxComputeWorkgroupSizeX = Math.max(need.maxComputeWorkgroupSizeX, x);
    need.maxComputeWorkgroupSizeY = Math.max(need.maxComputeWorkgroupSizeY, y);
    need.maxComputeInvocationsPerWorkgroup = Math.max(need.maxComputeInvocationsPerWorkgroup, x * y * z);
    need.maxComputeWorkgroupStorageSize = Math.max(need.maxComputeWorkgroupStorageSize, shared);
  }
  return need;
}

export const grid2d = (w, h, side) => [Math.ceil(w / side), Math.ceil(h / side), 1];
export const grid1d = (n, side) => [Math.max(1, Math.ceil(n / side)), 1, 1];

/** The jump of propagation pass `pass` (the library's jump_for_pass). */
/**
 * Seeds candidate lists `lists` from the full records `records` of `count` sites: empties slot 0
 * of every live site's cell, then the highest id of each cell takes it (`seed_candidates_kernel`).
 * `grid` holds the `PixelGrid` scalars.
 */
export function seedLists(gpu, e, records, lists, grid, count) {
  for (const kernel of ['clear_seed', 'seed']) {
    gpu.launch(e, kernel, { records, candidates: lists }, grid, grid1d(count, LINE_CUBE));
  }
}

export function jumpForPass(pass, candW, candH) {
  const top = nextPowerOfTwo(Math.max(candW, candH));
  const stages = Math.max(Math.log2(top), 1);
  return Math.max(top >> (Math.min(pass, stages - 1) + 1), 1);
}

function nextPowerOfTwo(n) {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/**
 * Renders the parsed sites as `view` places them on a width × height image, showing `mode`
 * (image, cells, tau, anisotropy or dots, optionally `+dots` for the site marks on top):
 * returns the RGBA bytes (Uint8ClampedArray), or with `floats` the render itself, planar
 * [3, height, width] and not clamped (Float32Array), as the CLI's PSNR reads it.
 */
export async function renderView(gpu, parsed, sitesTensor, view, width, height, mode, floats = false) {
  const count = parsed.count;
  const cells = width * height;
  // Every launch is a 1D or 2D grid of workgroups; the longest is the packing's.
  const most = gpu.device.limits.maxComputeWorkgroupsPerDimension;
  if (Math.ceil(count / PACK_CUBE) > most || Math.ceil(cells / LINE_CUBE) > most) {
    throw new Error(`${count} sites on ${width}×${height} pixels is more than this GPU launches at once (${most} workgroups of ${PACK_CUBE} sites, of ${LINE_CUBE} pixels)`);
  }
  const invScaleSq = Math.fround(1 / Math.fround(Math.max(width, height) ** 2));
  const viewScalars = {
    site_count: count,
    scale: view.scale,
    offset_x: view.offsetX,
    offset_y: view.offsetY,
    log_tau_shift: view.logTauShift,
  };
  const size = { width, height, cand_w: width, cand_h: height, downscale: 1, site_count: count };
  const hilbert = hilbertOrder(parsed, view, width, height);
  const t = {
    sites: sitesTensor,
    records: gpu.tensor([count, RECORD_WORDS], 'u32'),
    ranking: gpu.tensor([count, PACKED_WORDS], 'u32'),
    exact: gpu.tensor([count, PACKED_WORDS], 'u32'),
    zeroed: gpu.tensor([1], 'f32'),
    order: gpu.tensor([count], 'i32', hilbert.order),
    rank: gpu.tensor([count], 'i32', hilbert.rank),
    lists: gpu.tensor([cells, K], 'i32', new Int32Array(cells * K).fill(-1)),
    other: gpu.tensor([cells, K], 'i32'),
    spare: gpu.tensor([K], 'i32'),
    image: gpu.tensor([3, height, width], 'f32'),
    winners: gpu.tensor([height, width], 'i32'),
    colours: gpu.tensor([3, height, width], 'f32'),
    rgba: gpu.tensor([cells], 'u32'),
  };
  const result = floats ? t.image : t.rgba;
  const readback = gpu.device.createBuffer({
    size: result.buffer.size,
    usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
  });
  gpu.submit((e) => {
    const packCount = grid1d(count, PACK_CUBE);
    gpu.launch(e, 'pack_full', { sites: t.sites, packed: t.records, zeroed: t.zeroed }, viewScalars, packCount);
    gpu.launch(e, 'pack_ranking', { sites: t.sites, packed: t.ranking, zeroed: t.zeroed }, viewScalars, packCount);
    // The jump flood from the exact records: seeds, then steps P/2 … 1.
    seedLists(gpu, e, t.records, t.lists, { ...size, inv_scale_sq: invScaleSq }, count);
    gpu.launch(e, 'exact_ranking', { records: t.records, ranking: t.exact }, size, grid1d(count, LINE_CUBE));
    let step = nextPowerOfTwo(Math.max(width, height)) / 2;
    let readHalf = 0;
    while (step >= 1) {
      const mirror = step === 1 && readHalf === 0;
      gpu.launch(e, mirror ? 'flood_mirror' : 'flood',
        { ranking: t.exact, candidates: t.lists, output: mirror ? t.other : t.spare },
        { ...size, step, read_half: readHalf, inv_scale_sq: invScaleSq }, grid2d(width, height, TILE));
      if (mirror) [t.lists, t.other] = [t.other, t.lists];
      readHalf ^= 1;
      step /= 2;
    }
    for (let pass = 0; pass < RENDER_PASSES; pass++) {
      gpu.launch(e, 'candidate_pass',
        { packed: t.ranking, input: t.lists, output: t.other, hilbert_order: t.order, hilbert_rank: t.rank },
        {
          ...size,
          jump: jumpForPass(pass, width, height),
          pass,
          inject: PROPAGATION.inject,
          hilbert_probes: PROPAGATION.hilbertProbes,
          hilbert_window: PROPAGATION.hilbertWindow,
          inv_scale_sq: invScaleSq,
        }, grid2d(width, height, TILE));
      [t.lists, t.other] = [t.other, t.lists];
    }
    const perPixel = { ...size, inv_scale_sq: invScaleSq };
    const tiles = grid2d(width, height, TILE);
    gpu.launch(e, 'render', { records: t.records, candidates: t.lists, image: t.image }, perPixel, tiles);
    let shown = t.image;
    const [base, overlay] = mode.split('+');
    if (base === 'cells' || base === 'tau' || base === 'anisotropy') {
      gpu.launch(e, 'winners', { records: t.records, candidates: t.lists, winners: t.winners }, perPixel, tiles);
      const [lo, hi] = viewScale(parsed, base);
      gpu.launch(e, `colours_${base}`, { sites: t.sites, winners: t.winners, image: t.colours },
        { width, height, lo, hi }, tiles);
      shown = t.colours;
    }
    if (base === 'dots' || overlay === 'dots') {
      for (const name of ['mark_rings', 'mark_centres']) {
        gpu.launch(e, name, { records: t.records, image: shown },
          { width, height, site_count: count }, grid1d(count, LINE_CUBE));
      }
    }
    gpu.launch(e, 'rgba', { image: shown, rgba: t.rgba }, { pixels: cells }, grid1d(cells, LINE_CUBE));
    e.copyBufferToBuffer(result.buffer, 0, readback, 0, result.buffer.size);
  });
  await readback.mapAsync(GPUMapMode.READ);
  const mapped = readback.getMappedRange();
  const bytes = floats
    ? new Float32Array(mapped.slice(0, cells * 12))
    : new Uint8ClampedArray(mapped.slice(0, cells * 4));
  readback.unmap();
  readback.destroy();
  for (const [name, tensor] of Object.entries(t)) {
    if (name !== 'sites') tensor.buffer.destroy();
  }
  return bytes;
}

/** The sites as a tensor, uploaded once per file. */
export function uploadSites(gpu, parsed) {
  return gpu.tensor([parsed.count, SITE_PARAMS], 'f32', parsed.sites);
}
