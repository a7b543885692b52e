// Writing sites files from the page: the reference's text (as the library's `sites_to_string`,
// numbers as C's %.9g) and the packed `*_sites.sadp` (as `PackedSites::pack` and `to_bytes`).
// Both take what parseSites / parsePacked return and write its active sites.

import { PACKED_FIELDS, PACKED_RANGED, SITE_PARAMS, levels, parsePacked } from './sites.js';

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

/** `value` into `field` of a record's four words (the field must be clear). */
function putBits(words, field, value) {
  const [first, width] = PACKED_FIELDS[field];
  const w = first >>> 5, b = first & 31;
  words[w] |= value << b;
  if (b + width > 32) words[w + 1] |= value >>> (32 - b);
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
  // min and scale = max(max − min, 1e-6) over the active sites, in the header's order.
  const ranges = {};
  for (const [column, , field] of PACKED_RANGED) {
    let low = Infinity, high = -Infinity;
    for (const site of sites) {
      if (Number.isFinite(site[column])) {
        low = Math.min(low, site[column]);
        high = Math.max(high, site[column]);
      }
    }
    ranges[field] = Number.isFinite(low) ? [low, Math.max(f(high - low), f(1e-6))] : [0, f(1e-6)];
  }
  const buffer = new ArrayBuffer(80 + 16 * sites.length);
  const view = new DataView(buffer);
  [0x53, 0x41, 0x44, 0x50].forEach((byte, i) => view.setUint8(i, byte));
  [1, width, height, sites.length].forEach((value, i) => view.setUint32(4 + 4 * i, value, true));
  PACKED_RANGED.flatMap(([, , field]) => ranges[field])
    .forEach((value, i) => view.setFloat32(20 + 4 * i, value, true));
  const position = (value, side, field) => {
    const max = f(side - 1);
    return unorm(Math.min(Math.max(value, 0), max), [0, max], levels(field));
  };
  const words = new Uint32Array(4);
  sites.forEach((site, i) => {
    words.fill(0);
    putBits(words, 'x', position(site[0], width, 'x'));
    putBits(words, 'y', position(site[1], height, 'y'));
    for (const [column, , field] of PACKED_RANGED) {
      putBits(words, field, unorm(site[column], ranges[field], levels(field)));
    }
    putBits(words, 'angle', packAngle(site[7], site[8]));
    words.forEach((word, w) => view.setUint32(80 + 16 * i + 4 * w, word, true));
  });
  // What this writes must read back (a range that decodes past a column's limit would not).
  parsePacked(new Uint8Array(buffer));
  return buffer;
}
