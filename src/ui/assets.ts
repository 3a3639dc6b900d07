import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

/** Static files the pages load, all from this package or node_modules: the UI never reaches the internet. */
export interface Asset {
  type: string;
  body: string;
}

export async function loadAssets(): Promise<Map<string, Asset>> {
  const uplot = path.dirname(createRequire(import.meta.url).resolve('uplot/package.json'));
  return new Map([
    ['uPlot.iife.min.js', { type: 'text/javascript; charset=utf-8', body: await readFile(path.join(uplot, 'dist/uPlot.iife.min.js'), 'utf8') }],
    ['uPlot.min.css', { type: 'text/css; charset=utf-8', body: await readFile(path.join(uplot, 'dist/uPlot.min.css'), 'utf8') }],
    // The browser side (src/ui/browser/ratchet-ui.js, copied beside this module into dist/ by `npm run build`).
    ['ratchet-ui.js', { type: 'text/javascript; charset=utf-8', body: await readFile(new URL('./browser/ratchet-ui.js', import.meta.url), 'utf8') }],
  ]);
}
