// The photo being fitted on the trainer page, on the host: decoding, the mask, the Sobel
// gradient, and the host-side steps of the library's trainer that read it: the
// gradient-weighted R2 initialisation (`src/sad/fit/init.rs`) and the split of densify
// (`src/sad/fit/densify.rs`), ported line for line, in f32 where the library computes in f32.

import { SITE_PARAMS } from './sites.js';

const f = Math.fround;
/** Adam state words per site (the kernels' ADAM_STATE). */
export const ADAM_STATE = 18;
/** Channels of the densify statistics (the kernels' DENSIFY_STATS). */
export const DENSIFY_STATS = 8;
/** Column indices of a site (the kernels' layout). */
const [POSITION, LOG_TAU, RADIUS, COLOR, DIRECTION, LOG_ANISO] = [0, 2, 3, 4, 7, 9];
/** The largest side the kernels index (the library's KERNEL_MAX_SIDE). */
export const MAX_SIDE = 16384;

/** Decoded RGBA bytes of an image file (PNG or JPEG), without colour conversion. */
export async function decodeImage(blob, what) {
  let bitmap;
  try {
    bitmap = await createImageBitmap(blob, { colorSpaceConversion: 'none', premultiplyAlpha: 'none' });
  } catch (error) {
    throw new Error(`${what} is not an image this browser decodes (${error.message})`);
  }
  const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
  const context = canvas.getContext('2d', { colorSpace: 'srgb' });
  context.drawImage(bitmap, 0, 0);
  const data = context.getImageData(0, 0, bitmap.width, bitmap.height).data;
  return { width: bitmap.width, height: bitmap.height, data };
}

/** The photo to fit: planar RGB in [0, 1] (f32, as the library decodes 8-bit files), a mask. */
export class TargetImage {
  constructor(width, height, planar, mask = null) {
    this.width = width;
    this.height = height;
    this.planar = planar;
    this.mask = mask;
  }

  /** From decoded RGBA bytes. */
  static fromRgba({ width, height, data }) {
    if (width < 2 || height < 2) throw new Error(`the photo is ${width}×${height}; a fit needs at least 2×2 pixels`);
    if (width > MAX_SIDE || height > MAX_SIDE) throw new Error(`the photo is ${width}×${height}; the kernels take at most ${MAX_SIDE} pixels a side`);
    const plane = width * height;
    const planar = new Float32Array(3 * plane);
    for (let i = 0; i < plane; i++) {
      for (let c = 0; c < 3; c++) planar[c * plane + i] = data[4 * i + c] / 255;
    }
    return new TargetImage(width, height, planar);
  }

  /** With the mask `rgba` (the photo's size): stb's luma of RGB / 255, as `sad fit --mask`. */
  withMask({ width, height, data }) {
    if (width !== this.width || height !== this.height) {
      throw new Error(`the mask is ${width}×${height} but the photo is ${this.width}×${this.height}`);
    }
    const mask = new Float32Array(width * height);
    let kept = 0;
    for (let i = 0; i < mask.length; i++) {
      const luma = (77 * data[4 * i] + 150 * data[4 * i + 1] + 29 * data[4 * i + 2]) >> 8;
      mask[i] = luma / 255;
      if (mask[i] > 0) kept++;
    }
    if (kept === 0) throw new Error('the mask keeps no pixel');
    return new TargetImage(this.width, this.height, this.planar, mask);
  }

  maskAt(x, y) {
    return this.mask ? this.mask[y * this.width + x] : 1;
  }

  /** Pixels the fit counts. */
  countedPixels() {
    if (!this.mask) return this.width * this.height;
    let n = 0;
    for (const v of this.mask) if (v > 0) n++;
    return n;
  }

  /** The planar image the kernels read: red −1 where the mask leaves a pixel out. */
  kernelPlanar() {
    const planar = this.planar.slice();
    if (this.mask) this.mask.forEach((keep, i) => { if (keep <= 0) planar[i] = -1; });
    return planar;
  }

  rgb(x, y) {
    const plane = this.width * this.height;
    const i = y * this.width + x;
    return [this.planar[i], this.planar[plane + i], this.planar[2 * plane + i]];
  }

  luma(x, y) {
    x = Math.min(Math.max(x, 0), this.width - 1);
    y = Math.min(Math.max(y, 0), this.height - 1);
    const [r, g, b] = this.rgb(x, y);
    return f(f(f(f(0.299) * r) + f(f(0.587) * g)) + f(f(0.114) * b));
  }

  /** The Sobel gradient of luma at (x, y), borders clamped, each kernel divided by 4. */
  sobel(x, y) {
    const at = (dx, dy) => this.luma(x + dx, y + dy);
    const [tl, t, tr] = [at(-1, -1), at(0, -1), at(1, -1)];
    const [l, r] = [at(-1, 0), at(1, 0)];
    const [bl, b, br] = [at(-1, 1), at(0, 1), at(1, 1)];
    const gx = f(f(f(f(f(f(-tl + tr) - f(2 * l)) + f(2 * r)) - bl) + br) / 4);
    const gy = f(f(f(f(f(f(-tl - f(2 * t)) - tr) + bl) + f(2 * b)) + br) / 4);
    return [gx, gy];
  }

  /** PSNR in dB of a planar render against the photo, over the pixels the fit counts. */
  psnr(render) {
    const plane = this.width * this.height;
    let sum = 0, pixels = 0;
    for (let i = 0; i < plane; i++) {
      if (this.mask && this.mask[i] <= 0) continue;
      pixels++;
      for (let c = 0; c < 3; c++) {
        const d = render[c * plane + i] - this.planar[c * plane + i];
        sum += d * d;
      }
    }
    const mse = sum / (Math.max(pixels, 1) * 3);
    return mse === 0 ? 100 : -10 * Math.log10(mse);
  }
}

function site(x, y, rgb, logTau, radius) {
  return [x, y, logTau, radius, rgb[0], rgb[1], rgb[2], 1, 0, 0];
}

/** Point n of the R2 sequence in f32, as the reference draws it. */
function r2Point(n) {
  const plastic = f(1.3247179);
  const a1 = f(1 / plastic);
  const a2 = f(1 / f(plastic * plastic));
  const m = f(n >>> 0);
  // The fused multiply-adds of the library: exact in f64, rounded once.
  return [f(f(m * a1 + 0.5) % 1), f(f(m * a2 + 0.5) % 1)];
}

function r2Site(target, threshold, shape, n) {
  const [u, v] = r2Point(n);
  const x = f(u * (target.width - 1));
  const y = f(v * (target.height - 1));
  const ix = Math.trunc(x), iy = Math.trunc(y);
  const keep = target.maskAt(ix, iy);
  if (keep <= 0) return null;
  const [gx, gy] = target.sobel(ix, iy);
  const gradient = f(f(Math.sqrt(f(f(gx * gx) + f(gy * gy)))) * keep);
  if (!(gradient > threshold)) return null;
  const logTau = f(shape.logTau + f(f(Math.pow(gradient, 0.25)) * 2));
  return site(x, y, target.rgb(ix, iy), logTau, shape.radius);
}

/**
 * `count` sites drawn from the R2 sequence where the photo's Sobel gradient exceeds the
 * threshold (the library's gradient-weighted initialisation): the slots draw indices as the
 * reference's GPU threads draw them from one counter, round by round in slot order, each slot
 * until a point passes; a slot that finds none in `init_max_attempts` rounds is inactive.
 * Returns a Float32Array of `count` rows.
 */
export function gradientWeighted(target, count, shape, seed, constants) {
  const threshold = f(f(constants.init_gradient_threshold) * 1);
  const failed = [-1, -1, shape.logTau, shape.radius, 0.5, 0.5, 0.5, 1, 0, 0];
  const sites = new Float32Array(count * SITE_PARAMS);
  for (let slot = 0; slot < count; slot++) sites.set(failed, slot * SITE_PARAMS);
  let drawing = Array.from({ length: count }, (_, slot) => slot);
  let next = seed;
  for (let round = 0; round < constants.init_max_attempts && drawing.length > 0; round++) {
    drawing = drawing.filter((slot) => {
      next++;
      const point = r2Site(target, threshold, shape, next - 1);
      if (point) sites.set(point, slot * SITE_PARAMS);
      return !point;
    });
  }
  return sites;
}

/** The rows of a sites file fitted at another size, their positions scaled to the photo's. */
export function fromSites(parsed, target) {
  const scale = (size, own) => (size > 0 && size !== own ? f(own / size) : 1);
  const sx = scale(parsed.width, target.width), sy = scale(parsed.height, target.height);
  const sites = parsed.sites.slice(0, parsed.count * SITE_PARAMS);
  for (let i = 0; i < parsed.count; i++) {
    if (sites[i * SITE_PARAMS] >= 0) {
      sites[i * SITE_PARAMS] = f(sites[i * SITE_PARAMS] * sx);
      sites[i * SITE_PARAMS + 1] = f(sites[i * SITE_PARAMS + 1] * sy);
    }
  }
  return sites;
}

/** The `count` smallest (key, id) pairs' ids, by key then id. */
function smallest(keyed, count) {
  keyed.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return keyed.slice(0, count).map(([, id]) => id);
}

/** The sites to split: the largest energy / mass^alpha among live sites of mass > min_mass. */
export function splitCandidates(sites, stats, alpha, count, constants) {
  const keyed = [];
  const rows = sites.length / SITE_PARAMS;
  for (let id = 0; id < rows; id++) {
    const mass = stats[id * DENSIFY_STATS], energy = stats[id * DENSIFY_STATS + 1];
    if (sites[id * SITE_PARAMS] >= 0 && mass > constants.split_min_mass && Number.isFinite(energy)) {
      keyed.push([-f(Math.max(energy, 0) / f(Math.pow(Math.max(mass, 1e-8), alpha))), id]);
    }
  }
  return smallest(keyed, count);
}

/**
 * Splits each parent in two along its error's principal axis (or the photo's gradient), the
 * second child into slot `allocated + j`; both children's Adam state restarts at zero.
 */
export function splitSites(sites, state, parents, stats, target, allocated) {
  const maxX = target.width - 1, maxY = target.height - 1;
  const rows = sites.length / SITE_PARAMS;
  parents.forEach((id, j) => {
    const parent = Array.from(sites.subarray(id * SITE_PARAMS, (id + 1) * SITE_PARAMS));
    const childSlot = allocated + j;
    if (parent[POSITION] < 0 || childSlot === id || childSlot >= rows) return;
    const stat = stats.subarray(id * DENSIFY_STATS, (id + 1) * DENSIFY_STATS);
    const weight = stat[2];
    let axis = [parent[DIRECTION], parent[DIRECTION + 1]];
    let center = [parent[POSITION], parent[POSITION + 1]];
    let logAniso = f(parent[LOG_ANISO] * f(0.8));
    if (weight > 1e-3) {
      const mx = f(stat[3] / weight), my = f(stat[4] / weight);
      center = [f(f(f(0.4) * parent[POSITION]) + f(f(0.6) * mx)), f(f(f(0.4) * parent[POSITION + 1]) + f(f(0.6) * my))];
      const exx = Math.max(f(f(stat[5] / weight) - f(mx * mx)), f(1e-4));
      const exy = f(f(stat[6] / weight) - f(mx * my));
      const eyy = Math.max(f(f(stat[7] / weight) - f(my * my)), f(1e-4));
      const theta = f(0.5 * f(Math.atan2(f(2 * exy), f(exx - eyy))));
      axis = [f(Math.cos(theta)), f(Math.sin(theta))];
      const halfTrace = f(0.5 * f(exx + eyy));
      const disc = f(Math.sqrt(Math.max(f(f(f(0.25 * f(exx - eyy)) * f(exx - eyy)) + f(exy * exy)), 0)));
      const major = Math.max(f(halfTrace + disc), f(1e-4));
      const minor = Math.max(f(halfTrace - disc), f(1e-4));
      logAniso = Math.min(Math.max(f(-0.5 * f(Math.log(f(major / minor)))), -2), 2);
    } else {
      const ix = Math.min(Math.max(Math.trunc(parent[POSITION]), 0), target.width - 1);
      const iy = Math.min(Math.max(Math.trunc(parent[POSITION + 1]), 0), target.height - 1);
      const [gx, gy] = target.sobel(ix, iy);
      const g2 = f(f(gx * gx) + f(gy * gy));
      if (g2 > 1e-8) {
        const inv = f(1 / f(Math.sqrt(g2)));
        axis = [f(gx * inv), f(gy * inv)];
      }
    }
    const offset = Math.min(Math.max(f(0.5 * f(Math.sqrt(Math.max(stat[0], 1)))), 1.5), 48);
    const child = (sign) => {
      const x = Math.min(Math.max(f(center[0] + f(f(sign * offset) * axis[0])), 0), maxX);
      const y = Math.min(Math.max(f(center[1] + f(f(sign * offset) * axis[1])), 0), maxY);
      const rgb = target.rgb(Math.trunc(x), Math.trunc(y));
      const s = parent.slice();
      s[POSITION] = x;
      s[POSITION + 1] = y;
      s[LOG_TAU] = f(parent[LOG_TAU] - 0.25);
      s[RADIUS] = f(parent[RADIUS] * f(0.85));
      s[COLOR] = rgb[0];
      s[COLOR + 1] = rgb[1];
      s[COLOR + 2] = rgb[2];
      s[DIRECTION] = axis[0];
      s[DIRECTION + 1] = axis[1];
      s[LOG_ANISO] = logAniso;
      return s;
    };
    sites.set(child(1), id * SITE_PARAMS);
    sites.set(child(-1), childSlot * SITE_PARAMS);
    state.fill(0, id * ADAM_STATE, (id + 1) * ADAM_STATE);
    state.fill(0, childSlot * ADAM_STATE, (childSlot + 1) * ADAM_STATE);
  });
}
