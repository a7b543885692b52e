// The trainer page: pick a photo (and a mask or starting sites), edit the training config,
// Train / Stop, watch the render and the log, export the PNG and the sites. The fit is
// trainer.js's, on the library's kernels; `sad view --train PHOTO` serves this page with the
// photo (`?image=`, `&mask=`, `&init=` name files to load at start).

import { fetchOwn } from './fetch_own.js';
import { Gpu, NoWebGpu } from './gpu.js';
import { parseSitesBytes } from './sites.js';
import { sitesToPacked, sitesToText } from './sites_export.js';
import { TargetImage, decodeImage } from './target.js';
import { TRAINING_KERNELS, Trainer, checkConfig } from './trainer.js';

const $ = (id) => document.getElementById(id);
const query = new URLSearchParams(location.search);
const state = { gpu: null, manifest: null, photo: null, mask: null, init: null, name: 'photo', trainer: null, stop: false, sites: null };

function setState(name, message = '') {
  document.body.dataset.state = name;
  $('message').hidden = !message;
  $('message').textContent = message;
  const idle = name !== 'training' && name !== 'loading' && name !== 'no-webgpu';
  $('train').disabled = !(idle && state.photo);
  $('stop').disabled = name !== 'training';
  for (const id of ['export-png', 'export-text', 'export-packed']) $(id).disabled = !(idle && state.trainer);
}

function log(line) {
  const box = $('log');
  box.textContent += `${line}\n`;
  box.scrollTop = box.scrollHeight;
  console.log(line);
}

async function loadPhoto(blob, name) {
  state.photo = TargetImage.fromRgba(await decodeImage(blob, name));
  state.name = name.replace(/\.[^.]*$/, '') || 'photo';
  $('status').textContent = `${name}: ${state.photo.width}×${state.photo.height}`;
}

/** The config textarea's JSON over the defaults, checked; one clear line where it is wrong. */
function readConfig() {
  let edited;
  try {
    edited = JSON.parse($('config').value);
  } catch (error) {
    throw new Error(`the training config is not JSON: ${error.message}`);
  }
  if (edited === null || typeof edited !== 'object' || Array.isArray(edited)) {
    throw new Error('a training config must be a JSON object of "KEY": value pairs');
  }
  return checkConfig(edited, state.manifest.training.config);
}

async function show(trainer) {
  const { width, height } = trainer.geometry;
  const canvas = $('view');
  canvas.width = width;
  canvas.height = height;
  // Small photos shown at a whole multiple of their size, up to 384 pixels.
  const zoom = Math.max(1, Math.floor(384 / Math.max(width, height)));
  canvas.style.width = `${width * zoom}px`;
  canvas.getContext('2d').putImageData(new ImageData(await trainer.rgba(), width, height), 0, 0);
}

async function train() {
  let config, target;
  try {
    config = readConfig();
    target = state.mask ? state.photo.withMask(state.mask) : state.photo;
  } catch (error) {
    setState('error', error.message);
    return;
  }
  if (state.trainer) state.trainer.destroy();
  state.trainer = null;
  state.stop = false;
  setState('training');
  $('log').textContent = '';
  const logEvery = Math.max(1, Number($('log-freq').value) || 1);
  const showEvery = Math.max(1, Number($('show-freq').value) || 1);
  try {
    // Every pipeline compiled before the clock starts, as `sad fit` warms its kernels up.
    await state.gpu.warm(TRAINING_KERNELS);
    const trainer = new Trainer(state.gpu, target, {
      config, constants: state.manifest.training.constants, seed: Number($('seed').value) || 0, logEvery, init: state.init,
    });
    state.trainer = trainer;
    const s = trainer.schedule;
    log(`Training | device=WebGPU | image=${target.width}x${target.height} | sites=${s.initialSites} | capacity=${s.capacity} | iters=${s.iters} | mask=${target.mask ? 'yes' : 'none'}`);
    if (trainer.budget) {
      const b = trainer.budget;
      log(`Budget | target-bpp=${((b.targetSites * state.manifest.training.constants.bits_per_site) / (target.width * target.height)).toFixed(3)} | target sites=${b.targetSites} | schedule ends at ${b.finalSites} | prune ${b.pruneRate.toFixed(4)}/event | densify ${b.densifyRate.toFixed(4)}/event`);
    }
    const start = performance.now();
    let psnr = null;
    while (!trainer.isDone() && !state.stop) {
      const measured = await trainer.step();
      if (measured !== null) {
        psnr = measured;
        const seconds = (performance.now() - start) / 1000;
        log(`Iter ${String(trainer.iteration - 1).padStart(4)} | PSNR: ${psnr.toFixed(2)} dB | Active: ${await trainer.activeSites()} | ${(trainer.iteration / Math.max(seconds, 1e-9)).toFixed(1)} it/s | ${seconds.toFixed(2)} s`);
      }
      if (trainer.iteration % showEvery === 0) await show(trainer);
    }
    await show(trainer);
    const sites = await trainer.sitesFile();
    psnr = await trainer.psnr();
    const seconds = (performance.now() - start) / 1000;
    const how = state.stop ? `Stopped after ${trainer.iteration} iterations` : 'Done';
    log(`${how} | PSNR: ${psnr.toFixed(4)} dB | sites: ${sites.count} | ${sites.bpp.toFixed(3)} bpp | ${seconds.toFixed(2)} s`);
    const filePsnr = await trainer.filePsnr();
    const over = target.mask ? ', over the mask\'s pixels' : '';
    log(`Saved sites render at ${filePsnr.toFixed(4)} dB (as sad render renders the file${over})`);
    state.sites = sites;
    document.body.dataset.psnr = String(psnr);
    document.body.dataset.filePsnr = String(filePsnr);
    setState(state.stop ? 'stopped' : 'done');
  } catch (error) {
    setState('error', String(error.message ?? error));
  }
}

function download(blob, name) {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

async function exportSites(packed) {
  const sites = await state.trainer.sitesFile();
  if (packed) download(new Blob([sitesToPacked(sites)], { type: 'application/octet-stream' }), `${state.name}_sites.sadp`);
  else download(new Blob([sitesToText(sites)], { type: 'text/plain' }), `${state.name}_sites.txt`);
}

function setupControls() {
  const picked = (input, load) => input.addEventListener('change', async () => {
    const file = input.files[0];
    if (!file) return;
    try {
      await load(file);
      setState('ready');
    } catch (error) {
      setState('error', `${file.name}: ${error.message ?? error}`);
    }
  });
  picked($('photo'), (file) => loadPhoto(file, file.name));
  picked($('mask'), async (file) => { state.mask = await decodeImage(file, file.name); });
  picked($('init'), async (file) => { state.init = parseSitesBytes(await file.arrayBuffer()); });
  $('train').addEventListener('click', train);
  $('stop').addEventListener('click', () => { state.stop = true; });
  $('export-png').addEventListener('click', () => $('view').toBlob((blob) => download(blob, `${state.name}.png`), 'image/png'));
  $('export-text').addEventListener('click', () => exportSites(false));
  $('export-packed').addEventListener('click', () => exportSites(true));
}

async function main() {
  setupControls();
  try {
    state.gpu = await Gpu.create('kernels.json', TRAINING_KERNELS);
  } catch (error) {
    setState(error instanceof NoWebGpu ? 'no-webgpu' : 'error', String(error.message ?? error));
    return;
  }
  try {
    state.manifest = state.gpu.manifest;
    $('config').value = JSON.stringify(state.manifest.training.config, null, 2);
    const image = query.get('image');
    if (image) await loadPhoto(await (await fetchOwn(image)).blob(), image.split('/').pop());
    const mask = query.get('mask');
    if (mask) state.mask = await decodeImage(await (await fetchOwn(mask)).blob(), mask);
    const init = query.get('init');
    if (init) state.init = parseSitesBytes(await (await fetchOwn(init)).arrayBuffer());
    if (!state.photo) $('status').textContent = 'Pick a photo to fit.';
    setState('ready');
  } catch (error) {
    setState('error', String(error.message ?? error));
  }
}

main();
