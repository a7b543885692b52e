// The bench page: fits `?image=URL` for `iters=N` iterations at `bpp=X` bits per pixel (and
// optionally `sites=S` initial sites, `seed=`), with no interaction, and logs one line,
// `BENCH_RESULT {"psnr", "sites", "training_ms", "total_ms", ...}`, to the console and the page:
// training_ms is the loop (iteration 0 to the last step's completion), total_ms adds decoding,
// device start-up and kernel compilation since the page began.

import { fetchOwn } from './fetch_own.js';
import { Gpu, NoWebGpu } from './gpu.js';
import { TargetImage, decodeImage } from './target.js';
import { TRAINING_KERNELS, Trainer, checkConfig } from './trainer.js';

const query = new URLSearchParams(location.search);

function fail(state, message) {
  document.body.dataset.state = state;
  const box = document.getElementById('message');
  box.hidden = false;
  box.textContent = message;
  console.log(`BENCH_ERROR ${message}`);
}

/** A whole or real number parameter, or `fallback` where absent. */
function number(name, fallback, whole) {
  const text = query.get(name);
  if (text === null) return fallback;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0 || (whole && !Number.isInteger(value))) {
    throw new Error(`${name}=${text} is not a ${whole ? 'whole' : 'non-negative'} number`);
  }
  return value;
}

async function main() {
  const started = performance.now();
  let gpu;
  try {
    gpu = await Gpu.create('kernels.json', TRAINING_KERNELS);
  } catch (error) {
    fail(error instanceof NoWebGpu ? 'no-webgpu' : 'error', String(error.message ?? error));
    return;
  }
  try {
    const image = query.get('image');
    if (!image) throw new Error('no ?image=URL to fit');
    const { config: defaults, constants } = gpu.manifest.training;
    const edits = { DEFAULT_ITERS: number('iters', defaults.DEFAULT_ITERS, true) };
    edits.DEFAULT_TARGET_BPP = number('bpp', defaults.DEFAULT_TARGET_BPP, false);
    const sites = number('sites', null, true);
    if (sites !== null) edits.DEFAULT_SITES = sites;
    const config = checkConfig(edits, defaults);
    const response = await fetchOwn(image);
    const target = TargetImage.fromRgba(await decodeImage(await response.blob(), image));
    const trainer = new Trainer(gpu, target, {
      config, constants, seed: number('seed', 0, true), logEvery: config.DEFAULT_ITERS,
    });
    // Compile every pipeline before the clock starts, as `sad fit` warms its kernels up.
    await gpu.warm(TRAINING_KERNELS);
    const start = performance.now();
    while (!trainer.isDone()) await trainer.step();
    // The last step measured the PSNR, which waited for the GPU.
    const trainingMs = performance.now() - start;
    const psnr = await trainer.psnr();
    const live = await trainer.activeSites();
    const result = {
      psnr: Number(psnr.toFixed(4)),
      sites: live,
      training_ms: Math.round(trainingMs),
      total_ms: Math.round(performance.now() - started),
      iters: config.DEFAULT_ITERS,
      bpp: Number(((live * constants.bits_per_site) / (target.width * target.height)).toFixed(4)),
      image: `${target.width}x${target.height}`,
    };
    trainer.destroy();
    const line = `BENCH_RESULT ${JSON.stringify(result)}`;
    document.getElementById('log').textContent = line;
    console.log(line);
    document.body.dataset.state = 'done';
  } catch (error) {
    fail('error', String(error.message ?? error));
  }
}

main();
