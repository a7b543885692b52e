// The browser viewer in headless Chromium (WebGPU on SwiftShader): `sad view` serves a real fit
// and its photo, the page renders it with the library's kernels compiled to WGSL, and each
// canvas is compared with `sad render` of the same file, view and size: the plain render, a
// zoomed view, two debug views and the dots. Also: the page's PSNR against the target equals
// the CLI's, a packed sites file renders as `sad render` renders it, the exported text and
// packed files are what the CLI reads and writes, the view outside the
// image's extent is dimmed, side by side fits the window at
// 1400 and 700 px, a missing file, a file of another origin and a browser without WebGPU get
// their messages, and a
// screenshot of the page goes to $SCREENSHOT (the README's).
//
// Usage: node viewer.test.mjs [path/to/sad]   (Debian's chromium at /usr/bin/chromium, or
// $CHROMIUM)

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
const sites = path.join(root, 'tests/data/sad/cat160x96_sites.txt');
const photo = path.join(root, 'tests/data/sad/cat160x96.png');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sad-viewer-'));
/** The least PSNR of the page's canvas against `sad render` (the bar). */
const MIN_PSNR = 45;

let failures = 0;
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures++;
}

function decode(bytes) {
  const png = PNG.sync.read(bytes);
  return { width: png.width, height: png.height, data: png.data };
}

/** PSNR in dB over the RGB channels of two decoded PNGs of one size. */
function psnr(a, b) {
  if (a.width !== b.width || a.height !== b.height) return -Infinity;
  let sum = 0;
  for (let i = 0; i < a.data.length; i += 4) {
    for (let c = 0; c < 3; c++) sum += ((a.data[i + c] - b.data[i + c]) / 255) ** 2;
  }
  const mse = sum / (a.width * a.height * 3);
  return mse === 0 ? Infinity : 10 * Math.log10(1 / mse);
}

function run(args) {
  const result = spawnSync(sad, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`sad ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

/** Starts `sad view` of `file` on a free port; resolves to [process, the page's address]. */
const serve = (file = sites) => serveView(sad, [file, '--target', photo]);

async function open(browser, url, init, viewport = { width: 900, height: 560 }) {
  const page = await browser.newPage({ viewport });
  page.on('pageerror', (error) => console.log(`page error: ${error.message}`));
  if (init) await page.addInitScript(init);
  await page.goto(url);
  await page.waitForFunction(
    () => ['rendered', 'error', 'no-webgpu'].includes(document.body.dataset.state),
    null, { timeout: 240_000 });
  return page;
}

async function canvasPng(page) {
  const url = await page.evaluate(() => document.getElementById('view').toDataURL('image/png'));
  return Buffer.from(url.split(',')[1], 'base64');
}

const cases = [
  { name: 'the render at the fit\'s size', query: 'width=160&height=96', cli: [] },
  {
    name: 'a view zoomed 4× on (100, 40) at 320×192',
    query: 'width=320&height=192&zoom=4&centre=100,40',
    cli: ['--width', '320', '--height', '192', '--zoom', '4', '--centre', '100,40'],
  },
  { name: 'the cells view', query: 'width=160&height=96&view=cells', cli: ['--view', 'cells'] },
  {
    name: 'the tau view zoomed 2×',
    query: 'width=200&height=120&view=tau&zoom=2',
    cli: ['--width', '200', '--height', '120', '--view', 'tau', '--zoom', '2'],
  },
  { name: 'the dots view', query: 'width=160&height=96&view=dots', cli: ['--view', 'dots'] },
];

const [server, address] = await serve();
const origin = new URL(address).origin;
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: launchArgs });
try {
  for (const [i, c] of cases.entries()) {
    const want = path.join(scratch, `cli_${i}.png`);
    run(['render', sites, '-o', want, ...c.cli]);
    const page = await open(browser, `${origin}/?sites=sites.txt&${c.query}`);
    const state = await page.evaluate(() => document.body.dataset.state);
    check(state === 'rendered', `${c.name}: the page says rendered (${state}: ${await page.textContent('#message')})`);
    const got = await canvasPng(page);
    fs.writeFileSync(path.join(scratch, `page_${i}.png`), got);
    const db = psnr(decode(got), decode(fs.readFileSync(want)));
    check(db >= MIN_PSNR, `${c.name}: ${db.toFixed(2)} dB against sad render (≥ ${MIN_PSNR})`);
    await page.close();
  }

  // Pan and zoom re-render: a wheel step zooms in about the cursor, a drag pans.
  {
    const page = await open(browser, `${origin}/?sites=sites.txt&width=160&height=96`);
    const before = await canvasPng(page);
    const renders = async () => Number(await page.evaluate(() => document.body.dataset.renders));
    const waitFor = async (count) => page.waitForFunction(
      (n) => Number(document.body.dataset.renders) >= n && document.body.dataset.state === 'rendered',
      count, { timeout: 240_000 });
    const box = await page.locator('#view').boundingBox();
    await page.mouse.move(box.x + 40, box.y + 30);
    let count = await renders();
    await page.mouse.wheel(0, -400);
    await waitFor(count + 1);
    const zoomed = await canvasPng(page);
    const status = await page.textContent('#status');
    check(/zoom 2\.2\d\d/.test(status) && psnr(decode(zoomed), decode(before)) < 30,
      `a wheel step zooms in and re-renders (${status.split('·')[1]?.trim()})`);
    count = await renders();
    await page.mouse.down();
    await page.mouse.move(box.x + 80, box.y + 50, { steps: 4 });
    await page.mouse.up();
    await waitFor(count + 1);
    await page.waitForFunction(() => document.body.dataset.state === 'rendered');
    const panned = await canvasPng(page);
    check(psnr(decode(panned), decode(zoomed)) < 30, 'a drag pans and re-renders');
    await page.close();
  }

  // The target: the page's PSNR is the CLI's (the page compares 8-bit values, the CLI floats).
  const cliLine = run(['render', sites, '-o', path.join(scratch, 'psnr.png'), '--target', photo])
    .split('\n').find((line) => line.startsWith('PSNR:'));
  const cliPsnr = Number(cliLine.split(/\s+/)[1]);
  const page = await open(browser, `${address}&compare=swipe&dots=1`);
  const pagePsnr = Number(await page.evaluate(() => document.body.dataset.psnr));
  check(Math.abs(pagePsnr - cliPsnr) < 0.05, `PSNR against the target: page ${pagePsnr.toFixed(3)} dB, sad render ${cliPsnr.toFixed(3)} dB`);
  check((await page.textContent('#psnr')).includes('PSNR against the target'), 'the page shows the PSNR');
  if (process.env.SCREENSHOT) {
    await page.screenshot({ path: process.env.SCREENSHOT });
    console.log(`screenshot: ${process.env.SCREENSHOT}`);
  }
  await page.close();

  // Outside the image SAD extrapolates: a 320×96 view of the 160×96 fit has 80-pixel margins,
  // which the page dims (0.8 of the page's background over the render) and outlines; the image
  // itself stays `sad render`'s.
  {
    const want = path.join(scratch, 'margins.png');
    run(['render', sites, '-o', want, '--width', '320', '--height', '96', '--zoom', '1']);
    const page = await open(browser, `${origin}/?sites=sites.txt&width=320&height=96`);
    const got = decode(await canvasPng(page));
    const cli = decode(fs.readFileSync(want));
    const background = [29, 31, 33];
    let squares = 0, values = 0, outside = 0;
    for (let y = 0; y < 96; y++) {
      for (let x = 0; x < 320; x++) {
        const i = 4 * (y * 320 + x);
        for (let c = 0; c < 3; c++) {
          if (x >= 80 && x < 240) {
            squares += ((got.data[i + c] - cli.data[i + c]) / 255) ** 2;
            values++;
          } else if (x < 78 || x > 241) {
            const dimmed = 0.2 * cli.data[i + c] + 0.8 * background[c];
            outside = Math.max(outside, Math.abs(got.data[i + c] - dimmed));
          }
        }
      }
    }
    const inside = squares === 0 ? Infinity : 10 * Math.log10(values / squares);
    check(inside >= MIN_PSNR && outside <= 2,
      `outside the image the view is dimmed (worst ${outside.toFixed(1)} of 255 off), inside it is sad render's (${inside.toFixed(1)} dB)`);
    await page.close();
  }

  // Side by side fits the window at any width: both canvases inside it, the same size.
  for (const width of [1400, 700]) {
    const page = await open(browser, `${address}&compare=side`, null, { width, height: 260 });
    const boxes = await page.evaluate(() => ['view', 'target-view']
      .map((id) => document.getElementById(id).getBoundingClientRect())
      .map((r) => [r.left, r.right, r.width, r.height]));
    const [[, renderRight, renderWidth, renderHeight], [targetLeft, targetRight, targetWidth]] = boxes;
    check(targetRight <= width && renderRight <= targetLeft && renderWidth === targetWidth
      && renderWidth > width / 2 - 10 && renderHeight > 0,
      `side by side at ${width} px: render ${renderWidth} px and target ${targetWidth} px wide, right edge at ${targetRight}`);
    await page.close();
  }

  // A packed file (`*_sites.sadp`): the page decodes the 16-byte records as the library does.
  {
    const packed = path.join(root, 'tests/data/sad/cat160x96_sites.sadp');
    const want = path.join(scratch, 'packed.png');
    run(['render', packed, '-o', want]);
    const [packedServer, packedAddress] = await serve(packed);
    try {
      const page = await open(browser, `${new URL(packedAddress).origin}/?sites=sites.txt&width=160&height=96`);
      const state = await page.evaluate(() => document.body.dataset.state);
      const db = psnr(decode(await canvasPng(page)), decode(fs.readFileSync(want)));
      check(state === 'rendered' && db >= MIN_PSNR, `a packed file: ${db.toFixed(2)} dB against sad render of it (${state})`);
      await page.close();
    } finally {
      packedServer.kill();
    }
  }

  // Export: the page writes the text file (the same values: the same render) and the packed
  // file (the same bytes as `sad convert`).
  {
    const page = await open(browser, `${origin}/?sites=sites.txt&width=160&height=96`);
    const saved = {};
    for (const [button, name] of [['#export-text', 'exported_sites.txt'], ['#export-packed', 'exported_sites.sadp']]) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
      saved[name] = path.join(scratch, name);
      await download.saveAs(saved[name]);
    }
    const original = path.join(scratch, 'original.png');
    const again = path.join(scratch, 'exported_text.png');
    run(['render', sites, '-o', original]);
    run(['render', saved['exported_sites.txt'], '-o', again]);
    check(Buffer.compare(fs.readFileSync(original), fs.readFileSync(again)) === 0,
      'the exported sites.txt renders as the file it came from');
    const converted = path.join(scratch, 'converted_sites.sadp');
    run(['convert', sites, converted]);
    check(Buffer.compare(fs.readFileSync(converted), fs.readFileSync(saved['exported_sites.sadp'])) === 0,
      'the exported .sadp is the bytes sad convert writes');
    await page.close();
  }

  const missing = await open(browser, `${origin}/?sites=nothing_sites.txt`);
  check(await missing.evaluate(() => document.body.dataset.state) === 'error'
    && (await missing.textContent('#message')).includes('404'), 'a missing file: an error message');
  await missing.close();

  const foreign = await open(browser, `${origin}/?sites=http://example.invalid/cat_sites.txt`);
  check(await foreign.evaluate(() => document.body.dataset.state) === 'error'
    && (await foreign.textContent('#message')).includes('its own server only'),
  'a file of another origin: refused in the page');
  await foreign.close();

  const noGpu = await open(browser, address, () => { delete Navigator.prototype.gpu; });
  check(await noGpu.evaluate(() => document.body.dataset.state) === 'no-webgpu'
    && (await noGpu.textContent('#message')).includes('no WebGPU'), 'a browser without WebGPU: a clear message');
  await noGpu.close();
} finally {
  await browser.close();
  server.kill();
}
fs.rmSync(scratch, { recursive: true, force: true });
if (failures > 0) {
  console.log(`${failures} check(s) failed`);
  process.exit(1);
}
console.log('all browser checks passed');
