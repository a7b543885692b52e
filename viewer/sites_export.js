// Writing sites files from the page: the reference's text (as the library's `sites_to_string`,
// numbers as C's %.9g) and the packed `*_sites.sadp` (as `PackedSites::pack` and `to_bytes`).
// Both take what parseSites / parsePacked return and write its active sites.

import { SITE_PARAMS } from './sites.js';

const f = Math.fround;
/** The text header's first line (the library's HEADER). */
const HEADER = '# SAD Sites (position_x, position_y, color_r, color_g, color_b, log_tau, radius, aniso_dir_x, aniso_dir_y, log_aniso)';
/** Memory column of each file column (the inverse of the file's column order). */
const MEMORY_COLUMN = [0, 1, 4, 5, 6, 2, 3, 7, 8, 9];

function trimFraction(number) {
  return number.includes('.') ? number.replace(/0+$/, '').replace(/\.$/, '') : number;
}

/** `value` as C's printf("%.9g", value) (the library's format_g9). */
export function formatG9(value) {
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const [mantissa, exponentText] = value.toExponential(8).split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 9) {
    return `${trimFraction(mantissa)}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return trimFraction(value.toFixed(8 - exponent));
}

function activeSites(parsed) {
  const sites = [];
  for (let i = 0; i < parsed.count; i++) {
    const site = parsed.sites.subarray(i * SITE_PARAMS, (i + 1) * SITE_PARAMS);
    if (site[0] >= 0) sites.push(site);
  }
  return sites;
}

/** The text file of `parsed`'s active sites. */
export function sitesToText(parsed) {
  const sites = activeSites(parsed);
  const lines = [HEADER, `# Image size: ${parsed.width} ${parsed.height}`, `# Total sites: ${sites.length}`];
  for (const site of sites) lines.push(MEMORY_COLUMN.map((m) => formatG9(site[m])).join(' '));
  return `${lines.join('\n')}\n`;
}

/** An f32's IEEE half bits, rounded to nearest even (the library's f16_bits). */
function halfBits(value) {
  const bits = new Uint32Array(new Float32Array([value]).buffer)[0];
  const sign = (bits >>> 16) & 0x8000;
  const magnitude = bits & 0x7fffffff;
  let half;
  if (magnitude > 0x7f800000) half = 0x7e00;
  else if (magnitude >= 0x477ff000) half = 0x7c00;
  else if (magnitude >= 0x38800000) {
    const rounded = magnitude + 0x0fff + ((magnitude >>> 13) & 1);
    half = (rounded >>> 13) - (112 << 10);
  } else if (magnitude >= 0x33000000) {
    const mantissa = (magnitude & 0x007fffff) | 0x00800000;
    const shift = 126 - (magnitude >>> 23);
    half = (mantissa + (1 << (shift - 1)) - 1 + ((mantissa >>> shift) & 1)) >>> shift;
  } else half = 0;
  return sign | half;
}

/** round(clamp((value − min) / scale, 0, 1) · levels), 0 for a non-positive scale. */
function unorm(value, [min, scale], levels) {
  if (scale <= 0) return 0;
  const n = Math.min(Math.max((value - min) / scale, 0), 1);
  return Math.floor(n * levels + 0.5);
}

/** The direction's angle in [0, π) in steps of π / 65536. */
function packAngle(x, y) {
  let angle = 0;
  if (Number.isFinite(x) && Number.isFinite(y) && x * x + y * y >= 1e-8) {
    angle = Math.atan2(y, x) % Math.PI;
    if (angle < 0) angle += Math.PI;
  }
  return Math.round(angle / Math.PI * 65536) % 65536;
}

/** The packed file (an ArrayBuffer) of `parsed`'s active sites. */
export function sitesToPacked(parsed) {
  const sites = activeSites(parsed);
  const { width, height } = parsed;
  // min and scale = max(max − min, 1e-6) of log τ, radius, r, g, b over the active sites.
  const ranges = [2, 3, 4, 5, 6].map((column) => {
    let low = Infinity, high = -Infinity;
    for (const site of sites) {
      if (Number.isFinite(site[column])) {
        low = Math.min(low, site[column]);
        high = Math.max(high, site[column]);
      }
    }
    return Number.isFinite(low) ? [low, Math.max(f(high - low), f(1e-6))] : [0, f(1e-6)];
  });
  const buffer = new ArrayBuffer(64 + 16 * sites.length);
  const view = new DataView(buffer);
  [0x53, 0x41, 0x44, 0x50].forEach((byte, i) => view.setUint8(i, byte));
  [1, width, height, sites.length].forEach((value, i) => view.setUint32(4 + 4 * i, value, true));
  ranges.flat().forEach((value, i) => view.setFloat32(20 + 4 * i, value, true));
  const position = (value, side) => {
    const max = f(side - 1);
    return unorm(Math.min(Math.max(value, 0), max), [0, max], 32767);
  };
  sites.forEach((site, i) => {
    const at = 64 + 16 * i;
    const logAniso = Number.isFinite(site[9]) ? site[9] : 0;
    const words = [
      position(site[0], width) | (position(site[1], height) << 15),
      unorm(site[4], ranges[2], 2047) | (unorm(site[5], ranges[3], 2047) << 11) | (unorm(site[6], ranges[4], 1023) << 22),
      unorm(site[2], ranges[0], 65535) | (unorm(site[3], ranges[1], 65535) << 16),
      packAngle(site[7], site[8]) | (halfBits(logAniso) << 16),
    ];
    words.forEach((word, w) => view.setUint32(at + 4 * w, word >>> 0, true));
  });
  return buffer;
}
