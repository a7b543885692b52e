// Sites files and views on the host: parsing the reference's `*_sites.txt` format (as the
// library's `parse_sites`) and the packed `*_sites.sadp` (as `PackedSites`), the view transform (as `ViewTransform::zoomed`) and the Hilbert
// order the propagation probes (as `HilbertOrder::of_view`). No kernel is written here: the
// page runs the library's kernels, compiled to WGSL (kernels.json).

/** f32 values per site, in the kernels' order: x, y, log τ, radius, r, g, b, dir x, dir y, log a. */
export const SITE_PARAMS = 10;
/** File column of each in-memory parameter. */
const FILE_COLUMN = [0, 1, 5, 6, 2, 3, 4, 7, 8, 9];
/** The file's column names and the largest magnitude each may have. */
const COLUMN_NAMES = ['position_x', 'position_y', 'color_r', 'color_g', 'color_b', 'log_tau',
  'radius', 'aniso_dir_x', 'aniso_dir_y', 'log_aniso'];
const F32_MAX = 3.4028234663852886e38;
const COLUMN_LIMITS = [1e9, 1e9, F32_MAX, F32_MAX, F32_MAX, 80, 1e9, 1e9, 1e9, 80];
/** The largest zoom (the library's MAX_ZOOM). */
export const MAX_ZOOM = 1024;

/**
 * Parses a sites file. Returns { width, height, count, sites: Float32Array(count·10) } or throws
 * an Error whose message names the line.
 */
export function parseSites(text) {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let width = 0, height = 0, declared = null;
  const values = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    const where = `line ${i + 1}`;
    if (line === '') continue;
    if (line.startsWith('#')) {
      const lower = line.toLowerCase();
      const after = line.slice(line.indexOf(':') + 1).trim().split(/\s+/);
      if (lower.includes('image size')) {
        const [w, h] = after.map(Number);
        if (!(Number.isInteger(w) && Number.isInteger(h) && w > 0 && h > 0 && after.length === 2)) {
          throw new Error(`${where}: expected \`# Image size: <width> <height>\``);
        }
        [width, height] = [w, h];
      } else if (lower.includes('total sites')) {
        declared = { count: Number(after[0]), line: i + 1 };
      }
      continue;
    }
    const fields = line.split(/\s+/);
    if (fields.length !== 10 && fields.length !== 7) {
      throw new Error(`${where}: expected 10 (or 7) values, found ${fields.length}`);
    }
    const columns = fields.map((field) => {
      const v = Number(field);
      if (field === '' || Number.isNaN(v)) throw new Error(`${where}: \`${field}\` is not a number`);
      if (!Number.isFinite(v)) throw new Error(`${where}: \`${field}\` is not finite`);
      return v;
    });
    if (columns.length === 7) columns.push(1, 0, 0);
    columns.forEach((v, c) => {
      if (Math.abs(v) > COLUMN_LIMITS[c]) {
        throw new Error(`${where}: ${COLUMN_NAMES[c]} = ${v} is outside ±${COLUMN_LIMITS[c]}`);
      }
    });
    if (columns[6] < 0) throw new Error(`${where}: negative radius ${columns[6]}`);
    for (let m = 0; m < SITE_PARAMS; m++) values.push(columns[FILE_COLUMN[m]]);
  }
  const count = values.length / SITE_PARAMS;
  if (declared && declared.count !== count) {
    throw new Error(`line ${declared.line}: the header declares ${declared.count} sites but the file holds ${count}; is it truncated?`);
  }
  if (count === 0) throw new Error('the file holds no sites');
  const sites = new Float32Array(values);
  let live = 0, right = 0, bottom = 0;
  for (let i = 0; i < count; i++) {
    if (sites[i * SITE_PARAMS] >= 0) {
      live++;
      right = Math.max(right, sites[i * SITE_PARAMS]);
      bottom = Math.max(bottom, sites[i * SITE_PARAMS + 1]);
    }
  }
  if (live === 0) throw new Error(`all ${count} sites are inactive (position x < 0); nothing would render`);
  if (width === 0) {
    // No size in the header: the live sites' extent.
    width = Math.max(1, Math.ceil(right) + 1);
    height = Math.max(1, Math.ceil(bottom) + 1);
  }
  return { width, height, count, live, sites };
}

const f = Math.fround;

/** The packed file's magic, header and record sizes (the library's `PackedSites`). */
const PACKED_MAGIC = 'SADP';
const PACKED_HEADER = 80;
const PACKED_SITE = 16;
/** The record's fields (first bit, width) of the 128 bits, as the library's `packed.rs`. */
export const PACKED_FIELDS = {
  x: [0, 17], y: [17, 17], r: [34, 10], g: [44, 10], b: [54, 10], logTau: [64, 15],
  radius: [79, 16], angle: [95, 16], logAniso: [111, 16], inactive: [127, 1],
};
/** Header order of the ranged fields: memory column, name, record field. */
export const PACKED_RANGED = [[2, 'log_tau', 'logTau'], [3, 'radius', 'radius'],
  [4, 'color_r', 'r'], [5, 'color_g', 'g'], [6, 'color_b', 'b'], [9, 'log_anisotropy', 'logAniso']];

/** The largest value of a field of the record. */
export function levels(field) {
  return 2 ** PACKED_FIELDS[field][1] - 1;
}

/** Whether `bytes` (a Uint8Array) start with the packed file's magic. */
export function isPacked(bytes) {
  return bytes.length >= 4 && String.fromCharCode(...bytes.subarray(0, 4)) === PACKED_MAGIC;
}

/** The value of `field` in a record's four words (bit k: bit k % 32 of word k / 32). */
function getBits(words, field) {
  const [first, width] = PACKED_FIELDS[field];
  const w = first >>> 5, b = first & 31;
  let value = words[w] >>> b;
  if (b + width > 32) value |= words[w + 1] << (32 - b);
  return (value & ((1 << width) - 1)) >>> 0;
}

/** min + q · (1 / levels) · scale, in f32 steps as the library decodes. */
function fromUnorm(q, [min, scale], top) {
  return f(min + f(f(q * f(1 / top)) * Math.max(scale, 0)));
}

/**
 * Parses a packed sites file (`*_sites.sadp`, the library's `PackedSites::parse` and `unpack`):
 * the same { width, height, count, live, sites } as parseSites, or an Error in one line.
 */
export function parsePacked(bytes) {
  const fail = (reason) => { throw new Error(`packed sites file: ${reason}`); };
  if (bytes.length < PACKED_HEADER) fail(`${bytes.length} bytes is shorter than the ${PACKED_HEADER}-byte header`);
  if (!isPacked(bytes)) fail('the file does not start with `SADP`');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const word = (at) => view.getUint32(at, true);
  if (word(4) !== 1) fail(`format version ${word(4)}; this page reads version 1`);
  const [width, height, count] = [word(8), word(12), word(16)];
  if (!(width >= 1 && width <= 65535 && height >= 1 && height <= 65535)) {
    fail(`image size ${width}×${height} is not between 1 and 65535 on a side`);
  }
  const body = bytes.length - PACKED_HEADER;
  if (body !== count * PACKED_SITE) {
    fail(`the header declares ${count} sites (${count * PACKED_SITE} bytes) but ${body} bytes follow it; is it truncated?`);
  }
  const ranges = {};
  PACKED_RANGED.forEach(([column, name, field], i) => {
    const [min, scale] = [view.getFloat32(20 + 8 * i, true), view.getFloat32(24 + 8 * i, true)];
    // The largest value a record decodes to.
    const max = fromUnorm(levels(field), [min, scale], levels(field));
    if (!(Number.isFinite(min) && Number.isFinite(scale) && Number.isFinite(max)) || scale < 0) {
      fail(`the ${name} range (min ${min}, scale ${scale}) is not a finite, non-negative span`);
    }
    const limit = COLUMN_LIMITS[FILE_COLUMN[column]];
    if (Math.abs(min) > limit || Math.abs(max) > limit) fail(`the ${name} range [${min}, ${max}] is outside ±${limit}`);
    if (column === 3 && min < 0) fail(`the radius range starts below 0 (${min})`);
    ranges[field] = [min, scale];
  });
  if (bytes.subarray(68, PACKED_HEADER).some((b) => b !== 0)) fail('the reserved header bytes 68–79 are not 0');
  if (count === 0) throw new Error('the file holds no sites');
  const sites = new Float32Array(count * SITE_PARAMS);
  const words = new Uint32Array(4);
  let live = 0;
  for (let i = 0; i < count; i++) {
    for (let w = 0; w < 4; w++) words[w] = word(PACKED_HEADER + i * PACKED_SITE + 4 * w);
    const s = sites.subarray(i * SITE_PARAMS, (i + 1) * SITE_PARAMS);
    if (getBits(words, 'inactive')) {
      s.set([-1, -1, 0, 0, 0, 0, 0, 1, 0, 0]);
      continue;
    }
    live++;
    const ranged = (field) => fromUnorm(getBits(words, field), ranges[field], levels(field));
    const angle = getBits(words, 'angle') * Math.PI / 65536;
    s.set([
      fromUnorm(getBits(words, 'x'), [0, width - 1], levels('x')),
      fromUnorm(getBits(words, 'y'), [0, height - 1], levels('y')),
      ranged('logTau'),
      ranged('radius'),
      ranged('r'),
      ranged('g'),
      ranged('b'),
      Math.cos(angle),
      Math.sin(angle),
      ranged('logAniso'),
    ]);
  }
  if (live === 0) throw new Error(`all ${count} sites are inactive (position x < 0); nothing would render`);
  return { width, height, count, live, sites };
}

/** Parses a sites file's bytes (an ArrayBuffer): packed when they start with `SADP`, else text. */
export function parseSitesBytes(buffer) {
  const bytes = new Uint8Array(buffer);
  if (isPacked(bytes)) return parsePacked(bytes);
  return parseSites(new TextDecoder().decode(bytes));
}

/**
 * The view of a file of size `file` [w, h] on an output of size `output` [w, h] at `zoom`, with
 * the file's point `centre` [x, y] (or null: the file's centre) at the output's centre: the
 * four numbers of the library's ViewTransform::zoomed, in f32 as it computes them.
 */
export function zoomedView(file, output, zoom, centre) {
  const [fw, fh] = [f(Math.max(1, file[0])), f(Math.max(1, file[1]))];
  const [ow, oh] = [f(Math.max(1, output[0])), f(Math.max(1, output[1]))];
  const [cx, cy] = centre ?? [f(fw / 2), f(fh / 2)];
  const scale = f(f(Math.min(f(ow / fw), f(oh / fh))) * f(zoom));
  return {
    scale,
    offsetX: f(f(ow / 2) - f(f(cx) * scale)),
    offsetY: f(f(oh / 2) - f(f(cy) * scale)),
    logTauShift: f(Math.log(f(f(Math.max(ow, oh)) / f(scale * Math.max(fw, fh))))),
  };
}

/** The file's point under output pixel (x, y) of a view. */
export function filePoint(view, x, y) {
  return [(x - view.offsetX) / view.scale, (y - view.offsetY) / view.scale];
}

/** Index of (x, y) along the Hilbert curve of a 2^bits square (as the library's hilbert_index). */
function hilbertIndex(x, y, bits) {
  const mask = 2 ** bits - 1;
  let index = 0;
  for (let i = bits - 1; i >= 0; i--) {
    const rx = Math.floor(x / 2 ** i) % 2;
    const ry = Math.floor(y / 2 ** i) % 2;
    index += ((3 * rx) ^ ry) * 4 ** i;
    if (ry === 0) {
      if (rx === 1) {
        x = mask - x;
        y = mask - y;
      }
      [x, y] = [y, x];
    }
  }
  return index;
}

/**
 * The sites in Hilbert order of their viewed positions on a width × height output (live ones
 * outside it at the nearest edge, inactive ones at (0, 0)), ties in site order: { order, rank },
 * two Int32Arrays.
 */
export function hilbertOrder(parsed, view, width, height) {
  const { count, sites } = parsed;
  const side = Math.max(width, height, 2);
  const bits = Math.max(1, Math.ceil(Math.log2(side)));
  const clamp = (v, n) => Math.min(Math.max(Math.trunc(v), 0), n - 1);
  const keys = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    let x = sites[i * SITE_PARAMS], y = sites[i * SITE_PARAMS + 1];
    if (x >= 0) {
      x = f(f(x * view.scale) + view.offsetX);
      y = f(f(y * view.scale) + view.offsetY);
    }
    keys[i] = hilbertIndex(clamp(x, width), clamp(y, height), bits);
  }
  const order = Int32Array.from({ length: count }, (_, i) => i);
  order.sort((a, b) => keys[a] - keys[b] || a - b);
  const rank = new Int32Array(count);
  order.forEach((site, r) => { rank[site] = r; });
  return { order, rank };
}

/** The colour scale of a debug view (as the library's view scale): [lo, hi]. */
export function viewScale(parsed, view) {
  const { count, sites } = parsed;
  let lo = Infinity, hi = -Infinity, top = 0;
  for (let i = 0; i < count; i++) {
    const s = i * SITE_PARAMS;
    if (sites[s] < 0) continue;
    lo = Math.min(lo, sites[s + 2]);
    hi = Math.max(hi, sites[s + 2]);
    top = Math.max(top, Math.abs(sites[s + 9]));
  }
  return view === 'tau' ? [lo, hi] : [0, top];
}
