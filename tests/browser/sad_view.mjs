// What the browser tests share: starting `sad view` on a free port and the Chromium flags for
// WebGPU on SwiftShader.

import { spawn } from 'node:child_process';

/** Chromium's flags for headless WebGPU on SwiftShader (Debian's chromium). */
export const launchArgs = ['--no-sandbox', '--enable-unsafe-webgpu', '--enable-features=Vulkan',
  '--use-vulkan=swiftshader', '--use-angle=swiftshader', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'];

/** Starts `sad view ARGS --port 0`; resolves to [process, the page's address it prints]. */
export function serveView(sad, args) {
  const server = spawn(sad, ['view', ...args, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (chunk) => {
      out += chunk;
      const url = out.split('\n').find((line) => line.startsWith('http://'));
      if (url) resolve([server, url.trim()]);
    });
    server.on('exit', (code) => reject(new Error(`sad view exited with ${code}: ${out}`)));
  });
}
