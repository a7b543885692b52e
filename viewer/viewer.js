// The viewer page: loads a sites file (query, picker or drop), renders it with the library's
// kernels on WebGPU at the canvas's size, pans and zooms by re-rendering (SAD is resolution-
// free), draws the debug views and site dots, compares with a target image, exports PNGs.
//
// Contract for tests and scripts (see the README): `?sites=URL` loads a file, and `target`,
// `view` (image|cells|tau|anisotropy|dots), `dots=1`, `zoom`, `centre=X,Y`, `width`, `height`
// and `compare` (side|swipe) set the rest; `document.body.dataset.state` becomes `rendered`
// (and `document.title` starts with "rendered") when the canvas `#view` shows a finished
// render, `error` or `no-webgpu` otherwise, with the reason in `#message`.

import { fetchOwn } from './fetch_own.js';
import { Gpu, NoWebGpu, VIEWER_KERNELS, renderView, uploadSites } from './gpu.js';
import { MAX_ZOOM, filePoint, parseSitesBytes, zoomedView } from './sites.js';
import { sitesToPacked, sitesToText } from './sites_export.js';

const $ = (id) => document.getElementById(id);
const canvas = $('view');
const targetCanvas = $('target-view');
const query = new URLSearchParams(location.search);

const state = {
  gpu: null,
  parsed: null,
  sitesTensor: null,
  name: '',
  target: null, // ImageData of the target at its own size
  zoom: clampZoom(Number(query.get('zoom') ?? 1)),
  centre: parsePoint(query.get('centre')),
  mode: query.get('view') ?? 'image',
  dots: query.get('dots') === '1',
  compare: query.get('compare') ?? 'none',
  rendering: false,
  pending: false,
  renders: 0,
};

function clampZoom(z) {
  return Number.isFinite(z) && z > 0 ? Math.min(z, MAX_ZOOM) : 1;
}

function parsePoint(text) {
  if (!text) return null;
  const parts = text.split(',').map(Number);
  return parts.length === 2 && parts.every(Number.isFinite) ? parts : null;
}

function setState(name, message = '') {
  document.body.dataset.state = name;
  $('message').textContent = message;
  $('message').hidden = message === '';
  document.title = `${name} — SAD viewer${state.name ? ` — ${state.name}` : ''}`;
}

function status(text) {
  $('status').textContent = text;
}

/** The gap between the render and the target side by side (`#stage`'s CSS gap). */
const GAP = 4;

/**
 * The canvas size: `width`/`height` from the query, else the space the page gives it: the
 * window's width (the stage never grows past it), halved less the gap when the target is
 * beside the render.
 */
function canvasSize() {
  const w = Number(query.get('width')), h = Number(query.get('height'));
  if (Number.isInteger(w) && w > 0 && Number.isInteger(h) && h > 0) return [w, h];
  const area = $('stage').getBoundingClientRect();
  const width = Math.min(area.width, document.documentElement.clientWidth);
  const beside = state.compare === 'side' && state.target !== null;
  const columns = beside ? Math.floor((width - GAP) / 2) : Math.floor(width);
  return [Math.max(64, columns), Math.max(64, Math.floor(area.height))];
}

/**
 * SAD extrapolates beyond the image: dims what lies outside the image's extent in `view` and
 * outlines the image, on the render canvas (the views inside the image are untouched).
 */
function markExtent(view) {
  // Output pixel x samples the file's point (x − offsetX) / scale, and file pixel i is the
  // square centred on point i: the pixels inside sample points in [−½, size − ½).
  const { width, height } = state.parsed;
  const { scale, offsetX, offsetY } = view;
  const left = Math.ceil(offsetX - scale / 2);
  const top = Math.ceil(offsetY - scale / 2);
  const right = Math.ceil(offsetX + scale * (width - 0.5));
  const bottom = Math.ceil(offsetY + scale * (height - 0.5));
  if (left <= 0 && top <= 0 && right >= canvas.width && bottom >= canvas.height) return;
  const context = canvas.getContext('2d');
  context.save();
  context.fillStyle = 'rgba(29, 31, 33, 0.8)';
  context.beginPath();
  context.rect(0, 0, canvas.width, canvas.height);
  context.rect(left, top, right - left, bottom - top);
  context.fill('evenodd');
  context.strokeStyle = '#8ab4f8';
  context.lineWidth = 1;
  context.strokeRect(left - 0.5, top - 0.5, right - left + 1, bottom - top + 1);
  context.restore();
}

function currentView() {
  const { width, height } = canvas;
  return zoomedView([state.parsed.width, state.parsed.height], [width, height], state.zoom, state.centre);
}

/** Renders the current view; coalesces requests that arrive while a render runs. */
async function draw() {
  if (!state.parsed || !state.gpu) return;
  if (state.rendering) {
    state.pending = true;
    return;
  }
  state.rendering = true;
  document.body.dataset.state = 'rendering';
  try {
    const [width, height] = canvasSize();
    const limit = state.gpu.device.limits.maxStorageBufferBindingSize;
    if (width * height * 32 > limit) {
      throw new Error(`a ${width}×${height} view needs ${width * height * 32} bytes of candidate lists; this GPU binds at most ${limit}`);
    }
    [canvas.width, canvas.height] = [width, height];
    const view = currentView();
    // The dots view is the image with the marks; the overlay adds them to any other view.
    const mode = state.dots && state.mode !== 'dots' ? `${state.mode}+dots` : state.mode;
    const started = performance.now();
    const pixels = await renderView(state.gpu, state.parsed, state.sitesTensor, view, width, height, mode);
    canvas.getContext('2d').putImageData(new ImageData(pixels, width, height), 0, 0);
    markExtent(view);
    drawTarget(view);
    state.renders++;
    const ms = (performance.now() - started).toFixed(1);
    status(`${state.name}: ${state.parsed.live} live sites of ${state.parsed.count}, ${state.parsed.width}×${state.parsed.height} · view ${width}×${height} at zoom ${state.zoom.toFixed(3)} · ${ms} ms`);
    document.body.dataset.renders = String(state.renders);
    setState('rendered');
  } catch (error) {
    console.error(error);
    setState('error', String(error.message ?? error));
  } finally {
    state.rendering = false;
  }
  if (state.pending) {
    state.pending = false;
    draw();
  }
}

/** The target under the same view, beside the render or over it (swipe). */
function drawTarget(view) {
  $('stage').dataset.compare = state.target ? state.compare : 'none';
  if (!state.target || state.compare === 'none') return;
  [targetCanvas.width, targetCanvas.height] = [canvas.width, canvas.height];
  const context = targetCanvas.getContext('2d');
  context.imageSmoothingEnabled = false;
  context.clearRect(0, 0, targetCanvas.width, targetCanvas.height);
  // Pixel (i, j) of the target is the file's point (i, j): a square centred there.
  context.setTransform(view.scale, 0, 0, view.scale, view.offsetX - view.scale / 2, view.offsetY - view.scale / 2);
  context.drawImage(state.targetBitmap, 0, 0);
  context.setTransform(1, 0, 0, 1, 0, 0);
}

/** PSNR of the render at the file's own size (not clamped) against the target, as the CLI's. */
async function comparePsnr() {
  const { width, height } = state.parsed;
  const target = state.target;
  if (target.width !== width || target.height !== height) {
    $('psnr').textContent = `target is ${target.width}×${target.height}, the fit ${width}×${height}: no PSNR`;
    return;
  }
  const identity = zoomedView([width, height], [width, height], 1, null);
  const render = await renderView(state.gpu, state.parsed, state.sitesTensor, identity, width, height, 'image', true);
  const plane = width * height;
  let sum = 0;
  for (let i = 0; i < plane; i++) {
    for (let c = 0; c < 3; c++) {
      const d = render[c * plane + i] - target.data[4 * i + c] / 255;
      sum += d * d;
    }
  }
  const mse = sum / (width * height * 3);
  const psnr = mse > 0 ? 10 * Math.log10(1 / mse) : 100;
  $('psnr').textContent = `PSNR against the target: ${psnr.toFixed(2)} dB`;
  document.body.dataset.psnr = psnr.toFixed(4);
}

async function loadSites(bytes, name) {
  const parsed = parseSitesBytes(bytes);
  if (state.sitesTensor) state.sitesTensor.buffer.destroy();
  state.parsed = parsed;
  state.name = name;
  state.sitesTensor = uploadSites(state.gpu, parsed);
  if (state.target) await comparePsnr();
  await draw();
}

async function loadTarget(blob) {
  const bitmap = await createImageBitmap(blob);
  const scratch = new OffscreenCanvas(bitmap.width, bitmap.height);
  const context = scratch.getContext('2d');
  context.drawImage(bitmap, 0, 0);
  state.targetBitmap = bitmap;
  state.target = context.getImageData(0, 0, bitmap.width, bitmap.height);
  if (state.compare === 'none') state.compare = 'swipe';
  $('compare').value = state.compare;
  if (state.parsed) {
    await comparePsnr();
    await draw();
  }
}

function setupControls() {
  $('mode').value = state.mode;
  $('dots').checked = state.dots;
  $('compare').value = state.compare;
  $('mode').addEventListener('change', () => { state.mode = $('mode').value; draw(); });
  $('dots').addEventListener('change', () => { state.dots = $('dots').checked; draw(); });
  $('compare').addEventListener('change', () => { state.compare = $('compare').value; draw(); });
  $('swipe').addEventListener('input', () => {
    targetCanvas.style.clipPath = `inset(0 0 0 ${$('swipe').value}%)`;
  });
  $('reset').addEventListener('click', () => { state.zoom = 1; state.centre = null; draw(); });
  $('export').addEventListener('click', () => {
    canvas.toBlob((blob) => {
      const link = document.createElement('a');
      link.href = URL.createObjectURL(blob);
      link.download = `${state.name.replace(/\.(txt|sadp)$/, '') || 'sad'}_${state.mode}.png`;
      link.click();
      URL.revokeObjectURL(link.href);
    }, 'image/png');
  });
  const save = (blob, name) => {
    const link = document.createElement('a');
    link.href = URL.createObjectURL(blob);
    link.download = name;
    link.click();
    URL.revokeObjectURL(link.href);
  };
  // `photo_sites.txt` exports as `photo_sites.sadp`; the server's `sites.txt` as `sad_sites.*`.
  const stem = () => {
    const base = (state.name ?? '').replace(/\.(txt|sadp)$/, '').replace(/_sites$/, '');
    return base === '' || base === 'sites' ? 'sad' : base;
  };
  $('export-text').addEventListener('click', () => {
    if (state.parsed) save(new Blob([sitesToText(state.parsed)], { type: 'text/plain' }), `${stem()}_sites.txt`);
  });
  $('export-packed').addEventListener('click', () => {
    if (!state.parsed) return;
    try {
      save(new Blob([sitesToPacked(state.parsed)], { type: 'application/octet-stream' }), `${stem()}_sites.sadp`);
    } catch (error) {
      status(`Export .sadp: ${error.message ?? error}`);
    }
  });
  const openFile = async (file) => {
    try {
      if (/\.(txt|sadp)$/.test(file.name)) await loadSites(await file.arrayBuffer(), file.name);
      else await loadTarget(file);
    } catch (error) {
      setState('error', `${file.name}: ${error.message ?? error}`);
    }
  };
  $('file').addEventListener('change', () => [...$('file').files].forEach(openFile));
  document.addEventListener('dragover', (event) => event.preventDefault());
  document.addEventListener('drop', (event) => {
    event.preventDefault();
    [...event.dataTransfer.files].forEach(openFile);
  });
  setupPanZoom();
  window.addEventListener('resize', () => draw());
}

function setupPanZoom() {
  let drag = null;
  canvas.addEventListener('pointerdown', (event) => {
    if (!state.parsed) return;
    drag = { x: event.offsetX, y: event.offsetY, view: currentView() };
    canvas.setPointerCapture(event.pointerId);
  });
  canvas.addEventListener('pointermove', (event) => {
    if (!drag) return;
    const [x, y] = filePoint(drag.view, canvas.width / 2 - (event.offsetX - drag.x), canvas.height / 2 - (event.offsetY - drag.y));
    state.centre = [x, y];
    draw();
  });
  canvas.addEventListener('pointerup', () => { drag = null; });
  canvas.addEventListener('wheel', (event) => {
    if (!state.parsed) return;
    event.preventDefault();
    // Keep the file's point under the cursor where it is.
    const before = currentView();
    const [px, py] = filePoint(before, event.offsetX, event.offsetY);
    state.zoom = clampZoom(state.zoom * Math.exp(-event.deltaY * 0.002));
    const { scale } = zoomedView([state.parsed.width, state.parsed.height], [canvas.width, canvas.height], state.zoom, null);
    state.centre = [px - (event.offsetX - canvas.width / 2) / scale, py - (event.offsetY - canvas.height / 2) / scale];
    draw();
  }, { passive: false });
}

async function main() {
  setupControls();
  try {
    state.gpu = await Gpu.create('kernels.json', VIEWER_KERNELS);
  } catch (error) {
    setState(error instanceof NoWebGpu ? 'no-webgpu' : 'error', String(error.message ?? error));
    return;
  }
  try {
    const target = query.get('target');
    if (target) await loadTarget(await (await fetchOwn(target)).blob());
    const sites = query.get('sites');
    if (sites) {
      await loadSites(await (await fetchOwn(sites)).arrayBuffer(), sites.split('/').pop());
    } else {
      setState('empty', '');
      status('Open a *_sites.txt or *_sites.sadp file (the button, or drop it on the page).');
    }
  } catch (error) {
    setState('error', String(error.message ?? error));
  }
}

main();
