// The trainer and bench pages in headless Chromium (WebGPU on SwiftShader): `sad view --train`
// serves a 64×64 photo, the trainer page fits it for a few hundred iterations with the
// library's training kernels compiled to WGSL, and
// - the exported sites file renders in `sad render` at the PSNR the page gives for the saved
//   file (within 0.01 dB; both build fresh candidate lists, where the fit's PSNR is of its own);
// - the page's PSNR is within 0.5 dB of `sad fit` with the same configuration on lavapipe;
// - the page's schedule solves the bpp budget as `sad fit` does (the same Budget line);
// - the exported packed file converts to the text file's sites;
// - a bad config gets its one-line message;
// - a masked fit (`sad view --train --mask`) ends within 0.5 dB of `sad fit --mask`;
// - the bench page logs one `BENCH_RESULT {...}` line, parsed here, and a bench without an
//   image logs `BENCH_ERROR`.
// A screenshot of the trainer mid-fit goes to $TRAINER_SCREENSHOT (the README's).
//
// Usage: node trainer.test.mjs [path/to/sad]

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { PNG } from 'pngjs';
import { launchArgs, serveView } from './sad_view.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const sad = path.resolve(process.argv[2] ?? path.join(root, 'target/debug/sad'));
const photo = path.join(root, 'tests/data/sad/astro64.png');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sad-trainer-'));
/** The fit both run: a few hundred iterations with densify and prune. */
const CONFIG = { DEFAULT_ITERS: 300, DEFAULT_SITES: 400, DEFAULT_TARGET_BPP: 12 };

let failures = 0;
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures++;
}

function run(args) {
  const result = spawnSync(sad, args, { encoding: 'utf8', env: { ...process.env } });
  if (result.status !== 0) throw new Error(`sad ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

const lastPsnr = (out) => Number(/PSNR: ([\d.]+) dB\s*$/.exec(out.trim())?.[1]);

const serve = (extra = []) => serveView(sad, ['--train', photo, ...extra]);

async function waitState(page, states, timeout) {
  await page.waitForFunction((names) => names.includes(document.body.dataset.state), states, { timeout });
  return page.evaluate(() => document.body.dataset.state);
}

async function download(page, button, name) {
  const [file] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
  const to = path.join(scratch, name);
  await file.saveAs(to);
  return to;
}

const [server, address] = await serve();
const origin = new URL(address).origin;
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: launchArgs });
try {
  check(address.includes('/train.html?image='), `sad view --train serves the trainer page (${address})`);
  const page = await browser.newPage({ viewport: { width: 1100, height: 700 }, acceptDownloads: true });
  page.on('pageerror', (error) => console.log(`page error: ${error.message}`));
  await page.goto(address, { waitUntil: 'commit' });
  let state = await waitState(page, ['ready', 'error', 'no-webgpu'], 120_000);
  check(state === 'ready', `the trainer page is ready with the photo (${state}: ${await page.textContent('#message')})`);
  const defaults = JSON.parse(await page.inputValue('#config'));
  check(defaults.DEFAULT_ITERS === 4000 && defaults.LR_POS_BASE === 0.025, 'the config is prefilled with the library\'s defaults');

  // A bad config: one line, no fit.
  await page.fill('#config', '{"DEFAULT_ITERS": 0}');
  await page.click('#train');
  state = await waitState(page, ['error', 'done'], 30_000);
  const message = await page.textContent('#message');
  check(state === 'error' && message === 'DEFAULT_ITERS must be at least 1', `a bad config is refused in one line (${message})`);

  await page.fill('#config', JSON.stringify({ ...defaults, ...CONFIG }, null, 2));
  await page.fill('#log-freq', '100');
  await page.fill('#show-freq', '25');
  await page.click('#train');
  await page.waitForFunction(() => document.getElementById('log').textContent.includes('Iter  100'), null, { timeout: 300_000 });
  if (process.env.TRAINER_SCREENSHOT) await page.screenshot({ path: process.env.TRAINER_SCREENSHOT });
  state = await waitState(page, ['done', 'error'], 600_000);
  check(state === 'done', `the fit runs to the end (${state}: ${await page.textContent('#message')})`);
  const log = await page.textContent('#log');
  console.log(log.trim().split('\n').map((line) => `  page: ${line}`).join('\n'));
  const pagePsnr = Number(await page.evaluate(() => document.body.dataset.psnr));
  const filePsnr = Number(await page.evaluate(() => document.body.dataset.filePsnr));

  const text = await download(page, '#export-text', 'astro64_sites.txt');
  const rendered = lastPsnr(run(['render', text, '-o', path.join(scratch, 'render.png'), '--target', photo]));
  // Both build fresh candidate lists the same way; the fit's own lists may differ a little.
  check(Math.abs(rendered - filePsnr) <= 0.01,
    `sad render of the exported sites: ${rendered} dB, the page's saved-file PSNR ${filePsnr.toFixed(4)} dB (within 0.01; the fit's ${pagePsnr.toFixed(4)} dB)`);
  const packed = await download(page, '#export-packed', 'astro64_sites.sadp');
  const converted = path.join(scratch, 'converted.sadp');
  run(['convert', text, converted]);
  check(Buffer.compare(fs.readFileSync(packed), fs.readFileSync(converted)) === 0,
    'the exported .sadp is what sad convert makes of the exported text');

  const fit = run(['fit', photo, '--iters', String(CONFIG.DEFAULT_ITERS), '--sites', String(CONFIG.DEFAULT_SITES),
    '--target-bpp', String(CONFIG.DEFAULT_TARGET_BPP), '--out-dir', path.join(scratch, 'fit')]);
  const fitPsnr = lastPsnr(fit);
  check(Math.abs(fitPsnr - pagePsnr) <= 0.5,
    `sad fit with the same config on lavapipe: ${fitPsnr} dB, the page's ${pagePsnr.toFixed(4)} dB (within 0.5)`);
  // The page's schedule port (schedule.js) solves the budget as budget.rs does.
  const budget = (out) => /^Budget \|.*$/m.exec(out)?.[0];
  check(budget(log) !== undefined && budget(log) === budget(fit),
    `the page's budget line is sad fit's (${budget(log)} | ${budget(fit)})`);
  const fitSites = Number(/Sites: (\d+)/.exec(fit)?.[1]);
  const pageSites = Number(/sites: (\d+)/.exec(log)?.[1]);
  check(fitSites === pageSites, `both end with the budget's sites (sad fit ${fitSites}, the page ${pageSites})`);

  // The bench page: one parsed line.
  const bench = await browser.newPage();
  const lines = [];
  bench.on('console', (m) => lines.push(m.text()));
  await bench.goto(`${origin}/bench.html?image=target&iters=40&bpp=12&sites=400`, { waitUntil: 'commit' });
  state = await waitState(bench, ['done', 'error', 'no-webgpu'], 300_000);
  const line = lines.find((l) => l.startsWith('BENCH_RESULT '));
  console.log(`  bench: ${line}`);
  const result = line ? JSON.parse(line.slice('BENCH_RESULT '.length)) : {};
  check(state === 'done' && Number.isFinite(result.psnr) && result.psnr > 15 && result.sites > 0
    && result.training_ms > 0 && result.total_ms >= result.training_ms && result.iters === 40,
  `the bench page logs BENCH_RESULT {psnr, sites, training_ms, total_ms} (${state})`);
  const empty = await browser.newPage();
  const errors = [];
  empty.on('console', (m) => errors.push(m.text()));
  await empty.goto(`${origin}/bench.html?iters=ten`, { waitUntil: 'commit' });
  await waitState(empty, ['done', 'error', 'no-webgpu'], 120_000);
  check(errors.includes('BENCH_ERROR no ?image=URL to fit'), `a bench without an image says so (${errors.join(' | ')})`);
  const foreign = await browser.newPage();
  const foreignErrors = [];
  foreign.on('console', (m) => foreignErrors.push(m.text()));
  await foreign.goto(`${origin}/bench.html?image=http://example.invalid/photo.png`, { waitUntil: 'commit' });
  await waitState(foreign, ['done', 'error', 'no-webgpu'], 120_000);
  check(foreignErrors.some((line) => line.startsWith('BENCH_ERROR') && line.includes('its own server only')),
    `a bench of another origin's image is refused (${foreignErrors.join(' | ')})`);

  // A masked fit: the page's mask (target.js) against `sad fit --mask`, 100 iterations.
  const mask = path.join(scratch, 'mask.png');
  const png = new PNG({ width: 64, height: 64 });
  for (let i = 0; i < 64 * 64; i++) {
    const keep = i % 64 < 40 ? 255 : 0;
    png.data.set([keep, keep, keep, 255], 4 * i);
  }
  fs.writeFileSync(mask, PNG.sync.write(png));
  const [maskedServer, maskedAddress] = await serve(['--mask', mask]);
  try {
    check(maskedAddress.endsWith('&mask=mask'), `sad view --train --mask serves the mask (${maskedAddress})`);
    const masked = await browser.newPage();
    await masked.goto(maskedAddress, { waitUntil: 'commit' });
    await waitState(masked, ['ready', 'error', 'no-webgpu'], 120_000);
    const short = { ...CONFIG, DEFAULT_ITERS: 100 };
    await masked.fill('#config', JSON.stringify(short));
    await masked.click('#train');
    state = await waitState(masked, ['done', 'error'], 300_000);
    const maskedLog = await masked.textContent('#log');
    const maskedPsnr = Number(await masked.evaluate(() => document.body.dataset.psnr));
    const maskedFit = lastPsnr(run(['fit', photo, '--iters', '100', '--sites', String(short.DEFAULT_SITES),
      '--target-bpp', String(short.DEFAULT_TARGET_BPP), '--mask', mask, '--out-dir', path.join(scratch, 'masked')]));
    check(state === 'done' && maskedLog.includes('mask=yes') && Math.abs(maskedFit - maskedPsnr) <= 0.5,
      `a masked fit: the page's ${maskedPsnr.toFixed(4)} dB, sad fit --mask ${maskedFit} dB (within 0.5)`);
  } finally {
    maskedServer.kill();
  }
} finally {
  await browser.close();
  server.kill();
}
if (failures) {
  console.log(`${failures} check(s) failed; files in ${scratch}`);
  process.exit(1);
}
fs.rmSync(scratch, { recursive: true, force: true });
console.log('the trainer and bench pages: all checks passed');
